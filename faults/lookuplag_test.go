package faults_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// newLagRig is newRig whose provider reads the Transport's lookup lag
// (faults.LookupLag wired to provider.Config.LookupLagOf), as
// sut/backend's embedded provider does.
func newLagRig() *rig {
	r := newRig(0)
	r.prov = provider.New(provider.Config{BeforeCommit: r.wire.BeforeCommit,
		LookupLagOf: func(req *http.Request) time.Duration { return faults.LookupLag(req.Context()) }})
	r.wire.Handler = r.prov
	return r
}

// listed is how many charges a lookup of visa's reference lists.
func (r *rig) listed(t *testing.T) int {
	t.Helper()
	got := r.get(t.Context(), visa.MerchantReference)
	require.NoError(t, got.err)
	require.Equal(t, http.StatusOK, got.status, string(got.body))
	var list models.ChargeList
	require.NoError(t, json.Unmarshal(got.body, &list))
	return len(list.Data)
}

// A lookup lag given to the Transport rides on every later request, past
// a new schedule and Heal: a charge made after it is listed only once it
// is the lag old. It counts once in Injected (the run's statistics).
func TestLookupLag_LastsForTheTransportsLife(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		const lag = 10 * time.Minute
		r := newLagRig()
		r.tr.LagLookups(faults.Fault{Kind: faults.KindPass}) // not a lag: nothing changes
		r.tr.LagLookups(faults.Fault{Kind: faults.KindLookupLag, Delay: lag})
		r.tr.Schedule([]faults.Fault{{Kind: faults.KindLoseResponse}})
		got := r.post(t.Context(), `"k-1"`, visa)
		require.Error(t, got.err, "the response was lost")
		require.Len(t, r.prov.Charges(), 1, "the charge landed")

		r.tr.Schedule(nil)
		r.tr.Heal()
		assert.Zero(t, r.listed(t), "listed before the lag passed")
		time.Sleep(lag - time.Second)
		assert.Zero(t, r.listed(t), "listed before the lag passed")
		time.Sleep(time.Second)
		assert.Equal(t, 1, r.listed(t))
		assert.Equal(t, map[faults.Kind]int{faults.KindLookupLag: 1, faults.KindLoseResponse: 1}, r.tr.Injected())
	})
}

// As a schedule's entry, lookup-lag forwards its request, and the lag
// holds from it on.
func TestLookupLag_AsAScheduleEntry(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newLagRig()
		r.tr.Schedule([]faults.Fault{{Kind: faults.KindLookupLag, Delay: time.Minute}})
		got := r.post(t.Context(), `"k-1"`, visa)
		require.NoError(t, got.err)
		require.Equal(t, http.StatusCreated, got.status)
		e := exchanges(t, r.hist, 1)[0]
		assert.Equal(t, "lookup-lag 1m0s", e.Fault)
		assert.True(t, e.Forwarded)
		assert.Zero(t, r.listed(t))
		time.Sleep(time.Minute)
		assert.Equal(t, 1, r.listed(t))
	})
}

// Without a lookup lag the provider lists a charge at once: the lag is
// what hid it above.
func TestLookupLag_NoneListsAtOnce(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newLagRig()
		require.Equal(t, http.StatusCreated, r.post(t.Context(), `"k-1"`, visa).status)
		assert.Equal(t, 1, r.listed(t))
		assert.Zero(t, faults.LookupLag(t.Context()))
	})
}

// LookupLagFor gives no lag for shape 0, for 2 with an odd total (and
// anything outside 0-3), the longest lag for 1 and for 2 with an even
// total, 10 min for 3, none past MaxLookupLag.
func TestLookupLagFor_ShapesToLags(t *testing.T) {
	for _, c := range []struct {
		shape int
		total int64
		want  faults.Fault
	}{
		{0, 100, faults.Fault{Kind: faults.KindPass}},
		{-1, 100, faults.Fault{Kind: faults.KindPass}},
		{4, 100, faults.Fault{Kind: faults.KindPass}},
		{1, 101, faults.Fault{Kind: faults.KindLookupLag, Delay: faults.MaxLookupLag}},
		{2, 101, faults.Fault{Kind: faults.KindPass}},
		{2, 100, faults.Fault{Kind: faults.KindLookupLag, Delay: faults.MaxLookupLag}},
		{3, 101, faults.Fault{Kind: faults.KindLookupLag, Delay: 10 * time.Minute}},
	} {
		got := faults.LookupLagFor(c.shape, c.total)
		assert.Equal(t, c.want, got, "shape %d, total %d", c.shape, c.total)
		assert.LessOrEqual(t, got.Delay, faults.MaxLookupLag)
	}
	assert.Equal(t, 20*time.Minute, faults.MaxLookupLag)
}
