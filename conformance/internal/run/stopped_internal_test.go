package run

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// More budget is the advice only when a budget is what ran out: a run
// that was interrupted, or met a provider answering outside its dialect
// or unavailable, is told nothing about IDEMCHECK_MAX_* (it used to be
// told to raise them whatever the cause).
func TestStoppedAdviceOnlyForABudget(t *testing.T) {
	for why, advised := range map[string]bool{
		"the requests budget is spent (its last 30% is kept for shrinking)": true,
		"the duration budget (IDEMCHECK_MAX_DURATION 40s) is spent":         true,
		"a budget is spent":                true,
		"the run was interrupted (SIGINT)": false,
		"the provider's answers are not charges of the \"reference\" dialect: every create it answered got a body the dialect does not speak (201 ×3): not judged": false,
		"the provider answered 503 (unavailable) to the harness's lookup":                                                                                          false,
	} {
		got := stoppedAdvice(why, "; ", "for more")
		if advised {
			assert.Equal(t, "; raise IDEMCHECK_MAX_REQUESTS, IDEMCHECK_MAX_CHARGES or IDEMCHECK_MAX_DURATION for more", got, why)
		} else {
			assert.Empty(t, got, why)
		}
	}
}
