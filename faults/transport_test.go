package faults_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
)

var (
	f503 = faults.Fault{Kind: faults.KindStatus503}
	f500 = faults.Fault{Kind: faults.KindStatus500}
	pass = faults.Fault{Kind: faults.KindPass}
	rst  = faults.Fault{Kind: faults.KindReset}
)

func faultsOf(exs []models.Exchange) []string {
	out := make([]string, len(exs))
	for i, e := range exs {
		out[i] = e.Fault
	}
	return out
}

func TestTransport_NthRequestGetsNthFaultGETsIncluded(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(0, f503, f500, pass, rst)
		ctx := t.Context()

		assert.Equal(t, http.StatusServiceUnavailable, r.get(ctx, "bookstore-1001-a").status)
		assert.Equal(t, http.StatusInternalServerError, r.post(ctx, `"k-1"`, visa).status)
		assert.Equal(t, http.StatusCreated, r.post(ctx, `"k-1"`, visa).status)
		requireInjected(t, r.get(ctx, "bookstore-1001-a").err, faults.KindReset)
		// Past the end of the schedule: pass.
		got := r.get(ctx, "bookstore-1001-a")
		require.NoError(t, got.err)
		assert.Equal(t, http.StatusOK, got.status)
		assert.Equal(t, http.StatusCreated, r.post(ctx, `"k-2"`, visa).status)

		exs := exchanges(t, r.hist, 6)
		assert.Equal(t, []string{"503", "500", "pass", "reset", "pass", "pass"}, faultsOf(exs))
		assert.Equal(t, []string{"GET", "POST", "POST", "GET", "GET", "POST"},
			[]string{exs[0].Method, exs[1].Method, exs[2].Method, exs[3].Method, exs[4].Method, exs[5].Method})
		assert.Equal(t, map[faults.Kind]int{faults.KindStatus503: 1, faults.KindStatus500: 1, faults.KindReset: 1},
			r.tr.Injected())
		assert.Len(t, r.prov.Charges(), 2)
	})
}

func TestTransport_EmptySchedulePassesEverything(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(0)
		for i := range 3 {
			got := r.post(t.Context(), models.FormatKey("k-"+string(rune('a'+i))), visa)
			require.NoError(t, got.err)
			assert.Equal(t, http.StatusCreated, got.status)
		}
		assert.Equal(t, []string{"pass", "pass", "pass"}, faultsOf(exchanges(t, r.hist, 3)))
		assert.Empty(t, r.tr.Injected())
	})
}

func TestTransport_HealMakesEveryLaterRequestPass(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(0, f503, f503, rst, f500)
		ctx := t.Context()
		assert.Equal(t, http.StatusServiceUnavailable, r.post(ctx, `"k-1"`, visa).status)

		r.tr.Heal()
		assert.Equal(t, http.StatusCreated, r.post(ctx, `"k-1"`, visa).status)
		assert.NoError(t, r.get(ctx, "bookstore-1001-a").err)
		assert.Equal(t, http.StatusCreated, r.post(ctx, `"k-2"`, visa).status)

		assert.Equal(t, []string{"503", "pass", "pass", "pass"}, faultsOf(exchanges(t, r.hist, 4)))
		assert.Equal(t, map[faults.Kind]int{faults.KindStatus503: 1}, r.tr.Injected(),
			"healed entries are never applied, so never counted")
	})
}

func TestTransport_InjectedCountsNonPassKindsAndIsACopy(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(0, f503, pass, f503, faults.Fault{Kind: faults.KindStatus429, RetryAfter: 1}, pass, rst)
		for range 7 {
			r.get(t.Context(), "bookstore-1001-a")
		}
		want := map[faults.Kind]int{faults.KindStatus503: 2, faults.KindStatus429: 1, faults.KindReset: 1}
		got := r.tr.Injected()
		assert.Equal(t, want, got)
		got[faults.KindStatus503] = 99
		delete(got, faults.KindReset)
		assert.Equal(t, want, r.tr.Injected())
	})
}

func TestTransport_ScheduleIsCopiedAtConstruction(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		schedule := []faults.Fault{f503}
		r := newRig(0)
		r.tr = faults.NewTransport(r.wire, r.hist, schedule)
		r.client.Transport = r.tr
		schedule[0] = pass
		assert.Equal(t, http.StatusServiceUnavailable, r.post(t.Context(), `"k-1"`, visa).status)
	})
}

func TestTransport_RecordsRequestFieldsWithoutTheCardToken(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(0)
		ctx := models.WithOp(t.Context(), 7)
		key := `order-1001 "a\b"`
		header := models.FormatKey(key)
		start := time.Now()
		got := r.post(ctx, header, visa)
		require.Equal(t, http.StatusCreated, got.status)

		e := exchanges(t, r.hist, 1)[0]
		assert.Equal(t, 7, e.OpID)
		assert.Equal(t, "POST", e.Method)
		assert.True(t, e.IsPost())
		assert.Equal(t, "/v1/charges", e.Path)
		assert.Empty(t, e.Query)
		assert.True(t, e.HasKey)
		assert.Equal(t, header, e.KeyHeader, "the header exactly as sent")
		assert.Equal(t, key, e.Key, "parsed from the quoted form")
		assert.Equal(t, models.Fingerprint(visa), e.Fingerprint)
		assert.Equal(t, visa.MerchantReference, e.MerchantReference)
		assert.Equal(t, visa.Amount, e.Amount)
		assert.Equal(t, visa.Currency, e.Currency)
		assert.Equal(t, models.CardHash("tok_visa"), e.CardHash)
		assert.Equal(t, start, e.SentAt)

		raw, err := json.Marshal(r.hist.Snapshot())
		require.NoError(t, err)
		assert.NotContains(t, string(raw), "tok_visa", "the history never holds the card token")
	})
}

func TestTransport_BareKeyParsesToTheSameKey(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(0)
		require.Equal(t, http.StatusCreated, r.post(t.Context(), `"k-1"`, visa).status)
		got := r.post(t.Context(), `k-1`, visa)
		require.Equal(t, http.StatusCreated, got.status)
		assert.Equal(t, "true", got.header.Get(models.ReplayedHeader))

		exs := exchanges(t, r.hist, 2)
		assert.Equal(t, "k-1", exs[0].Key)
		assert.Equal(t, "k-1", exs[1].Key)
		assert.Equal(t, "k-1", exs[1].KeyHeader)
		assert.True(t, exs[1].Replayed)
		assert.Equal(t, exs[0].ChargeID, exs[1].ChargeID)
		assert.Len(t, r.prov.Charges(), 1)
	})
}

func TestTransport_RecordsGETAndKeylessPOST(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(0)
		got := r.get(t.Context(), "bookstore-1001-a")
		require.Equal(t, http.StatusOK, got.status)
		assert.JSONEq(t, `{"data":[]}`, string(got.body))
		got = r.post(t.Context(), "", visa)
		require.Equal(t, http.StatusBadRequest, got.status)

		exs := exchanges(t, r.hist, 2)
		g := exs[0]
		assert.Equal(t, "GET", g.Method)
		assert.False(t, g.IsPost())
		assert.Equal(t, "merchant_reference=bookstore-1001-a", g.Query)
		assert.False(t, g.HasKey)
		assert.Empty(t, g.Fingerprint)
		assert.Empty(t, g.CardHash)
		assert.Equal(t, http.StatusOK, g.ProviderStatus)
		assert.Empty(t, g.ChargeID, "a list is not a charge")

		p := exs[1]
		assert.False(t, p.HasKey)
		assert.Empty(t, p.KeyHeader)
		assert.Empty(t, p.Key)
		assert.Equal(t, models.Fingerprint(visa), p.Fingerprint)
		assert.Equal(t, http.StatusBadRequest, p.ProviderStatus)
		assert.Equal(t, http.StatusBadRequest, p.Status)
		assert.Empty(t, r.prov.Charges())
	})
}

func TestTransport_BodyReachesProviderIntact(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(0, faults.Fault{Kind: faults.KindDelay, Delay: time.Second})
		got := r.post(t.Context(), `"k-1"`, visa)
		require.Equal(t, http.StatusCreated, got.status, "body %s", got.body)
		ch := decodeCharge(t, got.body)
		assert.Equal(t, visa.Amount, ch.Amount)
		assert.Equal(t, visa.MerchantReference, ch.MerchantReference)
	})
}

// Concurrent requests each take one schedule entry: every entry is applied
// exactly once, whatever order the goroutines run in.
func TestTransport_ConcurrentRequestsShareOneSchedule(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		schedule := []faults.Fault{f503, f500, rst, pass, f503, pass, rst, f500}
		r := newRig(0, schedule...)
		var wg sync.WaitGroup
		for i := range 12 {
			wg.Go(func() {
				r.post(t.Context(), models.FormatKey("k-"+strings.Repeat("x", i+1)), visa)
			})
		}
		wg.Wait()

		exs := exchanges(t, r.hist, 12)
		count := map[string]int{}
		for _, e := range exs {
			count[e.Fault]++
		}
		assert.Equal(t, map[string]int{"503": 2, "500": 2, "reset": 2, "pass": 6}, count)
		assert.Equal(t, map[faults.Kind]int{faults.KindStatus503: 2, faults.KindStatus500: 2, faults.KindReset: 2},
			r.tr.Injected())
		assert.Len(t, r.prov.Charges(), 6)
		for _, e := range exs {
			assert.True(t, e.Done, "exchange %d", e.ID)
		}
	})
}

func TestTransport_CanceledContextIsRecordedAsCanceled(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(0, faults.Fault{Kind: faults.KindDelay, Delay: time.Second})
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(500*time.Millisecond, cancel)
		got := r.post(ctx, `"k-1"`, visa)
		require.ErrorIs(t, got.err, context.Canceled)
		e := exchanges(t, r.hist, 1)[0]
		assert.Equal(t, "client gave up", e.Err)
		assert.False(t, e.Forwarded)
	})
}
