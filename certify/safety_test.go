package certify_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// counter is a loopback server in front of the reference provider that
// counts what reaches it; before, if set, may answer a request itself.
type counter struct {
	URL    string
	mu     sync.Mutex // guards the fields below
	reqs   int
	posts  int
	auth   []string
	at     []time.Time // arrival of each POST
	before func(n int, w http.ResponseWriter) bool
}

func newCounter(t *testing.T) *counter {
	t.Helper()
	c := &counter{}
	prov := provider.New(provider.Config{Retention: time.Hour})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.reqs++
		c.auth = append(c.auth, r.Header.Get("Authorization"))
		n, before := c.posts, c.before
		if r.Method == http.MethodPost {
			c.posts++
			c.at = append(c.at, time.Now())
		}
		c.mu.Unlock()
		if r.Method == http.MethodPost && before != nil && before(n, w) {
			return
		}
		prov.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	c.URL = s.URL
	return c
}

func (c *counter) counts() (reqs, posts int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reqs, c.posts
}

func TestCertify_RefusesLiveCredentialsBeforeAnyRequest(t *testing.T) {
	c := newCounter(t)
	prod := remote.ReferenceProfile()
	prod.Environment = remote.EnvProduction
	cases := map[string]remote.Config{
		"sk_live key":        {BaseURL: c.URL, APIKey: "sk_live_0123456789"},
		"rk_live key":        {BaseURL: c.URL, APIKey: "rk_live_0123456789"},
		"live second key":    {BaseURL: c.URL, APIKey: testKey, SecondAPIKey: "sk_live_abc"},
		"production profile": {BaseURL: c.URL, APIKey: testKey, Profile: prod},
	}
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := certify.Certify(t.Context(), cfg, certify.Options{})
			require.ErrorIs(t, err, remote.ErrLiveCredential)
			assert.NotContains(t, err.Error(), "0123456789", "the error names no key")
		})
	}
	reqs, _ := c.counts()
	assert.Zero(t, reqs, "a request reached the provider")
}

// A tiny budget stops the run with INCONCLUSIVE verdicts, and the provider
// never sees more than it allows.
func TestCertify_BudgetsAreNeverExceeded(t *testing.T) {
	for _, lim := range []remote.Limits{{MaxRequests: 7}, {MaxCharges: 5}, {MaxRequests: 1, MaxCharges: 1}} {
		t.Run(fmt.Sprintf("requests=%d charges=%d", lim.MaxRequests, lim.MaxCharges), func(t *testing.T) {
			c := newCounter(t)
			lim.MaxDuration = runBound
			cert, err := certify.Certify(t.Context(), remote.Config{BaseURL: c.URL, APIKey: testKey, Limits: lim}, certify.Options{})
			require.NoError(t, err)
			verdicts(t, cert)
			reqs, posts := c.counts()
			if lim.MaxRequests > 0 {
				assert.LessOrEqual(t, reqs, lim.MaxRequests)
			}
			if lim.MaxCharges > 0 {
				assert.LessOrEqual(t, posts, lim.MaxCharges)
			}
			var stopped int
			for _, r := range cert.Requirements {
				if r.Verdict == reports.Inconclusive && strings.HasPrefix(r.Reason, "budget") {
					stopped++
				}
			}
			assert.Positive(t, stopped, "some requirement must be stopped by the budget")
			for _, b := range cert.Budgets[:2] {
				used, _ := strconv.Atoi(b.Used)
				limit, _ := strconv.Atoi(b.Limit)
				assert.LessOrEqual(t, used, limit, b.Name)
			}
		})
	}
}

// A 429 from the provider itself is retried only after its Retry-After.
func TestCertify_HonoursRetryAfter(t *testing.T) {
	c := newCounter(t)
	c.before = func(n int, w http.ResponseWriter) bool {
		if n != 0 {
			return false
		}
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		return true
	}
	cert := certifyURL(t, c.URL, remote.Profile{}, certify.Options{Only: []string{certify.ReqRetries}})
	assert.Equal(t, reports.Pass, verdicts(t, cert)[certify.ReqRetries])
	c.mu.Lock()
	defer c.mu.Unlock()
	// The proxy answered its own 500, 429 and 503 without forwarding; POST
	// 0 is the first to reach the provider (answered 429), POST 1 its retry.
	require.GreaterOrEqual(t, len(c.at), 2)
	assert.GreaterOrEqual(t, c.at[1].Sub(c.at[0]), time.Second)
}

// No artefact of a run — the JSON report, the printed certification and
// configuration, the failure reasons — contains the API key, although the
// provider received it on every request.
func TestCertify_NoArtefactContainsTheAPIKey(t *testing.T) {
	c := newCounter(t)
	const second remote.APIKey = "sk_test_idemcheckSECONDkey987654"
	cfg := remote.Config{BaseURL: c.URL, APIKey: testKey, SecondAPIKey: second, Limits: remote.Limits{MaxDuration: runBound}}
	cert, err := certify.Certify(t.Context(), cfg, certify.Options{})
	require.NoError(t, err)
	v := verdicts(t, cert)
	assert.Equal(t, reports.Pass, v[certify.ReqCrossAccount], "the reference provider scopes keys per account: the second key gets a charge of its own")
	c.mu.Lock()
	assert.Contains(t, c.auth, "Bearer "+string(testKey), "the key was used")
	assert.Contains(t, c.auth, "Bearer "+string(second))
	c.mu.Unlock()

	dir := t.TempDir()
	_, err = certify.WriteJSON(dir, cert)
	require.NoError(t, err)
	printed := fmt.Sprintf("%v %+v %#v %s %q %x", cfg, cfg, cfg, cfg.APIKey, cfg.APIKey, cfg.APIKey)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "printed.txt"), []byte(printed), 0o644))
	var files int
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, k := range []remote.APIKey{testKey, second} {
			if strings.Contains(string(b), string(k)) || strings.Contains(string(b), fmt.Sprintf("%x", string(k))) {
				return errors.New(path + " contains an API key")
			}
		}
		return nil
	}))
	assert.Equal(t, 2, files)
}
