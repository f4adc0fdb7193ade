package faults_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// requireAnsweredAtArrival requires that between e's arrival and its answer
// the history records no other provider event: a request the provider did
// not process (409, 422, replay, 400) is decided in one step.
func requireAnsweredAtArrival(t *testing.T, exs []models.Exchange, e models.Exchange) {
	t.Helper()
	require.Less(t, e.ArrivalSeq, e.ProviderSeq, "exchange %d", e.ID)
	evs := models.ProviderEvents(exs)
	for i, ev := range evs {
		if ev.Arrival && ev.Ex.ID == e.ID {
			require.Less(t, i+1, len(evs))
			next := evs[i+1]
			require.Falsef(t, next.Arrival, "exchange %d: arrival of %d before its answer", e.ID, next.Ex.ID)
			require.Equalf(t, e.ID, next.Ex.ID, "exchange %d: completion of %d before its answer", e.ID, next.Ex.ID)
			return
		}
	}
	t.Fatalf("exchange %d never arrived", e.ID)
}

func TestInProcess_SecondRequestWhileFirstInFlightGets409(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(time.Second)
		start := time.Now()
		first := make(chan result, 1)
		go func() { first <- r.post(context.Background(), `"k"`, visa) }()
		synctest.Wait() // the first request is in its processing delay

		time.Sleep(500 * time.Millisecond)
		second := r.post(t.Context(), `"k"`, visa)
		require.NoError(t, second.err)
		assert.Equal(t, http.StatusConflict, second.status)
		assert.Equal(t, 500*time.Millisecond, second.at.Sub(start), "a 409 takes no processing time")

		a := <-first
		require.NoError(t, a.err)
		require.Equal(t, http.StatusCreated, a.status)
		assert.Equal(t, time.Second, a.at.Sub(start))
		ch := decodeCharge(t, a.body)

		third := r.post(t.Context(), `"k"`, visa)
		require.NoError(t, third.err)
		assert.Equal(t, http.StatusCreated, third.status)
		assert.Equal(t, "true", third.header.Get(models.ReplayedHeader))
		assert.Equal(t, a.body, third.body)

		other := visa
		other.Amount++
		assert.Equal(t, http.StatusUnprocessableEntity, r.post(t.Context(), `"k"`, other).status)
		require.Len(t, r.prov.Charges(), 1)

		exs := exchanges(t, r.hist, 4)
		ea, eb, ec, ed := exs[0], exs[1], exs[2], exs[3]
		assert.Less(t, ea.ArrivalSeq, eb.ArrivalSeq)
		assert.Less(t, eb.ArrivalSeq, ea.ProviderSeq, "the second arrived while the first was in flight")
		assert.Less(t, eb.ProviderSeq, ea.ProviderSeq, "the 409 was decided before the first completed")
		assert.Less(t, ea.ProviderSeq, ec.ArrivalSeq)
		assert.Equal(t, start.Add(500*time.Millisecond), eb.ArrivedAt)
		assert.Equal(t, start.Add(time.Second), ea.ProviderDoneAt)

		assert.Equal(t, http.StatusConflict, eb.ProviderStatus)
		assert.Empty(t, eb.ProviderChargeID)
		assert.True(t, eb.Unknown(), "a 409 is an unknown outcome")
		requireAnsweredAtArrival(t, exs, eb)
		requireAnsweredAtArrival(t, exs, ec)
		requireAnsweredAtArrival(t, exs, ed)

		assert.Equal(t, ea.ProviderBodyDigest, ec.ProviderBodyDigest, "the replay is the first answer")
		assert.Equal(t, ch.ID, ec.ProviderChargeID)
		assert.Equal(t, ch.ID, ec.ChargeID)
		assert.True(t, ec.Replayed)
		assert.False(t, ea.Replayed)
		assert.Equal(t, http.StatusUnprocessableEntity, ed.ProviderStatus)

		requireSpecAllows(t, exs)
	})
}

func TestInProcess_ConcurrentSameKeyChargesOnceAndOrdersDecisions(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(time.Second)
		const n = 6
		results := make([]result, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { results[i] = r.post(t.Context(), `"same"`, visa) })
		}
		wg.Wait()

		require.Len(t, r.prov.Charges(), 1)
		created := 0
		for _, res := range results {
			require.NoError(t, res.err)
			switch res.status {
			case http.StatusCreated:
				created++
			case http.StatusConflict:
			default:
				t.Errorf("unexpected status %d", res.status)
			}
		}
		assert.Equal(t, 1, created, "all arrive at one virtual instant: one processes, the rest get 409")

		exs := exchanges(t, r.hist, n)
		for _, e := range exs {
			require.True(t, e.ProviderDone)
			if e.ProviderStatus == http.StatusConflict {
				requireAnsweredAtArrival(t, exs, e)
			}
		}
		requireSpecAllows(t, exs)
	})
}

// Under random arrivals of a few keys and bodies, every answer the
// provider gives, in the order the history records, is one the
// specification allows.
func TestInProcess_HistoryOrderSatisfiesSpec(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(time.Second)
		keys := []string{`"a"`, `"b"`}
		bodies := []models.ChargeRequest{visa, {Amount: 100, Currency: "EUR", Source: "tok_mastercard", MerchantReference: "bookstore-2-b"}}
		var wg sync.WaitGroup
		for i := range 24 {
			wg.Go(func() {
				time.Sleep(time.Duration(i%5) * 400 * time.Millisecond)
				r.post(t.Context(), keys[i%2], bodies[(i/2)%2])
			})
		}
		wg.Wait()
		exs := exchanges(t, r.hist, 24)
		requireSpecAllows(t, exs)
		assert.LessOrEqual(t, len(r.prov.Charges()), 2)
	})
}

func TestInProcess_WithoutTransportRecordsNothing(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		h := models.NewHistory()
		wire := &faults.InProcess{History: h, Processing: time.Second}
		prov := provider.New(provider.Config{BeforeCommit: wire.BeforeCommit})
		wire.Handler = prov

		start := time.Now()
		resp, err := wire.RoundTrip(newPost(t.Context(), `"k"`, visa))
		require.NoError(t, err)
		defer resp.Body.Close()
		assert.Equal(t, http.StatusCreated, resp.StatusCode)
		assert.NotNil(t, resp.Request)
		assert.Equal(t, time.Second, time.Since(start))
		assert.Len(t, prov.Charges(), 1)
		assert.Empty(t, h.Snapshot().Exchanges)
	})
}

func TestInProcess_BeforeCommitIgnoresForeignRequests(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		wire := &faults.InProcess{History: models.NewHistory(), Processing: time.Hour}
		prov := provider.New(provider.Config{BeforeCommit: wire.BeforeCommit})
		wire.Handler = prov

		// Served directly, not through RoundTrip: no delay and no lock taken.
		start := time.Now()
		w := httptest.NewRecorder()
		prov.ServeHTTP(w, newPost(t.Context(), `"k-1"`, visa))
		assert.Equal(t, http.StatusCreated, w.Code)
		assert.Zero(t, time.Since(start))

		// Through another InProcess: still not this one's business.
		other := &faults.InProcess{Handler: prov}
		resp, err := other.RoundTrip(newPost(t.Context(), `"k-2"`, visa))
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusCreated, resp.StatusCode)
		assert.Zero(t, time.Since(start))

		// The wire itself still works afterwards (its lock was not left held).
		resp, err = wire.RoundTrip(newPost(t.Context(), `"k-3"`, visa))
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusCreated, resp.StatusCode)
		assert.Equal(t, time.Hour, time.Since(start))
	})
}

func TestInProcess_UsesItsClock(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		fixed := time.Date(2026, 10, 22, 12, 0, 0, 0, time.UTC)
		r := newRig(0)
		r.wire.Now = func() time.Time { return fixed }
		r.tr.Now = func() time.Time { return fixed.Add(-time.Minute) }
		require.Equal(t, http.StatusCreated, r.post(t.Context(), `"k"`, visa).status)
		e := exchanges(t, r.hist, 1)[0]
		assert.Equal(t, fixed.Add(-time.Minute), e.SentAt)
		assert.Equal(t, fixed.Add(-time.Minute), e.DoneAt)
		assert.Equal(t, fixed, e.ArrivedAt)
		assert.Equal(t, fixed, e.ProviderDoneAt)
	})
}
