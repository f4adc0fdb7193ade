package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/mutants"
	"github.com/idemcheck/idemcheck/sut/provider/server"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// BenchmarkCertifyMutant is what a certification spends to find each
// provider mutant (docs/mutants.md; idemcheck help serve) served over
// loopback, as idemcheck serve -mutant NAME -processing P serves it, at
// P = 0 and 300 ms: a sub-benchmark <mutant>/processing=<P>, whose op
// certifies it as idemcheck certify --profile profiles/reference.json
// does with two accounts' keys (IDEMCHECK_API_KEY and _2, unless set) and
// the other settings at their defaults (IDEMCHECK_CONCURRENCY
// sequences in flight), rapid seed 1 (-rapid.seed), until the first
// detection: the first requirement that FAILs (the rest are not sent),
// else the property's first violation (its shrink is not run). Not a
// timed test: its numbers are counts. Run it with -benchtime 1x (make
// bench-certify); IDEMCHECK_BENCH_MUTANTS, a comma-separated list of
// names, selects mutants, IDEMCHECK_BENCH_PROCESSING a comma-separated
// list of durations the processing times.
//
// Metrics: requests-to-detect and charges-to-detect (the requests and
// creates the budget meter had counted when the detection was made;
// with sequences in flight, those sent beside the detecting one count),
// detected (1, or 0 when the run's budgets or checks ended first: then
// the counts are what the whole run spent), by-property (1 when no
// requirement found it), s-to-detect (wall seconds: for reading only).
func BenchmarkCertifyMutant(b *testing.B) {
	profile, err := filepath.Abs(filepath.Join("..", "..", "..", "profiles", "reference.json"))
	if err != nil {
		b.Fatal(err)
	}
	seed := seedOr("1")
	for _, processing := range benchProcessing(b) {
		for _, name := range benchProviderMutants(b) {
			b.Run(fmt.Sprintf("%s/processing=%s", name, processing), func(b *testing.B) {
				withRapid(b, map[string]string{"rapid.seed": seed, "rapid.nofailfile": "true"})
				var d *certDetection
				for b.Loop() {
					d = certifyUntilFound(b, name, processing, profile)
				}
				b.ReportMetric(float64(d.requests), "requests-to-detect")
				b.ReportMetric(float64(d.charges), "charges-to-detect")
				b.ReportMetric(boolMetric(d.found), "detected")
				b.ReportMetric(boolMetric(d.byProperty), "by-property")
				b.ReportMetric(d.took.Seconds(), "s-to-detect")
			})
		}
	}
}

// certDetection is what one certification of a mutant showed.
type certDetection struct {
	mu                sync.Mutex // guards the rest: the property's sequences note it at once
	found, byProperty bool
	requests, charges int
	took              time.Duration
}

// note records the first detection, with what meter had counted then.
func (d *certDetection) note(meter *remote.Meter, byProperty bool, since time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.found {
		return
	}
	d.requests, d.charges = meter.Used()
	d.found, d.byProperty, d.took = true, byProperty, time.Since(since)
}

// certifyUntilFound certifies mutant served with processing until the
// first detection (BenchmarkCertifyMutant).
func certifyUntilFound(b *testing.B, mutant string, processing time.Duration, profile string) *certDetection {
	h, err := server.Handler(mutant, 0, processing)
	if err != nil {
		b.Fatal(err)
	}
	s, err := server.Start(h)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	rc, err := remote.FromEnv()
	if err != nil {
		b.Fatal(err)
	}
	prof, err := remote.LoadProfile(profile)
	if err != nil {
		b.Fatal(err)
	}
	rc.BaseURL, rc.Profile, rc.ProfilePath = s.URL, prof, profile
	if rc.APIKey == "" && rc.SecondAPIKey == "" {
		// Two accounts, as docs/profiles.md advises: without a second key
		// key-not-replayed-across-accounts is NOT JUDGED, and
		// global-key-scope never found.
		rc.APIKey, rc.SecondAPIKey = "sk_test_idemcheck_merchant_a", "sk_test_idemcheck_merchant_b"
	}
	prov, err := remote.New(rc)
	if err != nil {
		b.Fatal(err)
	}
	d := &certDetection{}
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	_, err = certify.Run(ctx, prov, certify.Options{Progress: func(r reports.RequirementResult) {
		if r.Verdict == reports.Fail {
			d.note(prov.Meter(), false, start)
			cancel() // the first detection: the other requirements are not sent
		}
	}})
	cancel()
	if d.found {
		return d
	}
	if err != nil && (errors.Is(err, certify.ErrDialect) || errors.Is(err, certify.ErrUnreachable) || errors.Is(err, certify.ErrKeyForm)) {
		b.Fatalf("%s: %v", mutant, err)
	}
	var stats *Stats
	inTest(b, b.Name(), func(t *testing.T) {
		cfg, err := FromEnv()
		if err != nil {
			t.Fatal(err)
		}
		cfg.Provider, cfg.Remote, cfg.ProviderStore, cfg.Mutant = prov.BaseURL(), prov, "", ""
		cfg.ReportDir, cfg.Reproduce, cfg.Baseline = t.TempDir(), 0, nil
		cfg.OnFound = func(string) {
			d.note(prov.Meter(), true, start)
			prov.Meter().Interrupt("benchmark: detected") // no shrink: what it costs is another question
		}
		stats, _ = runStats(t, "property", cfg)
	})
	if !d.found {
		d.requests, d.charges = prov.Meter().Used()
		d.took = time.Since(start)
		if stats == nil {
			b.Fatalf("%s at %s: the property did not start", mutant, processing)
		}
		why := "its checks passed"
		if stats.Stopped() != "" {
			why = "it stopped: " + stats.Stopped()
		}
		b.Logf("%s at %s: not detected in %d sequences (%s)", mutant, processing, stats.Sequences(), why)
	}
	return d
}

// benchProviderMutants are the provider mutants idemcheck serve serves
// in memory (IDEMCHECK_BENCH_MUTANTS selects some).
func benchProviderMutants(b *testing.B) []string {
	want := map[string]bool{}
	for _, n := range strings.Split(os.Getenv("IDEMCHECK_BENCH_MUTANTS"), ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	var out []string
	for _, m := range mutants.All() {
		if m.Provider != nil && (len(want) == 0 || want[m.Name]) {
			out = append(out, m.Name)
			delete(want, m.Name)
		}
	}
	for n := range want {
		b.Fatalf("IDEMCHECK_BENCH_MUTANTS: %s is not a provider mutant idemcheck serve serves in memory", n)
	}
	return out
}

// benchProcessing are the processing times (IDEMCHECK_BENCH_PROCESSING,
// default 0 and 300 ms).
func benchProcessing(b *testing.B) []time.Duration {
	v := os.Getenv("IDEMCHECK_BENCH_PROCESSING")
	if v == "" {
		return []time.Duration{0, 300 * time.Millisecond}
	}
	var out []time.Duration
	for _, s := range strings.Split(v, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil || d < 0 {
			b.Fatalf("IDEMCHECK_BENCH_PROCESSING: %q is not a duration", s)
		}
		out = append(out, d)
	}
	return out
}

func boolMetric(v bool) float64 {
	if v {
		return 1
	}
	return 0
}
