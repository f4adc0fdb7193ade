package wiremock_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
	"github.com/idemcheck/idemcheck/sut/wiremock"
)

// shared is this package's one WireMock server, started on first use and
// stopped when the tests end.
var shared wiremock.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	shared.Stop()
	os.Exit(code)
}

// fixture is the reference client against a freshly reset WireMock
// provider, through a fault Transport.
type fixture struct {
	// clock is the client's and the provider's: real time plus what the
	// test lets pass with Advance.
	clock *faults.OffsetClock
	prov  *wiremock.Provider
	hist  *models.History
	wire  *faults.Transport
	store *client.Store
	cli   *client.Client
}

// fastTimings are the seed article's pipeline on loopback (its tests cut
// the retry delay to 10 ms): attempt 2 s, total 6 s, retry delay 10 ms, 3
// retries. The attempt timeout is long enough that a loaded machine does
// not turn an answer the test counts into a timeout; tests about timeouts
// set their own.
func fastTimings(c *client.Config) {
	c.AttemptTimeout, c.TotalTimeout, c.RetryDelay, c.MaxRetries = 2*time.Second, 6*time.Second, 10*time.Millisecond, 3
}

// newFixture resets the shared server and wires a client to it. cfg may
// change the provider's configuration.
func newFixture(t *testing.T, cfg wiremock.Config, tune func(*client.Config)) *fixture {
	t.Helper()
	srv, err := shared.Get()
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{clock: &faults.OffsetClock{}, hist: models.NewHistory()}
	cfg.Now = f.clock.Now
	f.prov = wiremock.NewProvider(srv, cfg)
	if err := f.prov.Reset(); err != nil {
		t.Fatal(err)
	}
	f.wire = faults.NewTransport(f.prov, f.hist, nil)
	ccfg := client.Config{BaseURL: f.prov.BaseURL(), HTTPClient: &http.Client{Transport: f.wire}, Now: f.clock.Now}
	fastTimings(&ccfg)
	if tune != nil {
		tune(&ccfg)
	}
	f.store = client.NewStore()
	f.cli = client.New(ccfg, f.store)
	return f
}

// checkout pays a new 548.90 TRY order (the seed's) with card.
func (f *fixture) checkout(card string) client.CheckoutResult {
	o := f.cli.OpenOrder(54890, "TRY")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return f.cli.Checkout(ctx, o.ID, card)
}

// journal is WireMock's request journal, or the test fails.
func (f *fixture) journal(t *testing.T) []wiremock.Entry {
	t.Helper()
	j, err := f.prov.Server().Journal()
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// posts are the journal's POST /v1/charges entries.
func posts(j []wiremock.Entry) []wiremock.Entry {
	var out []wiremock.Entry
	for _, e := range j {
		if e.Method == http.MethodPost && e.URL == "/v1/charges" {
			out = append(out, e)
		}
	}
	return out
}

// repeat is n copies of f: a schedule for the first n requests.
func repeat(f faults.Fault, n int) []faults.Fault {
	s := make([]faults.Fault, n)
	for i := range s {
		s[i] = f
	}
	return s
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// reconcileLater lets MinAge pass and runs one reconciliation.
func (f *fixture) reconcileLater(t *testing.T) client.ReconcileReport {
	t.Helper()
	f.clock.Advance(client.DefaultMinAge + time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return f.cli.RunReconciliation(ctx, f.clock.Now())
}
