package check

import "github.com/idemcheck/idemcheck/models"

// Coverage counts, at the end of one sequence, the subjects of each
// invariant in w: the keyed creates key-format judged, the intents
// one-key-per-intent judged, the replays replay-consistent judged and so
// on, by invariant name (the run's summary adds them up).
func Coverage(w World) map[string]int {
	c := map[string]int{}
	refs := map[string]bool{}
	for _, e := range postsOf(w) {
		c[NoUnsafeRetry]++
		if e.HasKey {
			c[KeyFormat]++
		}
		if e.MerchantReference != "" {
			refs[e.MerchantReference] = true
		}
		if e.Unknown() {
			c[ConflictNeverFinal]++
		}
	}
	c[OneKeyPerIntent] = len(refs)
	orders := map[int64]bool{} // orders on the wire: a client without a view has no w.Orders
	for ref := range refs {
		orders[orderOf(ref)] = true
	}
	c[AtMostOneChargePerOrder] = max(len(w.Orders), len(orders))
	c[BooksBalance] = len(w.Charges)
	for _, v := range replaySpec(w) {
		switch v.expect.Kind {
		case models.ExpectReplay, models.ExpectConflict:
			c[ReplayConsistent]++
		case models.ExpectMismatch:
			c[MismatchRejected]++
		}
	}
	for _, a := range w.Attempts {
		if a.Status == models.AttemptAbandoned || !a.LastCheckedAt.IsZero() {
			c[ReconciliationConverges]++
		}
	}
	countProbeShapes(w, c)
	sent := map[string]bool{}
	for _, e := range clientPostsOf(w) {
		if e.HasKey && sent[e.Key] {
			c[NoStaleKey]++
		}
		sent[e.Key] = true
	}
	for _, e := range w.History.Exchanges {
		if e.IsRefund() {
			c[KeyScopedPerEndpoint]++
		}
	}
	c[AtMostOneRefundPerIntent] = len(w.RefundIntents)
	return c
}

// countProbeShapes adds to c, for the summary, the probes of another shape
// that showed something (shapesShown: judged under a key that charged;
// equivalent-requests-agree) and the probes of another account
// (key-scoped-per-account) that reached the provider.
func countProbeShapes(w World, c map[string]int) {
	c[EquivalentRequestsAgree] += shapesShown(w)
	for _, e := range w.History.Exchanges {
		if e.IsPost() && e.ProviderDone && ProbeKind(w.History, e) == ProbeOtherAccount {
			c[KeyScopedPerAccount]++
		}
	}
}
