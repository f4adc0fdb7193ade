package client

import (
	"context"
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// ReconcileReport counts what one reconciliation run did.
type ReconcileReport struct {
	// Checked is how many open attempts were old enough to ask about.
	Checked int
	// Succeeded is how many the provider holds a charge for (now Succeeded,
	// their orders Paid).
	Succeeded int
	// Abandoned is how many had no charge after AbandonAfter (now
	// Abandoned, their orders Placed again).
	Abandoned int
	// StillOpen is how many had no charge yet and stay Open.
	StillOpen int
	// Errors is how many could not be settled: the provider was not
	// reached, or the client crashed.
	Errors int
}

// ReconciliationJob settles open attempts by asking the provider for their
// charges (seed article 000, PaymentReconciliationJob). It is safe for
// concurrent use, and several instances may each run one over one store:
// two runs may ask about the same attempt, which is harmless (a GET), and
// the store's abandon is conditional (still Open, not resent since), so a
// run whose answer went stale between its read and its write changes
// nothing. Config.At is called at PointBeforeSettle for each attempt.
type ReconciliationJob struct {
	c *Client
}

// ReconciliationJob returns the client's reconciliation job.
func (c *Client) ReconciliationJob() *ReconciliationJob { return &ReconciliationJob{c: c} }

// RunReconciliation runs the reconciliation job once at now; see
// ReconciliationJob.RunOnce.
func (c *Client) RunReconciliation(ctx context.Context, now time.Time) ReconcileReport {
	return c.ReconciliationJob().RunOnce(ctx, now)
}

// RunOnce asks about every Open attempt created at or before now-MinAge:
// it sets LastCheckedAt to now and GETs
// /v1/charges?merchant_reference=<attempt reference> through the pipeline.
// A succeeded charge makes the attempt Succeeded and its order Paid; no
// charge and an age of at least AbandonAfter makes it Abandoned and its
// order Placed (the shopper may pay again under a new key); otherwise it
// stays Open. A failed query leaves the attempt as it is. Open refund
// intents are settled the same way by GET /v1/refunds?merchant_reference=.
// Every request carries ctx.
func (j *ReconciliationJob) RunOnce(ctx context.Context, now time.Time) ReconcileReport {
	c := j.c
	ctx, done := c.callContext(ctx)
	defer done()

	var rep ReconcileReport
	sctx := c.storeCtx(ctx)
	open, err := c.store.OpenAttempts(sctx, now.Add(-c.cfg.MinAge))
	if err != nil {
		rep.Errors++
		return rep
	}
	for _, a := range open {
		j.settle(ctx, a, now, &rep)
	}
	c.reconcileRefunds(ctx, now, &rep) // refund intents, the same way (refund.go)
	return rep
}

// settle asks the provider about open attempt a at now and writes what it
// decided (see RunOnce), counting it in rep.
func (j *ReconciliationJob) settle(ctx context.Context, a models.PaymentAttempt, now time.Time, rep *ReconcileReport) {
	c := j.c
	sctx := c.storeCtx(ctx)
	rep.Checked++
	if err := c.store.MarkChecked(sctx, c.epoch, a.ID, now); err != nil {
		rep.Errors++
		return
	}
	list, err := c.gw.findCharges(ctx, a.Reference())
	if err != nil {
		rep.Errors++
		return
	}
	chargeID := ""
	for _, ch := range list.Data {
		if ch.Status == "succeeded" {
			chargeID = ch.ID
			break
		}
	}
	// AbandonAfter is measured from the last send, not from CreatedAt:
	// a shopper may resend an old attempt's key, and the provider may
	// still be processing it (found by the conformance property; the
	// regression is TestReconciliationWaitsForAResentKey).
	due := now.Sub(a.LastSentAt) >= c.cfg.AbandonAfter
	idle := now.Add(-c.cfg.AbandonAfter)
	if c.cfg.Planted.AbandonByCreation { // planted bug: AbandonByCreation
		due, idle = now.Sub(a.CreatedAt) >= c.cfg.AbandonAfter, now
	}
	if c.cfg.Planted.ReconcilerNeverAbandons { // planted bug: ReconcilerNeverAbandons
		due = false
	}
	if c.cfg.Planted.ReconcilerAbandonsCharged && due { // planted bug: ReconcilerAbandonsCharged
		chargeID = ""
	}
	c.at(ctx, PointBeforeSettle)
	switch {
	case chargeID != "":
		_, err = c.store.Succeed(sctx, c.epoch, a.ID, chargeID)
		count(rep, &rep.Succeeded, err)
	case due:
		var abandoned bool
		abandoned, err = c.store.Abandon(sctx, c.epoch, AbandonSpec{ID: a.ID, IdleSince: idle,
			Unconditional: c.cfg.Planted.UnconditionalSettle}) // planted bug: UnconditionalSettle
		switch {
		case err != nil:
			rep.Errors++
		case abandoned:
			rep.Abandoned++
		default:
			rep.StillOpen++
		}
	default:
		rep.StillOpen++
	}
}

// count increments n when a store write succeeded, else rep.Errors.
func count(rep *ReconcileReport, n *int, err error) {
	if err != nil {
		rep.Errors++
		return
	}
	*n++
}

// Run runs RunOnce every Interval, at Config.Now(), until ctx is done or
// the client crashes; it returns the cause.
func (j *ReconciliationJob) Run(ctx context.Context) error {
	t := time.NewTicker(j.c.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-j.c.life.Done():
			return ErrCrashed
		case <-t.C:
			j.RunOnce(ctx, j.c.cfg.Now())
		}
	}
}
