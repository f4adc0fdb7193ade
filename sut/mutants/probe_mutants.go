package mutants

import "github.com/idemcheck/idemcheck/sut/provider"

// The provider mutants of the probe classes real providers get wrong
// (issue 25, part A): keys blocked by an answer never stored, error answers
// of any status, key edge cases, keys optional. Each needs a request the
// reference client never sends, so no shopper sequence meets it: each
// names the certification requirement that fails against it (Requirement)
// and is not a row of the kill matrix.
func init() {
	register(Mutant{
		Name:        "key-stuck-after-error",
		Description: "the key is taken before routing and body parsing; a 404 for an unknown path or a 400 for a body that does not parse leaves it in flight for good: the same key then answers 409",
		Requirement: "key-not-blocked-by-unstored-answer",
		Class:       "idempotency middleware around the router that releases the key only when a response is stored (issue 25: seven third-party layers)",
		Provider:    func(cfg *provider.Config) { cfg.Planted.KeyStuckAfterError = true },
	})
	register(Mutant{
		Name:        "framework-errors-plain",
		Description: "the router's own 404 and 405 are plain-text pages (text/plain), not problem details",
		Requirement: "errors-are-problem-details",
		Class:       "error answers written by the framework outside the idempotency layer (draft §2.7; RFC 9457)",
		Provider:    func(cfg *provider.Config) { cfg.Planted.FrameworkErrorsPlain = true },
	})
	register(Mutant{
		Name:        "empty-key-shared",
		Description: "an empty Idempotency-Key header is a key shared by every client: a second customer's other payment under it gets 422",
		Requirement: "empty-key-refused",
		Class:       "header read as a string without parsing it as a Structured Field (RFC 9651 §4.2)",
		Provider:    func(cfg *provider.Config) { cfg.Planted.EmptyKeyShared = true },
	})
	register(Mutant{
		Name:        "malformed-key-accepted",
		Description: "a key that is no Structured Field String (\"unterminated, characters outside printable ASCII) is taken raw and charges",
		Requirement: "malformed-key-refused",
		Class:       "lenient key parsing (draft §2.1: the key is a String; RFC 9651 §3.3.3)",
		Provider:    func(cfg *provider.Config) { cfg.Planted.MalformedKeyAccepted = true },
	})
	register(Mutant{
		Name:        "truncated-key",
		Description: "a key longer than the 255-character maximum is cut to 255 instead of refused: two keys differing after the cut are one key",
		Requirement: "long-key-refused",
		Class:       "a key column that truncates silently (MySQL VARCHAR(255) outside strict mode)",
		Provider:    func(cfg *provider.Config) { cfg.Planted.TruncatedKey = true },
	})
	register(Mutant{
		Name:        "key-optional",
		Description: "a create without an Idempotency-Key is processed, and a keyless retry charges again, while the profile says keys are required",
		Requirement: "missing-key-refused",
		Class:       "keys optional (many real APIs; docs/profiles.md key_required)",
		Provider:    func(cfg *provider.Config) { cfg.KeyOptional = true },
	})
}
