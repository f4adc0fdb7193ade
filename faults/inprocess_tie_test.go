package faults_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/sut/client"
)

// tieBubbles is how many fresh bubbles each case of
// TestInProcess_AnswerDueAsTheClientGivesUpIsGivenUp runs: synctest
// wakes the goroutines of one instant in no fixed order, so any one
// bubble may come out either way.
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
	checkout := func(r *rig) string {
		c := client.New(client.Config{BaseURL: baseURL, HTTPClient: r.client, AttemptTimeout: attempt}, client.NewStore())
		res := c.Checkout(context.Background(), c.OpenOrder(visa.Amount, visa.Currency).ID, visa.Source)
		return fmt.Sprintf("checkout %s", res.Outcome)
	}
	const givenUp = `; exchange 1: status 0 err "client gave up" at 3s`
	const replayed = `; exchange 2: status 201 err "" at 0s`
	for _, tc := range []struct {
		name       string
		processing time.Duration
		schedule   []faults.Fault
		run        func(r *rig) string
		want       string
	}{
		{"processing", attempt, nil, checkout, "checkout Paid" + givenUp + replayed},
		{"slow-processing", processing, []faults.Fault{{Kind: faults.KindSlowProcessing, Delay: attempt - processing}},
			checkout, "checkout Paid" + givenUp + replayed},
		{"context deadline", attempt, nil, func(r *rig) string {
			ctx, cancel := context.WithTimeout(context.Background(), attempt)
			defer cancel()
			res := r.post(ctx, `"k"`, visa)
			time.Sleep(time.Second) // the bubble outlasts the provider's goroutine, which hands its answer over after
			return fmt.Sprintf("post: %v, %d charge", res.err, len(r.prov.Charges()))
		}, `post: Post "` + baseURL + `/v1/charges": context deadline exceeded, 1 charge; exchange 1: status 0 err "timeout" at 3s`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[string]int{}
			for range tieBubbles {
				inBubble(t, func(t *testing.T) {
					r := newRig(tc.processing, tc.schedule...)
					out := tc.run(r)
					for _, e := range r.hist.Snapshot().Exchanges {
						out += fmt.Sprintf("; exchange %d: status %d err %q at %s", e.ID, e.Status, e.Err, e.DoneAt.Sub(e.SentAt))
					}
					seen[out]++
				})
			}
			require.Len(t, seen, 1, "outcomes of %d bubbles of one run: %v", tieBubbles, seen)
			require.Contains(t, seen, tc.want)
		})
	}
}
