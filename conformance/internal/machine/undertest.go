package machine

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"time"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
	"github.com/idemcheck/idemcheck/sut/service"
)

// UnderTest is a client of CheckClient or CheckService and how it runs.
type UnderTest struct {
	// New builds the client of one sequence (CheckClient).
	New checkout.New
	// Launch starts a checkout service in another process for each
	// sequence (CheckService); its Launcher's calls are bounded by
	// CallTimeout, the run by MaxDuration, which ends at Deadline.
	Launch      service.Launcher
	CallTimeout time.Duration
	MaxDuration time.Duration
	Deadline    time.Time
	// TotalTimeout, AbandonAfter and Interval are the client's own
	// timings (conformance.Timings); zero: the reference client's.
	TotalTimeout, AbandonAfter, Interval time.Duration
	// Dialect is the API the embedded provider speaks to the client:
	// "" or "reference" (docs/provider-api.md), or "stripe" (Stripe's,
	// provider.Provider.Stripe; stripe.go).
	Dialect string
}

// overHTTP reports whether the client under test is a service in another
// process (CheckService): the run is then in real time.
func (u *UnderTest) overHTTP() bool { return u != nil && u.Launch != nil }

// OverHTTP reports whether c's client under test is a service in another
// process (CheckService): the run is then in real time.
func (c Config) OverHTTP() bool { return c.Under.overHTTP() }

// openUnderTest builds the client under test for this world.
func (w *World) openUnderTest(u *UnderTest) error {
	if err := w.serveDialect(u); err != nil {
		return err
	}
	w.ccfg.TotalTimeout = orDefault(u.TotalTimeout, w.ccfg.TotalTimeout)
	w.ccfg.AbandonAfter = orDefault(u.AbandonAfter, client.DefaultAbandonAfter)
	w.ccfg.Interval = orDefault(u.Interval, client.DefaultInterval)
	if w.loopback {
		// A service's probes go in the account it sends, as a Go client's
		// (auth.go): the proxy notes each request's Authorization.
		p, err := faults.ServeTransport(w.faults, w.ccfg.BaseURL, func(r *http.Request) { w.auth.note(r.Header.Get("Authorization")) })
		if err != nil {
			return fmt.Errorf("conformance: serve the provider on loopback: %w", err)
		}
		w.closers = append(w.closers, func() { _ = p.Close() })
		w.ccfg.BaseURL = p.URL
	}
	newClient := u.New
	if u.Launch != nil {
		newClient = w.dialService(u)
	}
	env := checkout.Env{BaseURL: w.ccfg.BaseURL, HTTPClient: w.ccfg.HTTPClient, Now: w.clock.Now, NewKey: w.keys.Key}
	if u.New != nil {
		// The probes of its keys go in the account it sends (auth.go).
		env.HTTPClient = &http.Client{Transport: authWatch{next: w.ccfg.HTTPClient.Transport, auth: &w.auth}}
		if !w.cfg.IsRemote() {
			env.APIKey = ClientAPIKey
		}
	}
	c, err := newClient(env)
	switch {
	case err != nil:
		return fmt.Errorf("conformance: the client under test did not start: %w", err)
	case c == nil:
		return fmt.Errorf("conformance: the client under test's constructor returned no client")
	}
	w.cli = c
	return nil
}

// orDefault is d, or def when d is not positive.
func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// viewOnly are the invariants that need the client's own view
// (checkout.Viewer): without it they are not judged.
var viewOnly = map[string]string{
	check.BooksBalance:            "needs the client's own view (checkout.Viewer): which intents it holds Succeeded",
	check.ReconciliationConverges: "needs the client's own view (checkout.Viewer): whether an order is Paid and no attempt Open",
}

// judged is invs without the invariants this client cannot support, which
// LeftOut then tells the run.
func (m *Machine) judged(invs []check.Invariant) []check.Invariant {
	out := map[string]string{}
	if _, ok := m.w.cli.(checkout.Viewer); !ok {
		maps.Copy(out, viewOnly)
	}
	if m.w.stripe {
		maps.Copy(out, stripeLeftOut)
	}
	if len(out) == 0 {
		return invs
	}
	m.leftOut = out
	var kept []check.Invariant
	for _, inv := range invs {
		if _, ok := out[inv.Name]; !ok {
			kept = append(kept, inv)
		}
	}
	return kept
}

// dialService is the checkout.New of CheckService: start the service
// against the loopback provider and dial it.
func (w *World) dialService(u *UnderTest) checkout.New {
	return func(env checkout.Env) (checkout.Client, error) {
		ctx, cancel := context.WithTimeout(context.Background(), service.StartTimeout+time.Second)
		defer cancel()
		base, stop, err := u.Launch(ctx, env.BaseURL)
		if err != nil {
			return nil, err
		}
		w.closers = append(w.closers, stop)
		return service.Dial(ctx, service.Config{BaseURL: base, Now: env.Now, CallTimeout: u.CallTimeout})
	}
}

// Close ends what the world started outside the process, last first.
func (w *World) Close() {
	_ = w.endOutage() // the store is not left down for the next sequence
	for i := len(w.closers) - 1; i >= 0; i-- {
		w.closers[i]()
	}
	w.closers = nil
	if c, ok := w.cli.(io.Closer); ok {
		_ = c.Close()
	}
}

// orderReader is a client that can say where one order stands (the
// service's GET /orders/{id}) without a whole view.
type orderReader interface {
	Order(ctx context.Context, id int64) (models.Order, error)
}
