package conformance

import (
	"github.com/idemcheck/idemcheck/conformance/internal/run"
	"github.com/idemcheck/idemcheck/sut/backend"
)

// Test-only exports: plumbing this package's external tests reach, kept
// out of the public API (idemcheck.go is the entry).
var (
	StopWireMock      = backend.StopWireMock
	ChildReplay       = run.ChildReplay
	ProviderTag       = run.ProviderTag
	CheckReproducible = run.CheckReproducible
)

// DefaultReplays is run.DefaultReplays, for the tests.
const DefaultReplays = run.DefaultReplays
