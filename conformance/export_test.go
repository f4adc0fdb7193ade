package conformance

import "github.com/idemcheck/idemcheck/sut/backend"

// Test-only exports: plumbing this package's external tests reach, kept
// out of the public API (idemcheck.go is the entry).
var (
	StopWireMock      = backend.StopWireMock
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
