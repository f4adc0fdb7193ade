package faults_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// proxyRig is the reference provider on a loopback httptest server, a
// fault Proxy in front of it, and a client that never reuses connections.
type proxyRig struct {
	hist   *models.History
	prov   *provider.Provider
	proxy  *faults.Proxy
	client *http.Client
	posts  atomic.Int32 // POSTs that reached the provider
}

func newProxyRig(t *testing.T, schedule ...faults.Fault) *proxyRig {
	t.Helper()
	r := &proxyRig{hist: models.NewHistory(), prov: provider.New(provider.Config{})}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPost {
			r.posts.Add(1)
		}
		r.prov.ServeHTTP(w, req)
	}))
	t.Cleanup(up.Close)
	p, err := faults.NewProxy(up.URL, nil, r.hist, schedule, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	r.proxy = p
	r.client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	return r
}

// post sends visa under key through the proxy, bounded by d.
func (r *proxyRig) post(t *testing.T, key string, d time.Duration) (int, http.Header, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	b, _ := json.Marshal(visa)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.proxy.URL+"/v1/charges", bytes.NewReader(b))
	req.Header.Set(models.IdempotencyKeyHeader, models.FormatKey(key))
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header, nil
}

func TestProxy_PassForwardsAndRecordsTheProvidersAnswer(t *testing.T) {
	r := newProxyRig(t)
	status, _, err := r.post(t, "k-1", 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, status)
	e := r.hist.Snapshot().Exchanges[0]
	assert.True(t, e.Forwarded)
	assert.True(t, e.ProviderDone)
	assert.Equal(t, http.StatusCreated, e.ProviderStatus)
	assert.Equal(t, "ch_000001", e.ProviderChargeID)
	assert.Equal(t, "k-1", e.Key)
	assert.False(t, e.ArrivedAt.After(e.ProviderDoneAt))
}

func TestProxy_LoseResponseChargesButCutsTheConnection(t *testing.T) {
	r := newProxyRig(t, faults.Fault{Kind: faults.KindLoseResponse})
	_, _, err := r.post(t, "k-1", 10*time.Second)
	require.Error(t, err, "the client must not get the response")
	assert.EqualValues(t, 1, r.posts.Load())
	assert.Len(t, r.prov.Charges(), 1, "the provider charged")
	e := r.hist.Snapshot().Exchanges[0]
	assert.Equal(t, http.StatusCreated, e.ProviderStatus, "the proxy saw the provider's answer")
	assert.Equal(t, 0, e.Status)
	assert.NotEmpty(t, e.Err)
}

func TestProxy_FaultsThatDoNotForward(t *testing.T) {
	for _, f := range []faults.Fault{{Kind: faults.KindReset}, {Kind: faults.KindStatus503}, {Kind: faults.KindStatus429, RetryAfter: 2}, {Kind: faults.KindDropRequest}} {
		t.Run(f.String(), func(t *testing.T) {
			r := newProxyRig(t, f)
			status, h, err := r.post(t, "k-1", 300*time.Millisecond) // a drop ends at this bound
			switch f.Kind {
			case faults.KindReset, faults.KindDropRequest:
				require.Error(t, err)
			case faults.KindStatus429:
				require.NoError(t, err)
				assert.Equal(t, 429, status)
				assert.Equal(t, "2", h.Get("Retry-After"))
			default:
				require.NoError(t, err)
				assert.Equal(t, 503, status)
			}
			assert.Zero(t, r.posts.Load(), "nothing reached the provider")
			assert.Empty(t, r.prov.Charges())
		})
	}
}

// A delay, or a hold with no partner, reaches the provider no sooner
// than its duration after the client sent it.
func TestProxy_DelayAndLoneHoldForwardAfterTheirDuration(t *testing.T) {
	for _, f := range []faults.Fault{{Kind: faults.KindDelay, Delay: 150 * time.Millisecond}, {Kind: faults.KindHold, Delay: 100 * time.Millisecond}} {
		t.Run(f.String(), func(t *testing.T) {
			r := newProxyRig(t, f)
			status, _, err := r.post(t, "k-1", 10*time.Second)
			require.NoError(t, err)
			assert.Equal(t, http.StatusCreated, status)
			e := r.hist.Snapshot().Exchanges[0]
			assert.GreaterOrEqual(t, e.ArrivedAt.Sub(e.SentAt), f.Delay)
		})
	}
}

// Hold A until B arrives: A reaches the provider only after B reached the
// proxy, however long B is late.
func TestProxy_HoldReleasesAWhenBArrives(t *testing.T) {
	r := newProxyRig(t, faults.Fault{Kind: faults.KindHold, Delay: 20 * time.Second}, faults.Fault{Kind: faults.KindPass})
	var wg sync.WaitGroup
	var statusA int
	var errA error
	wg.Go(func() { statusA, _, errA = r.post(t, "k-a", 30*time.Second) })
	// B is sent once A is recorded as held at the proxy.
	require.Eventually(t, func() bool { return len(r.hist.Snapshot().Exchanges) == 1 }, 10*time.Second, time.Millisecond)
	statusB, _, errB := r.post(t, "k-b", 30*time.Second)
	wg.Wait()
	require.NoError(t, errA)
	require.NoError(t, errB)
	assert.Equal(t, http.StatusCreated, statusA)
	assert.Equal(t, http.StatusCreated, statusB)
	exs := r.hist.Snapshot().Exchanges
	require.Len(t, exs, 2)
	assert.Equal(t, "hold (up to 20s)", exs[0].Fault)
	assert.False(t, exs[0].ArrivedAt.Before(exs[1].SentAt), "A was forwarded before B arrived")
}

func TestProxy_UnreachableUpstreamIs502(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	url := up.URL
	up.Close()
	p, err := faults.NewProxy(url, nil, models.NewHistory(), nil, 0)
	require.NoError(t, err)
	defer p.Close()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	resp, err := client.Get(p.URL + "/v1/charges?merchant_reference=x")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
}

func TestNewProxy_RefusesANonHTTPUpstream(t *testing.T) {
	_, err := faults.NewProxy("ftp://example.invalid", nil, models.NewHistory(), nil, 0)
	assert.Error(t, err)
}
