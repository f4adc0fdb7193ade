package faults_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
)

// requireInjected requires err to be an injected transport failure of kind k.
func requireInjected(t *testing.T, err error, k faults.Kind) {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, faults.ErrInjected)
	var inj *faults.InjectedError
	require.ErrorAs(t, err, &inj)
	assert.Equal(t, k, inj.Kind)
	assert.Contains(t, err.Error(), "(injected "+string(k)+")")
}

func TestPass_ReachesProviderAndRecordsItsAnswer(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(0, faults.Fault{Kind: faults.KindPass})
		start := time.Now()
		got := r.post(t.Context(), `"k-1"`, visa)

		require.NoError(t, got.err)
		require.Equal(t, http.StatusCreated, got.status)
		ch := decodeCharge(t, got.body)
		require.Len(t, r.prov.Charges(), 1)

		e := exchanges(t, r.hist, 1)[0]
		assert.Equal(t, "pass", e.Fault)
		assert.True(t, e.Forwarded)
		assert.True(t, e.ProviderDone)
		assert.Equal(t, http.StatusCreated, e.ProviderStatus)
		assert.Equal(t, ch.ID, e.ProviderChargeID)
		assert.Equal(t, models.BodyDigest(got.body), e.ProviderBodyDigest)
		assert.True(t, e.Done)
		assert.Equal(t, http.StatusCreated, e.Status)
		assert.Empty(t, e.Err)
		assert.Equal(t, ch.ID, e.ChargeID)
		assert.False(t, e.Replayed)
		assert.Equal(t, start, e.SentAt)
		assert.Equal(t, start, e.ArrivedAt)
		assert.Equal(t, start, e.DoneAt)
		assert.Less(t, e.Seq, e.ArrivalSeq)
		assert.Less(t, e.ArrivalSeq, e.ProviderSeq)
		assert.False(t, e.Unknown())
	})
}

func TestDelay_ArrivesAfterTheDelay(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		const d = 1500 * time.Millisecond
		r := newRig(0, faults.Fault{Kind: faults.KindDelay, Delay: d})
		start := time.Now()
		got := r.post(t.Context(), `"k-1"`, visa)

		require.NoError(t, got.err)
		require.Equal(t, http.StatusCreated, got.status)
		assert.Equal(t, d, got.at.Sub(start))
		assert.Len(t, r.prov.Charges(), 1)

		e := exchanges(t, r.hist, 1)[0]
		assert.Equal(t, "delay 1.5s", e.Fault)
		assert.True(t, e.Forwarded)
		assert.Equal(t, start, e.SentAt)
		assert.Equal(t, d, e.ArrivedAt.Sub(e.SentAt))
		assert.True(t, e.ProviderDone)
		assert.Equal(t, http.StatusCreated, e.Status)
	})
}

func TestDelay_ClientGivingUpFirstMeansNoArrival(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(0, faults.Fault{Kind: faults.KindDelay, Delay: 5 * time.Second})
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		start := time.Now()
		got := r.post(ctx, `"k-1"`, visa)

		require.ErrorIs(t, got.err, context.DeadlineExceeded)
		assert.NotErrorIs(t, got.err, faults.ErrInjected)
		assert.Equal(t, 3*time.Second, got.at.Sub(start))

		time.Sleep(10 * time.Second) // long past the delay: it still never arrives
		assert.Empty(t, r.prov.Charges())
		e := exchanges(t, r.hist, 1)[0]
		assert.False(t, e.Forwarded)
		assert.Zero(t, e.ArrivalSeq)
		assert.Equal(t, "timeout", e.Err)
	})
}

func TestDropRequest_ClientTimesOutProviderSeesNothing(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(0, faults.Fault{Kind: faults.KindDropRequest})
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		start := time.Now()
		got := r.post(ctx, `"k-1"`, visa)

		require.ErrorIs(t, got.err, context.DeadlineExceeded)
		assert.NotErrorIs(t, got.err, faults.ErrInjected, "the client's own timeout, not an injected error")
		assert.Equal(t, 3*time.Second, got.at.Sub(start), "exactly the client deadline, in virtual time")
		assert.Empty(t, r.prov.Charges())

		e := exchanges(t, r.hist, 1)[0]
		assert.Equal(t, "drop-request", e.Fault)
		assert.False(t, e.Forwarded)
		assert.Zero(t, e.ArrivalSeq)
		assert.True(t, e.ArrivedAt.IsZero())
		assert.False(t, e.ProviderDone)
		assert.True(t, e.Done)
		assert.Equal(t, 3*time.Second, e.DoneAt.Sub(e.SentAt))
		assert.Zero(t, e.Status)
		assert.Equal(t, "timeout", e.Err)
		assert.True(t, e.Unknown())
	})
}

func TestDropRequest_WithoutDeadlineGivesUpAfterDropBound(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(0, faults.Fault{Kind: faults.KindDropRequest})
		start := time.Now()
		got := r.post(t.Context(), `"k-1"`, visa)

		requireInjected(t, got.err, faults.KindDropRequest)
		assert.Equal(t, faults.DropBound, got.at.Sub(start))
		assert.Empty(t, r.prov.Charges())
		e := exchanges(t, r.hist, 1)[0]
		assert.False(t, e.Forwarded)
		assert.Equal(t, "no response: request lost in transit", e.Err)
	})
}

func TestLoseResponse_ProviderChargesClientSeesError(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(0, faults.Fault{Kind: faults.KindLoseResponse})
		got := r.post(t.Context(), `"k-1"`, visa)

		requireInjected(t, got.err, faults.KindLoseResponse)
		charges := r.prov.Charges()
		require.Len(t, charges, 1, "the provider charged although the client saw an error")

		e := exchanges(t, r.hist, 1)[0]
		assert.Equal(t, "lose-response", e.Fault)
		assert.True(t, e.Forwarded)
		assert.True(t, e.ProviderDone)
		assert.Equal(t, http.StatusCreated, e.ProviderStatus)
		assert.Equal(t, charges[0].ID, e.ProviderChargeID)
		assert.True(t, e.Done)
		assert.Zero(t, e.Status)
		assert.Empty(t, e.ChargeID, "the client never saw the charge")
		assert.Equal(t, "connection reset by peer after the request was processed", e.Err)
		assert.True(t, e.Unknown())
	})
}

func TestReset_NeverReachesProvider(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(0, faults.Fault{Kind: faults.KindReset})
		got := r.post(t.Context(), `"k-1"`, visa)

		requireInjected(t, got.err, faults.KindReset)
		assert.Empty(t, r.prov.Charges())
		e := exchanges(t, r.hist, 1)[0]
		assert.Equal(t, "reset", e.Fault)
		assert.False(t, e.Forwarded)
		assert.False(t, e.ProviderDone)
		assert.Zero(t, e.ProviderStatus)
		assert.Equal(t, "connection reset by peer", e.Err)
		assert.True(t, e.Unknown())
	})
}

func TestStatus_AnsweredInProvidersPlace(t *testing.T) {
	cases := []struct {
		fault      faults.Fault
		status     int
		retryAfter string
		unknown    bool
	}{
		{faults.Fault{Kind: faults.KindStatus400}, http.StatusBadRequest, "", false},
		{faults.Fault{Kind: faults.KindStatus422}, http.StatusUnprocessableEntity, "", false},
		{faults.Fault{Kind: faults.KindStatus429, RetryAfter: 2}, http.StatusTooManyRequests, "2", false},
		{faults.Fault{Kind: faults.KindStatus500}, http.StatusInternalServerError, "", true},
		{faults.Fault{Kind: faults.KindStatus503}, http.StatusServiceUnavailable, "", false},
	}
	for _, c := range cases {
		t.Run(c.fault.String(), func(t *testing.T) {
			inBubble(t, func(t *testing.T) {
				r := newRig(0, c.fault)
				got := r.post(t.Context(), `"k-1"`, visa)

				require.NoError(t, got.err)
				require.Equal(t, c.status, got.status)
				assert.Equal(t, c.retryAfter, got.header.Get("Retry-After"))
				assert.Equal(t, "application/problem+json", got.header.Get("Content-Type"))
				var p models.Problem
				require.NoError(t, json.Unmarshal(got.body, &p))
				assert.Equal(t, c.status, p.Status)
				assert.Contains(t, p.Title, "(injected)")
				assert.Empty(t, r.prov.Charges())

				e := exchanges(t, r.hist, 1)[0]
				assert.Equal(t, c.fault.String(), e.Fault)
				assert.False(t, e.Forwarded)
				assert.False(t, e.ProviderDone)
				assert.Zero(t, e.ProviderStatus)
				assert.True(t, e.Done)
				assert.Equal(t, c.status, e.Status)
				assert.Empty(t, e.Err)
				assert.Equal(t, c.unknown, e.Unknown())
			})
		})
	}
}

// The seed's "unknown outcome": the client gives up after 3 s, the provider
// takes 5 s and charges anyway.
func TestSlowProcessing_ClientTimesOutProviderCompletesLater(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(0, faults.Fault{Kind: faults.KindSlowProcessing, Delay: 5 * time.Second})
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		start := time.Now()
		got := r.post(ctx, `"k-1"`, visa)

		require.ErrorIs(t, got.err, context.DeadlineExceeded)
		assert.Equal(t, 3*time.Second, got.at.Sub(start))
		assert.Empty(t, r.prov.Charges(), "still processing when the client gave up")
		e := exchanges(t, r.hist, 1)[0]
		assert.Equal(t, "slow-processing 5s", e.Fault)
		assert.True(t, e.Forwarded)
		assert.Equal(t, start, e.ArrivedAt)
		assert.False(t, e.ProviderDone)
		assert.Equal(t, "timeout", e.Err)
		assert.True(t, e.Unknown())

		time.Sleep(3 * time.Second) // the provider's 5 s pass
		synctest.Wait()
		require.Len(t, r.prov.Charges(), 1)
		e = exchanges(t, r.hist, 1)[0]
		assert.True(t, e.ProviderDone)
		assert.Equal(t, 5*time.Second, e.ProviderDoneAt.Sub(e.ArrivedAt))
		assert.Equal(t, http.StatusCreated, e.ProviderStatus)
		assert.Equal(t, r.prov.Charges()[0].ID, e.ProviderChargeID)
		assert.Zero(t, e.Status, "what the client got is unchanged")
		assert.Equal(t, "timeout", e.Err)
		assert.Less(t, e.ArrivalSeq, e.ProviderSeq)
	})
}

func TestSlowProcessing_AddsToBaseProcessing(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(time.Second, faults.Fault{Kind: faults.KindSlowProcessing, Delay: 5 * time.Second})
		start := time.Now()
		got := r.post(t.Context(), `"k-1"`, visa)

		require.NoError(t, got.err)
		require.Equal(t, http.StatusCreated, got.status)
		assert.Equal(t, 6*time.Second, got.at.Sub(start))
		e := exchanges(t, r.hist, 1)[0]
		assert.Equal(t, 6*time.Second, e.ProviderDoneAt.Sub(e.ArrivedAt))

		// The next request, past the schedule, takes only the base time.
		start = time.Now()
		got = r.post(t.Context(), `"k-2"`, visa)
		require.Equal(t, http.StatusCreated, got.status)
		assert.Equal(t, time.Second, got.at.Sub(start))
	})
}

func TestExtraProcessing_ZeroWithoutSlowFault(t *testing.T) {
	assert.Zero(t, faults.ExtraProcessing(context.Background()))
}

func TestInjectedError_IsAndAs(t *testing.T) {
	var err error = &faults.InjectedError{Kind: faults.KindReset, Msg: "connection reset by peer"}
	wrapped := errors.Join(errors.New("outer"), err)
	assert.ErrorIs(t, wrapped, faults.ErrInjected)
	var inj *faults.InjectedError
	require.ErrorAs(t, wrapped, &inj)
	assert.Equal(t, faults.KindReset, inj.Kind)
	assert.Equal(t, "connection reset by peer (injected reset)", err.Error())
	assert.NotErrorIs(t, context.DeadlineExceeded, faults.ErrInjected)
}

func TestFault_String(t *testing.T) {
	cases := map[string]faults.Fault{
		"pass":                 {Kind: faults.KindPass},
		"delay 1.5s":           {Kind: faults.KindDelay, Delay: 1500 * time.Millisecond},
		"delay 5.000313s":      {Kind: faults.KindDelay, Delay: 5*time.Second + 313*time.Microsecond},
		"drop-request":         {Kind: faults.KindDropRequest},
		"lose-response":        {Kind: faults.KindLoseResponse},
		"reset":                {Kind: faults.KindReset},
		"429 retry-after 2s":   {Kind: faults.KindStatus429, RetryAfter: 2},
		"400":                  {Kind: faults.KindStatus400},
		"422":                  {Kind: faults.KindStatus422},
		"500":                  {Kind: faults.KindStatus500},
		"503":                  {Kind: faults.KindStatus503},
		"slow-processing 12s":  {Kind: faults.KindSlowProcessing, Delay: 12 * time.Second},
		"no-such-kind":         {Kind: "no-such-kind"},
		"slow-processing 20ms": {Kind: faults.KindSlowProcessing, Delay: 20 * time.Millisecond},
	}
	for want, f := range cases {
		t.Run(want, func(t *testing.T) {
			assert.Equal(t, want, f.String())
			assert.Equal(t, f.String(), f.String(), "deterministic")
		})
	}
}

func TestKinds_ListsEveryKindInNameOrder(t *testing.T) {
	assert.Equal(t, []faults.Kind{
		faults.KindStatus400, faults.KindStatus422, faults.KindStatus429, faults.KindStatus500, faults.KindStatus503,
		faults.KindChargedThenUnreachable, faults.KindDelay, faults.KindDropRequest, faults.KindHangUp, faults.KindHold, faults.KindLookupLag,
		faults.KindLoseResponse, faults.KindOutage, faults.KindPass, faults.KindProviderCrash, faults.KindProviderRestart, faults.KindReset, faults.KindSlowPastTotal,
		faults.KindSlowProcessing, faults.KindStoreDown, faults.KindStoreOutage,
	}, faults.Kinds())
	ks := faults.Kinds()
	ks[0] = "mutated"
	assert.Equal(t, faults.KindStatus400, faults.Kinds()[0], "Kinds returns a fresh slice")
}

func TestForwards_ExactlyTheKindsThatReachTheProvider(t *testing.T) {
	forwarding := map[faults.Kind]bool{
		faults.KindPass: true, faults.KindDelay: true, faults.KindHold: true,
		faults.KindLoseResponse: true, faults.KindSlowProcessing: true, faults.KindStoreDown: true, faults.KindProviderCrash: true,
		faults.KindHangUp: true, faults.KindChargedThenUnreachable: true, faults.KindSlowPastTotal: true,
		faults.KindProviderRestart: true, faults.KindStoreOutage: true, faults.KindLookupLag: true,
	}
	for _, k := range faults.Kinds() {
		assert.Equal(t, forwarding[k], faults.Forwards(k), "kind %s", k)
	}
	assert.False(t, faults.Forwards("no-such-kind"))
}

// Forwards agrees with what the Transport does: a forwarding kind marks
// the exchange Forwarded, any other never does.
func TestForwards_AgreesWithTransport(t *testing.T) {
	params := map[faults.Kind]faults.Fault{
		faults.KindDelay:                  {Kind: faults.KindDelay, Delay: time.Second},
		faults.KindSlowProcessing:         {Kind: faults.KindSlowProcessing, Delay: time.Second},
		faults.KindChargedThenUnreachable: {Kind: faults.KindChargedThenUnreachable, Delay: time.Second},
		faults.KindSlowPastTotal:          {Kind: faults.KindSlowPastTotal, Delay: time.Second},
		faults.KindStatus429:              {Kind: faults.KindStatus429, RetryAfter: 1},
		faults.KindHold:                   {Kind: faults.KindHold, Delay: time.Second}, // alone: forwarded after its bound
	}
	for _, k := range faults.Kinds() {
		t.Run(string(k), func(t *testing.T) {
			inBubble(t, func(t *testing.T) {
				f, ok := params[k]
				if !ok {
					f = faults.Fault{Kind: k}
				}
				r := newRig(0, f)
				ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
				defer cancel()
				r.post(ctx, `"k-1"`, visa)
				synctest.Wait()
				e := exchanges(t, r.hist, 1)[0]
				assert.Equal(t, faults.Forwards(k), e.Forwarded)
				assert.Equal(t, faults.Forwards(k), e.ArrivalSeq != 0)
			})
		})
	}
}
