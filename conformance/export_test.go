package conformance

// Test-only exports: plumbing this package's external tests reach, kept
// out of the public API (idemcheck.go is the entry).
var (
	StopWireMock      = stopWireMock
	FromRoot          = fromRoot
	ChildReplay       = childReplay
	ProviderTag       = providerTag
	CheckReproducible = checkReproducible
)

// DefaultReplays is defaultReplays, for the tests.
const DefaultReplays = defaultReplays

// Replay is replayFunc, for the tests.
type Replay = replayFunc

// Evaluate is evaluate, for the tests.
var Evaluate = evaluate
