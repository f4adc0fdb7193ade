package wiremock_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/wiremock"
	"github.com/stretchr/testify/require"
	gowiremock "github.com/wiremock/go-wiremock"
)

// answered is one answer of the provider, as a test reads it.
type answered struct {
	status   int
	body     string
	replayed bool
}

// send sends one request straight through the Provider (no faults),
// with the key quoted unless it is "".
func send(t *testing.T, p *wiremock.Provider, method, path, key, body string) answered {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, p.BaseURL()+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set(models.IdempotencyKeyHeader, models.FormatKey(key))
	}
	resp, err := (&http.Client{Transport: p}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	return answered{status: resp.StatusCode, body: readAll(t, resp), replayed: resp.Header.Get(models.ReplayedHeader) == "true"}
}

const chargeBody = `{"amount":54890,"currency":"TRY","source":"tok_visa","merchant_reference":"order-1"}`

func refundBody(charge string, amount int, ref string) string {
	b, _ := json.Marshal(models.RefundRequest{Charge: charge, Amount: int64(amount), MerchantReference: ref})
	return string(b)
}

func refunds(t *testing.T, p *wiremock.Provider) []models.Refund {
	t.Helper()
	rs, err := p.Refunds()
	require.NoError(t, err)
	return rs
}

// The refunds endpoint on WireMock (docs/provider-api.md, POST /v1/refunds):
// a refund key of its own, replayed; 422 for another body under it; 402
// for more than is left of the charge, counting the refunds made; 404 for
// a charge the provider does not hold; 400 without a key; a charge's key
// kept apart (a refund of its own, refused here for too much); and
// GET /v1/refunds?merchant_reference= answering the refunds held.
func TestRefundsEndpoint(t *testing.T) {
	f := newFixture(t, wiremock.Config{}, nil)
	p := f.prov
	require.Equal(t, http.StatusCreated, send(t, p, "POST", "/v1/charges", "ck", chargeBody).status)

	first := send(t, p, "POST", models.RefundsPath, "rk", refundBody("ch_000001", 20000, "refund-1-a"))
	require.Equal(t, http.StatusCreated, first.status, first.body)
	require.Contains(t, first.body, `"id":"re_000001"`)
	again := send(t, p, "POST", models.RefundsPath, "rk", refundBody("ch_000001", 20000, "refund-1-a"))
	require.Equal(t, answered{status: http.StatusCreated, body: first.body, replayed: true}, again)
	require.Equal(t, http.StatusUnprocessableEntity, send(t, p, "POST", models.RefundsPath, "rk", refundBody("ch_000001", 1, "refund-1-a")).status)

	tooMuch := send(t, p, "POST", models.RefundsPath, "rk2", refundBody("ch_000001", 34891, "refund-1-b"))
	require.Equal(t, http.StatusPaymentRequired, tooMuch.status, tooMuch.body)
	require.Contains(t, tooMuch.body, "amount_too_large")
	require.Equal(t, http.StatusCreated, send(t, p, "POST", models.RefundsPath, "rk3", refundBody("ch_000001", 34890, "refund-1-c")).status)
	require.Equal(t, http.StatusNotFound, send(t, p, "POST", models.RefundsPath, "rk4", refundBody("ch_000009", 1, "refund-9-a")).status)
	require.Equal(t, http.StatusBadRequest, send(t, p, "POST", models.RefundsPath, "", refundBody("ch_000001", 1, "refund-1-d")).status)

	probe := send(t, p, "POST", models.RefundsPath, "ck", refundBody("ch_000001", 54891, "probe-1"))
	require.Equal(t, http.StatusPaymentRequired, probe.status, "a charge's key on /v1/refunds is a refund key of its own: %s", probe.body)
	require.False(t, probe.replayed)

	found := send(t, p, "GET", models.RefundsPath+"?merchant_reference=refund-1-a", "", "")
	require.Equal(t, http.StatusOK, found.status)
	require.JSONEq(t, `{"data":[`+first.body+`]}`, found.body)
	none := send(t, p, "GET", models.RefundsPath+"?merchant_reference=refund-1-b", "", "")
	require.JSONEq(t, `{"data":[]}`, none.body)

	rs := refunds(t, p)
	require.Len(t, rs, 2)
	require.Equal(t, []int64{20000, 34890}, []int64{rs[0].Amount, rs[1].Amount})
}

// A refund whose answer WireMock cuts (lose-response, each of its four
// faults) was processed: the provider holds it once its stub is served,
// and the retry under the key replays it rather than refunding again; a
// refund that met a 503 fault was not processed, and its retry is.
func TestRefundsLostResponse(t *testing.T) {
	for _, wf := range wiremock.WireFaults {
		t.Run(string(wf), func(t *testing.T) {
			f := newFixture(t, wiremock.Config{WireFault: func(int) gowiremock.Fault { return wf }}, nil)
			require.Equal(t, http.StatusCreated, send(t, f.prov, "POST", "/v1/charges", "ck", chargeBody).status)
			f.wire.Schedule([]faults.Fault{{Kind: faults.KindLoseResponse}, {Kind: faults.KindPass}})
			post := func() (*http.Response, error) {
				req, _ := http.NewRequest(http.MethodPost, f.prov.BaseURL()+models.RefundsPath, strings.NewReader(refundBody("ch_000001", 100, "refund-1-a")))
				req.Header.Set(models.IdempotencyKeyHeader, models.FormatKey("rk"))
				return f.wire.RoundTrip(req)
			}
			if resp, err := post(); err == nil {
				_, rerr := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.Error(t, rerr, "the answer must not arrive whole")
			}
			require.Len(t, refunds(t, f.prov), 1, "the lost answer's refund is held")
			resp, err := post()
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, []any{http.StatusCreated, "true"}, []any{resp.StatusCode, resp.Header.Get(models.ReplayedHeader)})
			require.Len(t, refunds(t, f.prov), 1, "the retry replays")
		})
	}
	f := newFixture(t, wiremock.Config{}, nil)
	send(t, f.prov, "POST", "/v1/charges", "ck", chargeBody)
	f.wire.Schedule([]faults.Fault{{Kind: faults.KindStatus503}})
	req, _ := http.NewRequest(http.MethodPost, f.prov.BaseURL()+models.RefundsPath, strings.NewReader(refundBody("ch_000001", 100, "refund-1-a")))
	req.Header.Set(models.IdempotencyKeyHeader, models.FormatKey("rk"))
	resp, err := f.wire.RoundTrip(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Empty(t, refunds(t, f.prov))
	again := send(t, f.prov, "POST", models.RefundsPath, "rk", refundBody("ch_000001", 100, "refund-1-a"))
	require.Equal(t, answered{status: http.StatusCreated, body: again.body}, again, "processed now, not a replay")
}

// The two planted refund bugs answer as the reference provider's mutants
// of the same names: the charge's scenario replayed on /v1/refunds
// (refund-replays-charge), and a refund key that is not kept, so the same
// request refunds twice (refund-not-idempotent). Without them the same
// requests answer a refund of their own, once.
func TestRefundsPlanted(t *testing.T) {
	f := newFixture(t, wiremock.Config{Planted: wiremock.Planted{RefundReplaysCharge: true}}, nil)
	charge := send(t, f.prov, "POST", "/v1/charges", "ck", chargeBody)
	got := send(t, f.prov, "POST", models.RefundsPath, "ck", refundBody("ch_000001", 54891, "probe-1"))
	require.Equal(t, answered{status: http.StatusCreated, body: charge.body, replayed: true}, got)

	f = newFixture(t, wiremock.Config{Planted: wiremock.Planted{RefundNotIdempotent: true}}, nil)
	send(t, f.prov, "POST", "/v1/charges", "ck", chargeBody)
	for range 2 {
		require.Equal(t, http.StatusCreated, send(t, f.prov, "POST", models.RefundsPath, "rk", refundBody("ch_000001", 100, "refund-1-a")).status)
	}
	require.Len(t, refunds(t, f.prov), 2)
}
