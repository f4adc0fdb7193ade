package check

import (
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// NoStaleKey names the invariant that the client never sends a key the
// provider may have forgotten.
const NoStaleKey = "no-stale-key"

// checkNoStaleKey: no POST the client sends carries a key whose first send
// is more than World.Retention (the provider's published retention window,
// 24 h by default) before this one. Past the window the provider may
// rightly have forgotten the key and would charge again
// (draft-ietf-httpapi-idempotency-key-header, "Idempotency Key Validity
// and Expiry"; issue 10 item 7). The reference client keeps a margin below
// it (client.Config.StaleKeyMargin, 1 h) and reconciles first. Probes are
// the harness's own requests and are not judged.
func checkNoStaleKey(w World) Finding {
	return noStaleKeyOf(w, clientPostsOf(w), map[string]time.Time{})
}

// noStaleKeyOf is no-stale-key over the client's creates exs, after those
// whose first sends first holds.
func noStaleKeyOf(w World, exs []models.Exchange, first map[string]time.Time) Finding {
	if w.Retention <= 0 {
		return Finding{}
	}
	n := newNames(w)
	for _, e := range exs {
		if !e.HasKey || e.Key == "" {
			continue
		}
		f, seen := first[e.Key]
		if !seen || e.SentAt.Before(f) {
			first[e.Key] = e.SentAt
			continue
		}
		if age := e.SentAt.Sub(f); age > w.Retention {
			return Violation(NoStaleKey, "%s resent its key %v after its first send, past the %v retention window",
				n.of(e.MerchantReference), age, w.Retention)
		}
	}
	return Finding{}
}
