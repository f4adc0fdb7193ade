package faults_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
)

// orderBubbles is how many fresh bubbles
// TestInProcess_SameInstantCommitsInArrivalOrder runs: synctest wakes the
// goroutines of one instant in no fixed order, so one bubble may commit
// in arrival order by chance. Before InProcess ordered its commits 192 of
// 200 bubbles (run each alone) did not, and the test failed in every run.
const orderBubbles = 50

// Requests whose processing ends at one virtual instant commit, and so
// get their ProviderSeq, in the order they arrived, in every bubble. Each
// bubble has three such instants: a hung-up charge and the next request,
// sent as the client gives up (the shape of TestConformance -rapid.seed=10,
// sequence 118, whose hung-up charge and refund swapped ProviderSeq from
// run to run); four requests at once, one of them refused 409 before
// processing (it never reaches BeforeCommit); and a slow request joined,
// while it is still processing, by one that ends at the same instant.
func TestInProcess_SameInstantCommitsInArrivalOrder(t *testing.T) {
	for i := range orderBubbles {
		inBubble(t, func(t *testing.T) {
			const processing = 50 * time.Millisecond
			const slow = 30 * time.Millisecond
			schedule := []faults.Fault{{Kind: faults.KindHangUp}, {Kind: faults.KindPass},
				{Kind: faults.KindPass}, {Kind: faults.KindPass}, {Kind: faults.KindPass}, {Kind: faults.KindPass},
				{Kind: faults.KindSlowProcessing, Delay: slow}, {Kind: faults.KindPass}}
			r := newRig(processing, schedule...)
			ctx := context.Background() // no deadline: each waits on a goroutine of the wire's own
			var wg sync.WaitGroup

			hungUp := r.post(ctx, `"k-1"`, visa)
			require.ErrorIs(t, hungUp.err, faults.ErrInjected)
			wg.Go(func() { r.post(ctx, `"k-2"`, visa) }) // arrives as the client hangs up
			wg.Wait()

			for _, key := range []string{`"k-3"`, `"k-4"`, `"k-5"`, `"k-3"`} {
				wg.Go(func() { r.post(ctx, key, visa) })
			}
			wg.Wait()

			wg.Go(func() { r.post(ctx, `"k-6"`, visa) }) // slow: ends after processing+slow
			time.Sleep(slow)
			r.post(ctx, `"k-7"`, visa) // ends with k-6's
			wg.Wait()

			exs := exchanges(t, r.hist, 8)
			require.Len(t, r.prov.Charges(), 7, "k-1 to k-7, k-3 once")
			requireSameInstantInArrivalOrder(t, i, exs, 3)
			requireSpecAllows(t, exs)
		})
	}
}

// requireSameInstantInArrivalOrder requires that exchanges the provider
// processed (answered later than they arrived) and answered at one
// instant were answered in the order they arrived, and that there were
// instants such exchanges shared.
func requireSameInstantInArrivalOrder(t *testing.T, bubble int, exs []models.Exchange, instants int) {
	t.Helper()
	byDone := map[time.Time][]models.Exchange{}
	for _, e := range exs {
		if e.ProviderDone && e.ProviderDoneAt.After(e.ArrivedAt) {
			byDone[e.ProviderDoneAt] = append(byDone[e.ProviderDoneAt], e)
		}
	}
	shared := 0
	for at, es := range byDone {
		if len(es) < 2 {
			continue
		}
		shared++
		for _, a := range es {
			for _, b := range es {
				if a.ArrivalSeq < b.ArrivalSeq {
					assert.Lessf(t, a.ProviderSeq, b.ProviderSeq,
						"bubble %d, instant %s: exchange %d arrived before %d (arrival %d < %d) but committed after it",
						bubble, at.Format(time.StampMicro), a.ID, b.ID, a.ArrivalSeq, b.ArrivalSeq)
				}
			}
		}
	}
	assert.Equal(t, instants, shared, "bubble %d: instants at which more than one processed request ended", bubble)
}
