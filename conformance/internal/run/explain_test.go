package run

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

func TestExplain(t *testing.T) {
	ref := func(order int64, b byte) string { return models.AttemptReference(order, [16]byte{b}) }
	charges := []models.Charge{
		{ID: "ch_1", Status: "succeeded", MerchantReference: ref(3, 1)},
		{ID: "ch_2", Status: "succeeded", MerchantReference: ref(3, 1)},
		{ID: "ch_3", Status: "succeeded", MerchantReference: ref(1, 2)},
	}

	t.Run("two charges for one order, in plain words", func(t *testing.T) {
		f := reports.Failure{Invariant: check.AtMostOneChargePerOrder, Message: check.AtMostOneChargePerOrder + ": the provider holds 2 charges for order 3 (ch_1, ch_2)", Charges: charges}
		assert.Equal(t, "The provider holds two successful charges for order 3: the shopper paid more than once.", explain(f))
	})

	t.Run("a protocol rule names its consequence on the books", func(t *testing.T) {
		f := reports.Failure{Invariant: check.ReplayConsistent, Message: check.ReplayConsistent + ": order 3 intent 1: a retry of a completed key was answered 201 ch_2, not the first response (201 ch_1)", Charges: charges}
		assert.Equal(t, "The provider did not answer a retry with its first response (order 3 intent 1: a retry of a completed key was answered 201 ch_2, not the first response (201 ch_1)), "+
			"so a shopper whose response was lost can be charged again or told another outcome; the provider now holds two successful charges for order 3.", explain(f))
	})

	t.Run("every invariant has its words", func(t *testing.T) {
		for _, inv := range append(check.Safety(), check.Liveness()...) {
			f := reports.Failure{Invariant: inv.Name, Message: inv.Name + ": order 1 intent 1 did it"}
			got := explain(f)
			assert.Contains(t, got, "(order 1 intent 1 did it)", inv.Name)
			assert.NotContains(t, got, "was broken", inv.Name)
		}
	})
}
