package certify_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// TestCertify_NotTheDialectIsInconclusive: a server that is not the
// provider (404 to everything, like a wrong base URL) or a provider asked
// in the wrong dialect gets one find-by-reference and nothing else, and
// every requirement is INCONCLUSIVE with that exchange as evidence — not
// FAIL on a 404 or a 501. Regression: such a server was certified FAIL on
// missing-key-refused and retries-after-5xx-429-no-duplicate after 191
// requests.
func TestCertify_NotTheDialectIsInconclusive(t *testing.T) {
	prov := provider.New(provider.Config{})
	cases := map[string]struct {
		handler http.Handler
		dialect string
	}{
		"404 to everything":                  {http.NotFoundHandler(), "reference"},
		"reference provider, stripe dialect": {prov, "stripe"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var reqs atomic.Int64
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				reqs.Add(1)
				tc.handler.ServeHTTP(w, r)
			}))
			t.Cleanup(s.Close)
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			cert, err := certify.Certify(ctx, remote.Config{BaseURL: s.URL, APIKey: testKey, Dialect: tc.dialect, Limits: remote.Limits{MaxDuration: time.Minute}}, certify.Options{})
			require.ErrorIs(t, err, certify.ErrDialect)
			assert.Contains(t, err.Error(), "IDEMCHECK_DIALECT")
			assert.EqualValues(t, 1, reqs.Load(), "only the preflight lookup may be sent")
			require.Len(t, cert.Requirements, len(certify.Requirements()))
			for _, r := range cert.Requirements {
				assert.Equal(t, reports.Inconclusive, r.Verdict, "%s: %s", r.ID, r.Reason)
				assert.Contains(t, r.Reason, "not tested: ")
				assert.Len(t, r.Evidence, 1, r.ID)
			}
			assert.Equal(t, reports.Inconclusive, cert.Overall())
		})
	}
}

// TestCertify_ReplayHeaderThePromisePublished: a provider whose profile
// publishes a replay header but whose replays lack it fails
// replay-returns-first-response, saying so; with no header published the
// same provider passes it. Regression: the profile's replay_header was
// never checked.
func TestCertify_ReplayHeaderThePromisePublished(t *testing.T) {
	prov := provider.New(provider.Config{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prov.ServeHTTP(dropHeader{w, models.ReplayedHeader}, r)
	}))
	t.Cleanup(s.Close)
	only := certify.Options{Only: []string{certify.ReqReplay}}
	published := remote.ReferenceProfile()
	require.Equal(t, models.ReplayedHeader, published.ReplayHeader)
	cert := certifyURL(t, s.URL, published, only)
	assert.Equal(t, reports.Fail, cert.Requirements[0].Verdict)
	assert.Equal(t, "the replay carried no Idempotent-Replayed header, which the profile publishes (profile: replay_header); the decline's replay carried no Idempotent-Replayed header, which the profile publishes (profile: replay_header)", cert.Requirements[0].Reason,
		"the success's replay and the decline's, each listed (issue 24, item 4)")

	none := remote.ReferenceProfile()
	none.ReplayHeader = ""
	cert = certifyURL(t, s.URL, none, only)
	assert.Equal(t, reports.Pass, cert.Requirements[0].Verdict, cert.Requirements[0].Reason)

	// A replay marked false is not marked; nor is a decline's replay
	// without the header (regression, review: only the success replay's
	// header was looked at, and only for presence).
	falsely := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := setHeader{w, models.ReplayedHeader, "false"}
		prov.ServeHTTP(rw, r)
	}))
	t.Cleanup(falsely.Close)
	cert = certifyURL(t, falsely.URL, published, only)
	assert.Equal(t, "the replay carried Idempotent-Replayed: false, not a replay mark (profile: replay_header); the decline's replay carried Idempotent-Replayed: false, not a replay mark (profile: replay_header)", cert.Requirements[0].Reason)
	declines := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte("tok_chargeDeclined")) {
				prov.ServeHTTP(dropHeader{w, models.ReplayedHeader}, r)
				return
			}
		}
		prov.ServeHTTP(w, r)
	}))
	t.Cleanup(declines.Close)
	cert = certifyURL(t, declines.URL, published, only)
	assert.Equal(t, reports.Fail, cert.Requirements[0].Verdict)
	assert.Equal(t, "the decline's replay carried no Idempotent-Replayed header, which the profile publishes (profile: replay_header)", cert.Requirements[0].Reason)
}

// setHeader is a ResponseWriter that sends header name with value v
// whenever the handler sets it.
type setHeader struct {
	http.ResponseWriter
	name, v string
}

func (s setHeader) WriteHeader(code int) {
	if s.Header().Get(s.name) != "" {
		s.Header().Set(s.name, s.v)
	}
	s.ResponseWriter.WriteHeader(code)
}

// dropHeader is a ResponseWriter that never sends the header name.
type dropHeader struct {
	http.ResponseWriter
	name string
}

func (d dropHeader) WriteHeader(code int) {
	d.Header().Del(d.name)
	d.ResponseWriter.WriteHeader(code)
}

func (d dropHeader) Write(b []byte) (int, error) {
	d.Header().Del(d.name)
	return d.ResponseWriter.Write(b)
}
