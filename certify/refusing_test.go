package certify_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// TestCertify_APostRefusedOutrightIsNoInflightVerdict: a provider that
// answers every create 404 or 400 (a wrong path, a body it will not read)
// never had a request in flight to refuse another under, so
// inflight-mismatch-refused is INCONCLUSIVE, never FAIL. Regression
// (issue 11, breaker): it FAILed "the later is refused with 409 or 422".
// A 400 to the key in both its forms is one cause for the whole run
// (certify.ErrKeyForm): nothing else is sent, the reason names both answers.
func TestCertify_APostRefusedOutrightIsNoInflightVerdict(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusBadRequest} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			prov := provider.New(provider.Config{})
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					w.Header().Set("Content-Type", "application/problem+json")
					w.WriteHeader(status)
					_, _ = w.Write([]byte(`{"type":"about:blank","title":"` + http.StatusText(status) + `","status":` + strconv.Itoa(status) + `}`))
					return
				}
				prov.ServeHTTP(w, r) // find-by-reference answers: the provider, in its dialect
			}))
			t.Cleanup(s.Close)
			cert, err := certifyURLErr(t, s.URL, remote.ReferenceProfile(), certify.Options{Only: []string{certify.ReqInflightMismatch}})
			want := "in flight"
			if status == http.StatusBadRequest {
				assert.ErrorIs(t, err, certify.ErrKeyForm)
				want = "the quoted key answered 400 (1 send), the bare token of the same key 400 (1 send)"
			} else {
				assert.NoError(t, err)
			}
			for _, r := range cert.Requirements {
				if r.ID == certify.ReqInflightMismatch {
					assert.Equal(t, reports.Inconclusive, r.Verdict, r.Reason)
					assert.Contains(t, r.Reason, want)
				}
			}
		})
	}
}
