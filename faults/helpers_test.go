package faults_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// baseURL is never resolved: every request ends in the in-process wire.
const baseURL = "http://provider.idemcheck.invalid"

// visa is a valid charge request: 548.90 TRY on the approving test card.
var visa = models.ChargeRequest{
	Amount:            54890,
	Currency:          "TRY",
	Source:            "tok_visa",
	Description:       "Bookstore order 1001",
	MerchantReference: "bookstore-1001-a",
}

// bubbleBound is the real time a bubble may take. Goroutines blocked on a
// mutex are not durably blocked, so a broken lock protocol in InProcess
// stops virtual time instead of deadlocking the bubble; without a bound
// such a test would hang until -timeout.
const bubbleBound = time.Minute

// inBubble runs f in a testing/synctest bubble, crashing with every
// goroutine's stack if the bubble has not returned within bubbleBound of
// real time.
func inBubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	name := t.Name()
	watchdog := time.AfterFunc(bubbleBound, func() { // started outside the bubble: real time
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		panic(name + ": synctest bubble still running after " + bubbleBound.String() + " of real time\n" + string(buf))
	})
	defer watchdog.Stop()
	synctest.Test(t, f)
}

// rig is the reference provider behind InProcess behind a fault Transport,
// all recording into one history, reached through an ordinary http.Client.
type rig struct {
	hist   *models.History
	wire   *faults.InProcess
	prov   *provider.Provider
	tr     *faults.Transport
	client *http.Client
}

// newRig wires a rig whose provider takes processing per processed request
// and whose wire applies schedule.
func newRig(processing time.Duration, schedule ...faults.Fault) *rig {
	h := models.NewHistory()
	wire := &faults.InProcess{History: h, Processing: processing}
	prov := provider.New(provider.Config{BeforeCommit: wire.BeforeCommit})
	wire.Handler = prov
	tr := faults.NewTransport(wire, h, schedule)
	return &rig{hist: h, wire: wire, prov: prov, tr: tr, client: &http.Client{Transport: tr}}
}

// result is what the client got for one request. It is built without a
// *testing.T so that goroutines may produce it.
type result struct {
	status int
	header http.Header
	body   []byte
	err    error
	at     time.Time // when the client got it
}

func (r *rig) do(req *http.Request) result {
	resp, err := r.client.Do(req)
	if err != nil {
		return result{err: err, at: time.Now()}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return result{status: resp.StatusCode, header: resp.Header, body: b, err: err, at: time.Now()}
}

// post sends cr as POST /v1/charges with keyHeader as the Idempotency-Key
// header value ("" sends none).
func (r *rig) post(ctx context.Context, keyHeader string, cr models.ChargeRequest) result {
	return r.do(newPost(ctx, keyHeader, cr))
}

// get sends GET /v1/charges?merchant_reference=ref.
func (r *rig) get(ctx context.Context, ref string) result {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/v1/charges?merchant_reference="+ref, nil)
	if err != nil {
		panic(err) // constant method and URL
	}
	return r.do(req)
}

func newPost(ctx context.Context, keyHeader string, cr models.ChargeRequest) *http.Request {
	b, err := json.Marshal(cr)
	if err != nil {
		panic(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/v1/charges", bytes.NewReader(b))
	if err != nil {
		panic(err) // constant method and URL
	}
	req.Header.Set("Content-Type", "application/json")
	if keyHeader != "" {
		req.Header.Set(models.IdempotencyKeyHeader, keyHeader)
	}
	return req
}

// exchanges returns the history's exchanges, requiring exactly n.
func exchanges(t *testing.T, h *models.History, n int) []models.Exchange {
	t.Helper()
	exs := h.Snapshot().Exchanges
	require.Len(t, exs, n)
	for i, e := range exs {
		require.Equal(t, i+1, e.ID)
	}
	return exs
}

// decodeCharge decodes a charge body.
func decodeCharge(t *testing.T, body []byte) models.Charge {
	t.Helper()
	var c models.Charge
	require.NoError(t, json.Unmarshal(body, &c), "body %s", body)
	require.NotEmpty(t, c.ID, "body %s", body)
	return c
}

// requireSpecAllows replays the provider's events through models.Spec in
// history order and requires every create answer to be one it allows.
func requireSpecAllows(t *testing.T, exs []models.Exchange) {
	t.Helper()
	spec := models.NewSpec(provider.DefaultRetention)
	expects := map[int]models.Expect{}
	for _, ev := range models.ProviderEvents(exs) {
		e := ev.Ex
		if !e.IsPost() {
			continue
		}
		if ev.Arrival {
			var x models.Expect
			spec, x = spec.Arrive(e.Key, e.HasKey, e.Fingerprint, e.ArrivedAt)
			expects[e.ID] = x
			continue
		}
		x := expects[e.ID]
		require.Truef(t, x.Matches(e.ProviderStatus, e.ProviderBodyDigest),
			"exchange %d: provider answered %d, specification expected %s", e.ID, e.ProviderStatus, x)
		if x.Kind == models.ExpectProcess {
			spec = spec.Complete(e.Key, e.ProviderStatus, e.ProviderBodyDigest, e.ProviderDoneAt)
		}
	}
}
