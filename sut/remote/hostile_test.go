package remote_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/internal/hostile"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/remote"
)

const hostileKey remote.APIKey = "sk_test_hostileSECRET0123"

// against is a provider for the hostile server s with lim.
func against(t *testing.T, s *hostile.Server, lim remote.Limits) *remote.Provider {
	t.Helper()
	p, err := remote.New(remote.Config{BaseURL: s.URL, APIKey: hostileKey, Limits: lim})
	require.NoError(t, err)
	return p
}

// create sends one docs/provider-api.md create with a fresh key through p.
func create(ctx context.Context, p *remote.Provider, ref string) (*http.Response, error) {
	body := `{"amount":1099,"currency":"USD","source":"tok_visa","merchant_reference":"` + ref + `"}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://provider/v1/charges", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set(models.IdempotencyKeyHeader, models.FormatKey(ref+"-key"))
	req.Header.Set("Content-Type", "application/json")
	return p.Transport().RoundTrip(req)
}

// Regression (issue 11): the find-by-reference decoder read an endless
// answer without a limit (the test process died out of memory). Now the
// answer is cut at the cap and the error says oversize.
func TestProvider_EndlessAnswerIsOversize(t *testing.T) {
	s := hostile.Start(t, hostile.Options{Mode: hostile.Endless})
	p := against(t, s, remote.Limits{MaxDuration: time.Minute, MaxBody: 64 << 10})
	_, err := p.Find(t.Context(), "idemcheck-x")
	require.ErrorIs(t, err, faults.ErrOversize)
	assert.True(t, strings.HasPrefix(err.Error(), "remote: oversize:"), "the cause comes first: %v", err)
	assert.Contains(t, err.Error(), "64 KiB")
}

// Regression (issue 11): the provider's transport kept connections alive
// and net/http silently resent a GET, or a POST with an Idempotency-Key,
// when the provider closed a reused connection after reading the request:
// the provider received more than the meter counted. Against the
// keep-alive trap, sequential and concurrent requests (double clicks)
// reach the provider exactly as often as the meter allowed.
func TestProvider_NoSilentResends(t *testing.T) {
	s := hostile.Start(t, hostile.Options{Mode: hostile.KeepAliveTrap})
	lim := remote.Limits{MaxRequests: 30, MaxCharges: 12, MaxDuration: time.Minute}
	p := against(t, s, lim)
	for i := range 10 {
		_, _ = p.Find(t.Context(), "idemcheck-seq")
		if resp, err := create(t.Context(), p, "seq"+string(rune('a'+i))); err == nil {
			_ = resp.Body.Close()
		}
	}
	var wg sync.WaitGroup
	for i := range 20 { // double clicks: one key, at once
		wg.Go(func() {
			if resp, err := create(t.Context(), p, "double"); err == nil {
				_ = resp.Body.Close()
			}
			_ = i
		})
	}
	wg.Wait()
	reqs, posts, conns := s.Counts()
	used, usedPosts := p.Meter().Used()
	t.Logf("provider received %d requests (%d creates) on %d connections; meter: %d (%d)", reqs, posts, conns, used, usedPosts)
	assert.Equal(t, used, reqs, "every request the provider received was metered")
	assert.LessOrEqual(t, reqs, lim.MaxRequests)
	assert.LessOrEqual(t, posts, lim.MaxCharges)
	assert.Equal(t, reqs, conns, "one connection per request: none reused")
}

// Regression (issue 11): redirects were followed (through the dialect,
// back onto the base URL, ten times). A 3xx is the answer: one request,
// nothing sent to where it points, Location kept as evidence only.
func TestProvider_RedirectIsAnAnswerNotAHop(t *testing.T) {
	target := hostile.Start(t, hostile.Options{})
	s := hostile.Start(t, hostile.Options{Mode: hostile.Redirect, Target: target.URL})
	p := against(t, s, remote.Limits{MaxDuration: time.Minute})
	c := &http.Client{Transport: p.Transport()} // follows redirects, as a client under test may
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://provider/v1/charges?merchant_reference=x", nil)
	require.NoError(t, err)
	resp, err := c.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusTemporaryRedirect, resp.StatusCode)
	assert.Empty(t, resp.Header.Get("Location"))
	assert.Contains(t, resp.Header.Get(remote.RedirectHeader), target.URL)
	assert.NotContains(t, resp.Header.Get(remote.RedirectHeader), string(hostileKey), "the echoed key is scrubbed")
	reqs, _, _ := s.Counts()
	hops, _, _ := target.Counts()
	assert.Equal(t, 1, reqs)
	assert.Zero(t, hops, "nothing went to the redirect's target")
	_, err = p.Find(t.Context(), "x")
	assert.ErrorContains(t, err, "redirect")
}

// Regression (issue 11): Retry-After held only the retry that read it;
// after 429 Retry-After: 3600 the run went on sending. Now the meter
// holds every request: a wait that fits is waited out, one longer than the
// duration budget left refuses every later request, unsent.
func TestProvider_RetryAfterHoldsTheWholeRun(t *testing.T) {
	t.Run("longer than the run", func(t *testing.T) {
		s := hostile.Start(t, hostile.Options{Mode: hostile.RateLimit, RetryAfter: "3600"})
		p := against(t, s, remote.Limits{MaxDuration: time.Minute})
		_, err := p.Find(t.Context(), "a")
		require.ErrorIs(t, err, remote.ErrUnavailable)
		for range 5 {
			_, err = p.Find(t.Context(), "b")
			var he *remote.HoldError
			require.ErrorAs(t, err, &he)
			assert.Equal(t, time.Hour, he.Asked)
		}
		_, err = create(t.Context(), p, "c")
		require.ErrorIs(t, err, remote.ErrBudget)
		assert.ErrorContains(t, p.Meter().Held(), "Retry-After")
		reqs, _, _ := s.Counts()
		assert.Equal(t, 1, reqs, "nothing was sent after the 429")
	})
	t.Run("the longest of several", func(t *testing.T) {
		// Regression (breaker, issue 11): of "Retry-After: 1" and
		// "Retry-After: 3600" only the first was read, and the next
		// request left a second later.
		s := hostile.Start(t, hostile.Options{Mode: hostile.RateLimit, RetryAfter: "1\n3600"})
		p := against(t, s, remote.Limits{MaxDuration: time.Minute})
		_, err := p.Find(t.Context(), "a")
		require.ErrorIs(t, err, remote.ErrUnavailable)
		_, err = p.Find(t.Context(), "b")
		var he *remote.HoldError
		require.ErrorAs(t, err, &he)
		assert.Equal(t, time.Hour, he.Asked)
		reqs, _, _ := s.Counts()
		assert.Equal(t, 1, reqs, "nothing was sent after the 429")
	})
	t.Run("a wait that fits", func(t *testing.T) {
		s := hostile.Start(t, hostile.Options{Mode: hostile.RateLimit, RetryAfter: "1", Until: 1})
		p := against(t, s, remote.Limits{MaxDuration: time.Minute})
		_, err := p.Find(t.Context(), "a")
		require.ErrorIs(t, err, remote.ErrUnavailable)
		_, err = p.Find(t.Context(), "b")
		require.NoError(t, err)
		at := s.Arrivals()
		require.Len(t, at, 2)
		assert.GreaterOrEqual(t, at[1].Sub(at[0]), time.Second, "the second request left after Retry-After")
	})
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for v, want := range map[string]struct {
		d  time.Duration
		ok bool
	}{
		"3":                               {3 * time.Second, true},
		" 120 ":                           {2 * time.Minute, true},
		"0":                               {0, true},
		"18446744074":                     {100 * 365 * 24 * time.Hour, true}, // regression: wrapped to 0.3 s
		"99999999999999999999999999":      {100 * 365 * 24 * time.Hour, true},
		"-5":                              {0, false},
		"1.5":                             {0, false},
		"+3":                              {0, false},
		"soon":                            {0, false},
		"":                                {0, false},
		"Tue, 01 Dec 2026 10:01:00 GMT":   {time.Minute, true},
		"Tue, 01 Dec 2026 09:00:00 GMT":   {0, true},
		"Tuesday, 01-Dec-26 10:00:30 GMT": {30 * time.Second, true},
	} {
		d, ok := remote.ParseRetryAfter(v, now)
		assert.Equal(t, want.ok, ok, "%q", v)
		assert.Equal(t, want.d, d, "%q", v)
	}
}

// Regression (issue 11): a request in flight when the duration budget
// ran out ran on to its own timeout (30 s and more). It ends at the
// deadline, with the duration budget as its error.
func TestProvider_DeadlineEndsRequestsInFlight(t *testing.T) {
	s := hostile.Start(t, hostile.Options{Mode: hostile.Hang})
	p := against(t, s, remote.Limits{MaxDuration: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // the test's own bound
	defer cancel()
	_, err := p.Find(ctx, "x")
	var be *remote.BudgetError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "duration", be.Resource)
	assert.NoError(t, ctx.Err(), "ended by the budget, not by the test's bound")
	assert.False(t, be.NotSent(), "it was sent")
}

// Regression (issue 11): nothing scrubbed a key the provider echoed. The
// wire replaces it in bodies, headers and error texts before anything
// above sees it.
func TestProvider_ScrubsAnEchoedKey(t *testing.T) {
	s := hostile.Start(t, hostile.Options{Mode: hostile.EchoKey})
	p := against(t, s, remote.Limits{MaxDuration: time.Minute})
	resp, err := create(t.Context(), p, "echo")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", b)
	assert.NotContains(t, string(b), string(hostileKey))
	assert.Contains(t, string(b), `"ch_[redacted]_`)
	assert.Equal(t, remote.RedactedKey, resp.Header.Get("X-Echo"))

	g := hostile.Start(t, hostile.Options{Mode: hostile.Garbage})
	_, err = against(t, g, remote.Limits{MaxDuration: time.Minute}).Find(t.Context(), "x")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), string(hostileKey))
}

// Regression (issue 11): a key with CR/LF reached the wire and the
// failure read "not the reference dialect". It is refused before any
// request, saying why.
func TestNew_RefusesAKeyThatIsNoHeaderValue(t *testing.T) {
	s := hostile.Start(t, hostile.Options{})
	for _, k := range []remote.APIKey{"sk_test_x\r\nX-Evil: 1", "sk_test_x\n", "sk_test_\x00x", "sk_test_\x7fx"} {
		_, err := remote.New(remote.Config{BaseURL: s.URL, APIKey: k})
		require.ErrorIs(t, err, remote.ErrInvalidKey, "%q", k)
		assert.NotContains(t, err.Error(), "sk_test_")
		_, err = remote.New(remote.Config{BaseURL: s.URL, APIKey: hostileKey, SecondAPIKey: k})
		require.ErrorIs(t, err, remote.ErrInvalidKey, "%q", k)
	}
	reqs, _, _ := s.Counts()
	assert.Zero(t, reqs)
}

// The wire names the real cause of a failure first.
func TestProvider_ErrorsNameTheCause(t *testing.T) {
	p, err := remote.New(remote.Config{BaseURL: "http://127.0.0.1:1", APIKey: hostileKey})
	require.NoError(t, err)
	_, err = p.Find(t.Context(), "x")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "remote: connection refused:"), "%v", err)
	assert.Equal(t, "connection refused", remote.Cause(err))

	s := hostile.Start(t, hostile.Options{Mode: hostile.Dribble})
	p = against(t, s, remote.Limits{MaxDuration: time.Minute})
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, err = p.Find(ctx, "x")
	require.Error(t, err)
	assert.Equal(t, "timeout", remote.Cause(err), "%v", err)
	assert.False(t, errors.Is(err, remote.ErrBudget))
}

// Regression (breaker, issue 11): a request carrying Accept-Encoding:
// gzip (the certify proxy forwards its Go client's) made the transport
// hand the provider's gzip bytes through undecoded: the body cap was
// applied to the compressed bytes (64 KiB that decode to 64 MiB passed
// a 1 MiB cap), the scrubber saw compressed bytes (an echoed key came
// out plain once a client decoded them), and no charge id could be read.
// The wire asks for gzip itself and decodes it before the cap and the
// scrubber.
func TestProvider_GzipAnswersAreDecodedBeforeTheCapAndTheScrub(t *testing.T) {
	s := hostile.Start(t, hostile.Options{Mode: hostile.GzipEcho})
	p := against(t, s, remote.Limits{MaxDuration: time.Minute})
	body := `{"amount":1099,"currency":"USD","source":"tok_visa","merchant_reference":"gz"}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://provider/v1/charges", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set(models.IdempotencyKeyHeader, models.FormatKey("gz-key"))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := p.Transport().RoundTrip(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	assert.Empty(t, resp.Header.Get("Content-Encoding"))
	assert.Contains(t, string(b), `"ch_[redacted]_`)

	bomb := hostile.Start(t, hostile.Options{Mode: hostile.GzipBomb})
	p = against(t, bomb, remote.Limits{MaxDuration: time.Minute})
	req, err = http.NewRequestWithContext(t.Context(), http.MethodGet, "http://provider/v1/charges?merchant_reference=x", nil)
	require.NoError(t, err)
	req.Header.Set("Accept-Encoding", "gzip")
	_, err = p.Transport().RoundTrip(req)
	require.ErrorIs(t, err, faults.ErrOversize)
}

// Regression (breaker, issue 11): a "101 Switching Protocols" to a
// request that asked for no upgrade made the wire read the raw
// connection as the body, which no deadline ends: a run with a 300 ms
// duration budget waited for as long as the provider held the
// connection. A 1xx is no answer; the error says so at once.
func TestProvider_AnUnasked101IsNoAnswer(t *testing.T) {
	s := hostile.Start(t, hostile.Options{Mode: hostile.Switch})
	p := against(t, s, remote.Limits{MaxDuration: 300 * time.Millisecond})
	done := make(chan error, 1)
	go func() {
		_, err := p.Find(t.Context(), "x")
		done <- err
	}()
	select {
	case err := <-done:
		require.Error(t, err)
		assert.Equal(t, "malformed or cut answer", remote.Cause(err), "%v", err)
		assert.Contains(t, err.Error(), "101")
	case <-time.After(20 * time.Second): // the test's own bound, not a timing check
		t.Fatal("the wire still reads the 101 answer 20 s after the request, with a 300ms duration budget")
	}
}
