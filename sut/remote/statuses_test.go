package remote_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/sut/remote"
)

// The reference dialect maps the profile's own statuses onto the draft's
// (docs/profiles.md promised it; only the stripe dialect did): a provider
// answering 425 for a key in flight, with statuses.in_flight 425, was
// certified INCONCLUSIVE on inflight-conflict-retry-after ("no request was
// answered 409 while its key was in flight (answers ... 425)"). A
// mismatch status of 400 is not mapped: a missing key or an invalid body
// answers 400 too.
func TestReferenceDialectMapsTheProfilesStatuses(t *testing.T) {
	var status int
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
	}))
	t.Cleanup(s.Close)
	for _, c := range []struct {
		statuses       remote.Statuses
		answered, read int
	}{
		{remote.Statuses{InFlight: 425}, 425, 409},
		{remote.Statuses{InFlight: 503}, 503, 409},
		{remote.Statuses{Mismatch: 418}, 418, 422},
		{remote.Statuses{Mismatch: 400}, 400, 400},
		{remote.Statuses{InFlight: 425}, 400, 400},
		{remote.Statuses{}, 425, 425},
	} {
		p := remote.ReferenceProfile()
		p.Statuses = c.statuses
		prov, err := remote.New(remote.Config{BaseURL: s.URL, Profile: p, Limits: remote.Limits{MaxDuration: time.Minute}})
		require.NoError(t, err)
		status = c.answered
		resp, err := create(t.Context(), prov, "idemcheck-statuses-"+strconv.Itoa(c.answered))
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, c.read, resp.StatusCode, "%+v answered %d", c.statuses, c.answered)
	}
}
