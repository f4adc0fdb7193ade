package reports_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

// entity matches a Mermaid entity code such as #59; or #quot;.
var entity = regexp.MustCompile(`#(\d+|[a-zA-Z]+);`)

func TestMermaid(t *testing.T) {
	h := fixture().History
	got := reports.Mermaid(h)

	t.Run("is a sequence diagram in history order", func(t *testing.T) {
		assert.True(t, strings.HasPrefix(got, "sequenceDiagram\n"))
		assert.Equal(t, got, reports.Mermaid(h), "deterministic")
		assertInOrder(t, got,
			"    participant Shopper\n", "    participant Client\n", "    participant Provider\n",
			"    Note over Shopper,Provider: step 1: open-order total=54890 TRY\n",
			"    Shopper->>Client: open-order order 1 54890 TRY\n",
			"    Client-->>Shopper: Placed\n",
			"    Note over Shopper,Provider: step 2: checkout order 1 with visa\n",
			"    Shopper->>Client: checkout order 1 (visa)\n",
			"    Client-)Provider: POST /v1/charges key #quot;0192f0e4…7a8b#quot;\n",
			"    Note over Client,Provider: 503 injected, not forwarded\n",
			"    Client->>Provider: POST /v1/charges key #quot;0192f0e4…7a8b#quot;\n",
			"    Provider-->>Client: 409\n",
			"    Client->>Provider: POST /v1/charges key #quot;0192f0e4…7a8b#quot;\n",
			"    Provider-->>Client: 201 ch_000001 (replayed)\n",
			"    Client-->>Shopper: Paid 201 ch_000001\n",
		)
	})

	t.Run("escapes what Mermaid chokes on", func(t *testing.T) {
		h := fixture().History
		h.Steps[1].Args = `order 1; card "visa" #1 <b>`
		h.Ops[1].Actor = "click #1; of 2"
		h.Exchanges[2].Status, h.Exchanges[2].Err = 0, "read tcp: connection reset; by peer"
		got := reports.Mermaid(h)
		bare := entity.ReplaceAllString(got, "")
		assert.NotContains(t, bare, ";")
		assert.NotContains(t, bare, "#")
		assert.NotContains(t, bare, `"`)
		assert.NotContains(t, bare, "<")
		assert.Contains(t, got, "step 2: checkout order 1#59; card #quot;visa#quot; #35;1 #lt;b#gt;")
		assert.Contains(t, got, "Provider--xClient: 201 ch_000001 (response lost: read tcp: connection reset#59; by peer)\n")
	})

	t.Run("an answer after the client gave up lands in the step it came in", func(t *testing.T) {
		h := fixture().History
		slow := &h.Exchanges[2]
		slow.Fault = "slow-processing 12s"
		slow.Status, slow.Replayed, slow.ChargeID, slow.Err = 0, false, "", "timeout"
		slow.DoneAt = slow.SentAt.Add(5 * time.Second)
		slow.ProviderSeq, slow.ProviderDoneAt = 40, slow.SentAt.Add(12*time.Second)
		h.Ops[1].Result, h.Ops[1].HTTPStatus, h.Ops[1].ChargeID = "PaymentPending", 0, ""
		h.Steps = append(h.Steps, models.Step{N: 3, Action: "advance-time", Args: "30s", At: slow.DoneAt})
		h.Ops = append(h.Ops, models.Operation{ID: 3, Step: 3, Actor: "clock", Kind: models.OpAdvance,
			Detail: "30s", InvokedAt: slow.DoneAt, Returned: true, ReturnedAt: slow.DoneAt.Add(30 * time.Second)})
		got := reports.Mermaid(h)
		assertInOrder(t, got,
			"Client->>Provider: POST /v1/charges key #quot;0192f0e4…7a8b#quot; (slow-processing 12s)\n",
			"Note over Client,Provider: client gave up (timeout)\n",
			"Client-->>Shopper: PaymentPending\n",
			"Note over Shopper,Provider: step 3: advance-time 30s\n",
			"Note over Shopper,Provider: clock: +30s\n",
			"Provider--xClient: 201 ch_000001 (to the request of step 2) (response lost)\n",
		)
	})

	t.Run("concurrent operations interleave by sequence", func(t *testing.T) {
		h := fixture().History
		click2 := h.Ops[1]
		click2.ID, click2.Actor, click2.Result, click2.HTTPStatus, click2.ChargeID = 3, "click 2", "PaymentPending", 409, ""
		h.Ops[1].Actor = "click 1"
		h.Ops = append(h.Ops, click2)
		h.Exchanges[1].OpID = 3 // the 409 answered the second click
		got := reports.Mermaid(h)
		assertInOrder(t, got,
			"Shopper->>Client: click 1: checkout order 1 (visa)\n",
			"Client-)Provider:",
			"Shopper->>Client: click 2: checkout order 1 (visa)\n",
			"Provider-->>Client: 409\n",
			"Client-->>Shopper: click 2: PaymentPending 409\n",
			"Provider-->>Client: 201 ch_000001 (replayed)\n",
			"Client-->>Shopper: click 1: Paid 201 ch_000001\n",
		)
	})
}

// The diagram tells a payment engineer's story (issue 11): the callback
// and the reconciler are participants of their own, not arrows from the
// shopper; the clock and a long gap are notes ("+31 min"); step notes span
// every participant; and it ends on the violation, shaded, naming the
// invariant and the sentence.
func TestMermaidStory(t *testing.T) {
	h := fixture().History
	at := h.Ops[1].InvokedAt
	h.Steps = append(h.Steps, models.Step{N: 3, Action: "time-passes", Args: "31m", At: at.Add(time.Minute)},
		models.Step{N: 4, Action: "run-reconciliation", At: at.Add(32 * time.Minute)})
	h.Ops = append(h.Ops,
		models.Operation{ID: 3, Step: 2, Actor: "callback", Kind: models.OpCheckout, OrderID: 1, Card: "visa", InvokedAt: at, Returned: true, Result: "Paid", HTTPStatus: 200},
		models.Operation{ID: 4, Step: 3, Actor: "clock", Kind: models.OpAdvance, Detail: "31m0s", InvokedAt: at.Add(time.Minute), Returned: true},
		models.Operation{ID: 5, Step: 4, Actor: "reconciler", Kind: models.OpReconcile, InvokedAt: at.Add(32 * time.Minute), Returned: true})
	got := reports.MermaidViolation(h, "at-most-one-charge-per-order", "the provider holds two charges for order 1")
	assertInOrder(t, got,
		"    participant Shopper\n", "    participant Callback\n", "    participant Reconciler\n", "    participant Client\n", "    participant Provider\n",
		"    Note over Shopper,Provider: step 2: checkout order 1 with visa\n",
		"    Callback->>Client: checkout order 1 (visa)\n",
		"    Client-->>Callback: Paid 200\n",
		"    Note over Shopper,Provider: clock: +31 min\n",
		"    Reconciler->>Client: reconcile\n",
		"    rect rgb(255, 224, 224)\n    Note over Shopper,Provider: violated: at-most-one-charge-per-order: the provider holds two charges for order 1\n    end\n",
	)
	assert.NotContains(t, got, "Shopper->>Client: callback:")
	look := models.Exchange{ID: 9, Seq: 90, OpID: 5, Method: "GET", Path: "/v1/charges", Query: "merchant_reference=r1", Forwarded: true,
		ProviderDone: true, ProviderSeq: 91, ProviderStatus: 200, ProviderChargeID: "ch_000001", Done: true, Status: 200}
	h.Exchanges = append(h.Exchanges, look)
	assert.Contains(t, reports.Mermaid(h), "Provider-->>Client: 200: 1 charge ch_000001\n", "a lookup's arrow says what it found")
	look.ProviderChargeID = ""
	h.Exchanges[len(h.Exchanges)-1] = look
	assert.Contains(t, reports.Mermaid(h), "Provider-->>Client: 200: no charge\n")
	assert.NotContains(t, got, "clock: advance-time")
	assert.True(t, strings.HasSuffix(got, "    end\n"), "it ends on the violation")
}

// assertInOrder checks that s contains each part, in the given order.
func assertInOrder(t *testing.T, s string, parts ...string) {
	t.Helper()
	rest := s
	for _, p := range parts {
		i := strings.Index(rest, p)
		if !assert.GreaterOrEqual(t, i, 0, "missing, or out of order: %q\nin:\n%s", p, s) {
			return
		}
		rest = rest[i+len(p):]
	}
}
