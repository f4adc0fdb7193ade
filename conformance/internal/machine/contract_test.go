package machine

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/checkout"
)

// breaking is a client under test whose checkout does what checkout says.
type breaking struct {
	checkout func(ctx context.Context) checkout.Result
}

func (b breaking) Checkout(ctx context.Context, _ checkout.Order, _ string) checkout.Result {
	return b.checkout(ctx)
}

func (breaking) Reconcile(context.Context) (string, error) { return "", nil }

// A client under test that panics, hangs or answers outside the four
// outcomes gets a client-api verdict with a fixed message, within
// TotalTimeout + callBound of virtual time for the hang.
func TestClientUnderTestBreaksContract(t *testing.T) {
	for name, tc := range map[string]struct {
		checkout func(ctx context.Context, release <-chan struct{}) checkout.Result
		want     string
	}{
		"panics": {func(context.Context, <-chan struct{}) checkout.Result { panic("boom") },
			"client-api: a checkout panicked"},
		"hangs": {func(_ context.Context, release <-chan struct{}) checkout.Result {
			<-release
			return checkout.Result{Outcome: checkout.Paid}
		},
			"client-api: a checkout did not return within 1m10s"},
		"answers garbage": {func(context.Context, <-chan struct{}) checkout.Result { return checkout.Result{Outcome: "OK!"} },
			`client-api: a checkout answered "OK!", not one of Paid, PaymentPending, Declined, Failed`},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				defer close(release) // the hung call ends with the test, not before
				cfg, err := Config{}.WithDefaults()
				require.NoError(t, err)
				cfg.Under = &UnderTest{New: func(checkout.Env) (checkout.Client, error) {
					return breaking{func(ctx context.Context) checkout.Result { return tc.checkout(ctx, release) }}, nil
				}}
				w, err := NewWorld(cfg, nil)
				require.NoError(t, err)
				require.Nil(t, w.contractViolation())
				res := w.checkout(w.cli, "shopper", w.openOrder("shopper", 1000, "EUR"), "visa")
				assert.Equal(t, checkout.Failed, res.Outcome, "the history reads a broken call as Failed")
				v := w.contractViolation()
				require.NotNil(t, v)
				assert.Equal(t, ClientAPI, v.Invariant)
				assert.Equal(t, tc.want, v.Message)
			})
		})
	}
}
