package faults_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
)

// tieBubbles is how many fresh bubbles each tie case runs, one outcome
// in all of them being the test: synctest wakes the goroutines of one
// instant in no fixed order, so any one bubble may come out either way.
const tieBubbles = 100

// A provider answer that is ready at the very instant the client gives
// up is given up, in every bubble: at an exact tie the client's timeout
// wins. The reference client's attempt timeout is failsafe-go's
// time.AfterFunc racing the try's return, and synctest does not order the
// goroutines it wakes at one instant: before InProcess's answerLag each
// case took the 201 in 38 to 63 of its 100 bubbles (the checkouts in one
// try) and gave up in the others (a retry then got the replay), and the
// test failed in 20 runs of 20. Three ways to the tie: the provider's
// base processing time is the attempt timeout; a slow-processing fault
// makes up the difference; a plain client whose context deadline is the
// processing time.
func TestInProcess_AnswerDueAsTheClientGivesUpIsGivenUp(t *testing.T) {
	const attempt = client.DefaultAttemptTimeout
	const processing = 50 * time.Millisecond
	const givenUp = `; exchange 1: status 0 err "client gave up" at 3s`
	const replayed = `; exchange 2: status 201 err "" at 0s`
	for _, tc := range []struct {
		name       string
		processing time.Duration
		schedule   []faults.Fault
		run        func(r *rig) string
		want       string
	}{
		{"processing", attempt, nil, refCheckout, "checkout Paid" + givenUp + replayed},
		{"slow-processing", processing, []faults.Fault{{Kind: faults.KindSlowProcessing, Delay: attempt - processing}},
			refCheckout, "checkout Paid" + givenUp + replayed},
		{"context deadline", attempt, nil, postWithin(attempt), `post: Post "` + baseURL + `/v1/charges": context deadline exceeded, 1 charge; exchange 1: status 0 err "timeout" at 3s`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := outcomes(t, tc.processing, tc.schedule, tc.run, func(e models.Exchange) string {
				return fmt.Sprintf("; exchange %d: status %d err %q at %s", e.ID, e.Status, e.Err, e.DoneAt.Sub(e.SentAt))
			})
			require.Len(t, seen, 1, "outcomes of %d bubbles of one run: %v", tieBubbles, seen)
			require.Contains(t, seen, tc.want)
		})
	}
}

// outcomes runs run in tieBubbles bubbles over a rig of processing and
// schedule and counts what each returned, followed by line of each of its
// exchanges.
func outcomes(t *testing.T, processing time.Duration, schedule []faults.Fault, run func(r *rig) string, line func(models.Exchange) string) map[string]int {
	seen := map[string]int{}
	for range tieBubbles {
		inBubble(t, func(t *testing.T) {
			r := newRig(processing, schedule...)
			out := run(r)
			for _, e := range r.hist.Snapshot().Exchanges {
				out += line(e)
			}
			seen[out]++
		})
	}
	return seen
}

// postWithin is a plain client's create under a context deadline d later;
// what it returns names its error and the provider's charges. The bubble
// outlasts the provider's goroutine, which may hand its answer over just
// after the deadline (answerLag).
func postWithin(d time.Duration) func(r *rig) string {
	return func(r *rig) string {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		res := r.post(ctx, `"k"`, visa)
		time.Sleep(time.Second) // virtual: inside the bubble
		return fmt.Sprintf("post: %v, %d charge", res.err, len(r.prov.Charges()))
	}
}

// An answer ready strictly before the client gives up (1 ns before) is
// given at once, before any timer of the client's. A breaker found the
// first answerLag holding every answer within inlineMargin of the
// deadline back 1 ns, onto the client's timer: the answer that came in
// time was reported "client gave up" in about half the bubbles (109 of
// 200); it was a 201 in 200 of 200 before answerLag.
func TestInProcess_AnAnswerBeforeTheClientsTimerIsNotHeldOntoIt(t *testing.T) {
	const attempt = client.DefaultAttemptTimeout
	for _, tc := range []struct {
		name       string
		processing time.Duration
		schedule   []faults.Fault
		run        func(r *rig) string
	}{
		{"context deadline 1ns after the answer", attempt - time.Nanosecond, nil, postWithin(attempt)},
		{"attempt timeout 1ns after the answer", attempt - time.Nanosecond, nil, refCheckout},
		{"slow-processing fault ending 1ns before the attempt timeout", 50 * time.Millisecond,
			[]faults.Fault{{Kind: faults.KindSlowProcessing, Delay: attempt - 50*time.Millisecond - time.Nanosecond}}, refCheckout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := outcomes(t, tc.processing, tc.schedule, tc.run, func(e models.Exchange) string {
				return fmt.Sprintf("; ex %d: %d %q pseq %d done %s", e.ID, e.Status, e.Err, e.ProviderSeq, e.DoneAt.Sub(e.SentAt))
			})
			require.Len(t, seen, 1, "outcomes of %d bubbles: %v", tieBubbles, seen)
			for out := range seen {
				require.NotContains(t, out, "gave up", "an answer ready before the client's timer")
				require.NotContains(t, out, "deadline exceeded", "an answer ready before the client's timer")
			}
		})
	}
}

// At the exact tie the client's timeout wins in every bubble, and the
// history is the same in every bubble too: the provider's commit
// (ProviderSeq) is recorded before the fault layer's record of the client
// giving up, though both fall at the tie instant on goroutines synctest
// wakes in no fixed order. Before, the event numbers swapped (provider_seq
// 4 in 94 bubbles of 200, 5 in 106): TestOneSeedRecordsTheSameHistoryEveryRun
// promises one history per seed, event number for event number.
func TestInProcess_TheTieRecordsOneHistory(t *testing.T) {
	const attempt = client.DefaultAttemptTimeout
	const processing = 50 * time.Millisecond
	for _, tc := range []struct {
		name       string
		processing time.Duration
		schedule   []faults.Fault
		run        func(r *rig) string
	}{
		{"processing", attempt, nil, refCheckout},
		{"slow-processing", processing, []faults.Fault{{Kind: faults.KindSlowProcessing, Delay: attempt - processing}}, refCheckout},
		{"context deadline", attempt, nil, postWithin(attempt)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := outcomes(t, tc.processing, tc.schedule, tc.run, func(e models.Exchange) string {
				return fmt.Sprintf("; ex %d seq %d arrival %d provider %d: %d %q", e.ID, e.Seq, e.ArrivalSeq, e.ProviderSeq, e.Status, e.Err)
			})
			require.Len(t, seen, 1, "histories of %d bubbles: %v", tieBubbles, seen)
		})
	}
}

// InProcess lags an answer at a tie with the reference client's timeouts,
// which fall client.TryDeadlinePad before the try's context deadline: its
// copy of that pad must be the client's (faults cannot import sut/client).
func TestInProcess_TiePadIsTheReferenceClients(t *testing.T) {
	require.Equal(t, client.TryDeadlinePad, faults.TryDeadlinePad)
}

// refCheckout is one checkout of the reference client, with the default
// attempt timeout, over r; what it returns names its outcome.
func refCheckout(r *rig) string {
	c := client.New(client.Config{BaseURL: baseURL, HTTPClient: r.client, AttemptTimeout: client.DefaultAttemptTimeout}, client.NewStore())
	res := c.Checkout(context.Background(), c.OpenOrder(visa.Amount, visa.Currency).ID, visa.Source)
	return fmt.Sprintf("checkout %s", res.Outcome)
}
