package provider

// PlantedShapes are the deliberate bugs of request shapes and accounts
// (issue 10, items 1–2), embedded in Planted. The zero value is the
// reference provider; like Planted, they apply to the in-memory store.
type PlantedShapes struct {
	// PathSensitiveKey: the key store is keyed by the raw request URI
	// (path with its trailing slash, and the query) beside the key, so the
	// same request under one key sent to /v1/charges/ or with an unrelated
	// query parameter is processed again and charges twice.
	PathSensitiveKey bool
	// OrderSensitiveFingerprint: the fingerprint is over the raw body
	// bytes, so the same fields in another order (or with other
	// whitespace) under one key are refused with 422 as another body.
	OrderSensitiveFingerprint bool
	// GlobalKeyScope: the key store ignores the account (Authorization),
	// so one account sending a key another account used gets that
	// account's stored response (or 409/422) instead of its own charge.
	GlobalKeyScope bool
	// NormalisedKey: the key store folds the key to lower case and keeps
	// its first 32 characters (a case-insensitive column 32 wide), so two
	// intents' keys that differ only in case, or only past the 32nd
	// character (a busy UUIDv7 client's keys of one millisecond), are one
	// key: the second intent gets 422 or the first one's stored answer
	// (issue 28).
	NormalisedKey bool
}
