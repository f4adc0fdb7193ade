package certify_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/internal/stranger"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// slowAnswers serves h but holds each answer back for delay after h
// wrote it (a provider that stores the key on arrival, then processes).
func slowAnswers(h http.Handler, delay time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// A provider whose 1 s window starts when a create arrives (as Stripe's
// keys age from their first request) and that takes 300 ms to answer is
// not failed by the waited-out retention check: the retry, timed from
// the first answer, reaches it more than 1 s after it stored the key.
// The wait is timed from when the first create was sent. Regression
// (outside tester): FAIL "a retry 900ms after the first answer, inside
// the published 1s window, answered 201 …, not the replay".
func TestCertify_RetentionWaitCountsFromTheFirstSend(t *testing.T) {
	const window = time.Second
	p := &stranger.Provider{Mode: stranger.Forgetful, Forget: window}
	srv := httptest.NewServer(slowAnswers(p, 300*time.Millisecond))
	t.Cleanup(srv.Close)
	prof := remote.ReferenceProfile()
	prof.RetentionWindow = remote.Duration(window)
	cert := certifyURL(t, srv.URL, prof, certify.Options{Only: []string{certify.ReqRetention}})
	for _, r := range cert.Requirements {
		if r.ID == certify.ReqRetention {
			assert.Equal(t, reports.Pass, r.Verdict, r.Reason)
		}
	}
}
