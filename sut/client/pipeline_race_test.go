package client_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/sut/client"
)

// Regression (flaky under -race, TestCertifyWithinATightBudget's child):
// failsafe-go (v0.9.8) reads Execution.LastResult without the lock under
// which a Timeout's Cancel writes it, so a retry delay that read it raced
// with the total timeout firing as a try ended: "WARNING: DATA RACE ...
// (*execution).Cancel() ... Previous read ... LastResult() ...
// (*pipeline).delay()". Here a 503 lands at the very instant the total
// timeout fires, 20 times; the race detector (make test) must stay quiet.
func TestPipeline_RetryDelayDoesNotRaceTheTotalTimeout(t *testing.T) {
	for range 20 {
		synctest.Test(t, func(t *testing.T) {
			late := func(r *http.Request) (*http.Response, error) {
				time.Sleep(10 * time.Second) // to the instant of the total timeout, whatever the try's context says
				return status(http.StatusServiceUnavailable)(r)
			}
			c, _, _ := newClient(newWire(late), func(cfg *client.Config) {
				cfg.AttemptTimeout, cfg.TotalTimeout = 20*time.Second, 10*time.Second
			})
			o := c.OpenOrder(54890, "TRY")
			res := c.Checkout(t.Context(), o.ID, "tok_visa")
			assert.NotEqual(t, client.OutcomePaid, res.Outcome)
		})
	}
}
