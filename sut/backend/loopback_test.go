package backend

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A CheckService run's duration budget (ServiceOptions.MaxDuration): the
// search stops with ShrinkShare of it left, a shrink at its end; a world
// built without a deadline has no budget.
func TestServiceDurationBudget(t *testing.T) {
	const budget = 10 * time.Second
	for name, tc := range map[string]struct {
		left           time.Duration // of the budget, from now
		search, shrink bool          // stopped
	}{
		"all of it left":      {left: budget},
		"more than 30 % left": {left: 4 * time.Second},
		"less than 30 % left": {left: 2 * time.Second, search: true},
		"spent":               {left: -time.Millisecond, search: true, shrink: true},
	} {
		t.Run(name, func(t *testing.T) {
			l := Loopback{budget: budget, deadline: time.Now().Add(tc.left)}
			out, which := l.SearchExhausted()
			assert.Equal(t, tc.search, out, which)
			out, why := l.Exhausted()
			assert.Equal(t, tc.shrink, out)
			if tc.shrink {
				assert.Equal(t, "the duration budget (ServiceOptions.MaxDuration 10s) is spent", why)
			}
		})
	}
	out, _ := Loopback{}.Exhausted()
	assert.False(t, out, "no deadline, no budget")
	out, _ = Loopback{}.SearchExhausted()
	assert.False(t, out, "no deadline, no budget")
}
