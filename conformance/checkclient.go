package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/sut/client"
	"github.com/idemcheck/idemcheck/sut/service"
)

// Timings are how long a client under test may take, which the harness
// outwaits before it judges liveness: the final phase lets TotalTimeout +
// AbandonAfter + Interval pass, reconciles, lets Interval pass and
// reconciles again. Zero fields take the reference client's defaults
// (10 s, 30 min, 1 min; seed article 000).
type Timings struct {
	// TotalTimeout bounds one checkout call, retries included.
	TotalTimeout time.Duration
	// AbandonAfter is how long reconciliation leaves an attempt open
	// without a charge before it gives the attempt up.
	AbandonAfter time.Duration
	// Interval is the reconciliation job's period.
	Interval time.Duration
}

// Option changes how CheckClient runs.
type Option func(*underTest)

// WithConfig runs CheckClient on cfg instead of FromEnv's configuration
// (the provider, report folder, bounds; Mutant may name a provider mutant
// only, and Instances must be 1).
func WithConfig(cfg Config) Option {
	return func(u *underTest) { u.cfg, u.haveCfg = cfg, true }
}

// WithTimings tells the harness the client's own timings (see Timings).
func WithTimings(t Timings) Option {
	return func(u *underTest) { u.timings = t }
}

// underTest is a client of CheckClient and how it runs.
type underTest struct {
	new      checkout.New
	launch   service.Launcher // CheckService: the client is a service in another process
	service  ServiceOptions
	deadline time.Time // CheckService: when the run's duration budget ends
	timings  Timings
	cfg      Config
	haveCfg  bool
}

// CheckClient checks the conformance property against the client newClient
// builds (once per drawn sequence, with no orders), as Run does for the
// reference client: the same actions, faults, invariants, reports, replay
// line and curl script. By default the provider is the embedded one on
// virtual time (a testing/synctest bubble), so the client must send
// through checkout.Env.HTTPClient and read time from Env.Now — a client
// with its own http.Client sends past the fault layer and the harness sees
// nothing. IDEMCHECK_PROVIDER=wiremock or a URL runs it in real time as for
// the reference client.
//
// Actions need capabilities: crashes need checkout.Restarter, and
// books-balance and reconciliation-converges need checkout.Viewer — for a
// client without a view they are "not judged" (Stats.Results says
// INCONCLUSIVE, never PASS). It returns the run's statistics.
func CheckClient(t *testing.T, newClient checkout.New, opts ...Option) *Stats {
	t.Helper()
	u := &underTest{new: newClient}
	for _, o := range opts {
		o(u)
	}
	if u.new == nil && u.launch == nil {
		t.Fatal("conformance: CheckClient needs a constructor (checkout.New)")
	}
	cfg := u.cfg
	if !u.haveCfg {
		var err error
		if cfg, err = FromEnv(); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.Instances > 1 {
		t.Fatalf("conformance: CheckClient runs one client instance (Instances=%d is the reference client's)", cfg.Instances)
	}
	cfg.Instances, cfg.under = 1, u
	return Run(t, cfg)
}

// openUnderTest builds the client under test for this world.
func (w *world) openUnderTest(u *underTest) error {
	w.ccfg.TotalTimeout = orDefault(u.timings.TotalTimeout, w.ccfg.TotalTimeout)
	w.ccfg.AbandonAfter = orDefault(u.timings.AbandonAfter, client.DefaultAbandonAfter)
	w.ccfg.Interval = orDefault(u.timings.Interval, client.DefaultInterval)
	if w.loopback {
		p, err := faults.ServeTransport(w.faults, w.ccfg.BaseURL)
		if err != nil {
			return fmt.Errorf("conformance: serve the provider on loopback: %w", err)
		}
		w.closers = append(w.closers, func() { _ = p.Close() })
		w.ccfg.BaseURL = p.URL
	}
	newClient := u.new
	if u.launch != nil {
		newClient = w.dialService(u)
	}
	c, err := newClient(checkout.Env{BaseURL: w.ccfg.BaseURL, HTTPClient: w.ccfg.HTTPClient, Now: w.clock.Now, NewKey: w.keys.Key})
	switch {
	case err != nil:
		return fmt.Errorf("conformance: the client under test did not start: %w", err)
	case c == nil:
		return fmt.Errorf("conformance: the client under test's constructor returned no client")
	}
	w.cli = c
	return nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// viewOnly are the invariants that need the client's own view
// (checkout.Viewer): without it they are not judged.
var viewOnly = map[string]string{
	BooksBalance:            "needs the client's own view (checkout.Viewer): which intents it holds Succeeded",
	ReconciliationConverges: "needs the client's own view (checkout.Viewer): whether an order is Paid and no attempt Open",
}

// judged is invs without the invariants this client cannot support; the
// first call for a client without a view tells the run's statistics.
func (m *machine) judged(invs []Invariant) []Invariant {
	if _, ok := m.w.cli.(checkout.Viewer); ok {
		return invs
	}
	m.run.stats.leaveOut(viewOnly)
	var out []Invariant
	for _, inv := range invs {
		if _, ok := viewOnly[inv.Name]; !ok {
			out = append(out, inv)
		}
	}
	return out
}

// pkgDir is the test's package directory relative to the module root
// ("conformance" for this package's own tests), where report paths and
// the replay command start from; "conformance" when no go.mod is found
// above it (a child process of a test, run in a temporary folder); ""
// outside go test (cmd/idemcheck), where paths start from the current
// directory.
var pkgDir = sync.OnceValue(func() string {
	if !testing.Testing() {
		return "" // cmd/idemcheck: paths are as the user gave them
	}
	wd, err := os.Getwd()
	if err != nil {
		return "conformance"
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil {
				return "conformance"
			}
			return rel
		}
		if filepath.Dir(dir) == dir {
			return "conformance"
		}
	}
})
