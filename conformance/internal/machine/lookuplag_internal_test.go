package machine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/sut/client"
)

// The contract of faults.KindLookupLag: the reference client's abandon
// horizon exceeds the longest lookup lag drawn plus the longest
// processing time drawn, so an empty lookup at its horizon means no
// charge. A longer lag drawn, or a shorter horizon, fails here before it
// raises false alarms in the property.
func TestLookupLagStaysBelowTheReferenceAbandonHorizon(t *testing.T) {
	assert.Less(t, faults.MaxLookupLag+faults.SlowPastTotalDelay, client.DefaultAbandonAfter)
}

// A sequence draws a lookup lag in virtual time only; for a client under
// test only when its own abandon horizon is beyond the longest lag plus
// the longest processing time. The reference client (mutated or not)
// always may.
func TestLagsLookupsOnlyWhereTheClientsHorizonAllowsIt(t *testing.T) {
	for _, c := range []struct {
		name string
		w    *World
		want bool
	}{
		{"reference", &World{ccfg: client.Config{AbandonAfter: 2 * time.Minute}}, true},
		{"real time", &World{real: true}, false},
		{"client under test, 30 min", &World{cfg: Config{Under: &UnderTest{}}, ccfg: client.Config{AbandonAfter: 30 * time.Minute}}, true},
		{"client under test, 20 min", &World{cfg: Config{Under: &UnderTest{}}, ccfg: client.Config{AbandonAfter: 20 * time.Minute}}, false},
	} {
		assert.Equal(t, c.want, c.w.lagsLookups(), c.name)
	}
}
