package certify_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// A provider whose lookup by reference lists a fixture charge — not the
// one its creates answered, as a stateless sandbox does — settles neither
// a lost response nor a hang-up: hang-up-settled and lost-response-settled
// read the same evidence alike, FAIL, naming the fixture. Regression
// (issue 24, item 6): hang-up-settled PASSed (one charge was found) where
// lost-response-settled FAILed.
func TestCertify_AFixtureLookupSettlesNothing(t *testing.T) {
	prov := provider.New(provider.Config{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ref := r.URL.Query().Get("merchant_reference")
		if r.Method == http.MethodGet && (strings.Contains(ref, "-hang-up-") || strings.Contains(ref, "-lost-response-")) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"data":[{"id":"ch_fixture","amount":1099,"currency":"USD","status":"succeeded","merchant_reference":"` + ref + `"}]}`))
			return
		}
		prov.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	cert := certifyURL(t, s.URL, remote.ReferenceProfile(), certify.Options{Only: []string{certify.ReqHangUp, certify.ReqLostResponse}})
	got := byID(cert)
	for _, id := range []string{certify.ReqHangUp, certify.ReqLostResponse} {
		assert.Equal(t, reports.Fail, got[id].Verdict, "%s: %s", id, got[id].Reason)
		assert.Contains(t, got[id].Reason, "lookup by merchant reference found [ch_fixture], want exactly the charge ch_", id)
	}
}
