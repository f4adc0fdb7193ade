package conformance_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/conformance"
)

// A baseline entry is a category exactly as a report shows it, or an
// invariant name for all of its categories; comments and blank lines are
// not entries.
func TestBaselineKnows(t *testing.T) {
	b := conformance.ParseBaseline([]byte("# ours\n\n  mismatch-rejected  \nreplay-consistent: …: a retry sent after the key was answered … got 409, as if it were still in flight\n"))
	assert.Len(t, b, 2)
	for _, c := range []struct {
		v    conformance.ViolationError
		want bool
	}{
		{conformance.ViolationError{Invariant: "mismatch-rejected", Category: "mismatch-rejected: …: anything"}, true},
		{conformance.ViolationError{Invariant: "replay-consistent", Category: "replay-consistent: …: a retry sent after the key was answered … got 409, as if it were still in flight"}, true},
		{conformance.ViolationError{Invariant: "replay-consistent", Category: "replay-consistent: …: one key and body were answered …, then …: a completed key answers its first response"}, false},
		{conformance.ViolationError{Invariant: "books-balance", Category: "# ours"}, false},
	} {
		assert.Equal(t, c.want, b.Knows(&c.v), c.v.Category)
	}
}
