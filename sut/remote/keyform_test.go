package remote_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// The key form set on a Provider (or pinned by its profile) is the form
// the key leaves in: a quoted key is sent as the bare token under
// KeyFormBare, as written otherwise.
func TestProvider_SendsTheKeyInItsForm(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get(models.IdempotencyKeyHeader))
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	send := func(p *remote.Provider, key string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, p.RequestBase()+"/v1/charges", strings.NewReader(`{}`))
		require.NoError(t, err)
		req.Header.Set(models.IdempotencyKeyHeader, key)
		resp, err := p.Transport().RoundTrip(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
	}
	p, err := remote.New(remote.Config{BaseURL: srv.URL, Profile: remote.ReferenceProfile()})
	require.NoError(t, err)
	send(p, `"k1"`)
	p.SetKeyForm(remote.KeyFormBare)
	send(p, `"k2"`)
	send(p, `k3`)
	prof := remote.ReferenceProfile()
	prof.KeyForm = remote.KeyFormBare
	pinned, err := remote.New(remote.Config{BaseURL: srv.URL, Profile: prof})
	require.NoError(t, err)
	assert.Equal(t, remote.KeyFormBare, pinned.KeyForm())
	send(pinned, `"k4"`)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{`"k1"`, `k2`, `k3`, `k4`}, got)
}

func TestParseProfile_KeyForm(t *testing.T) {
	p, err := remote.ParseProfile([]byte(`{"name":"x","key_form":"bare"}`))
	require.NoError(t, err)
	assert.Equal(t, remote.KeyFormBare, p.KeyForm)
	_, err = remote.ParseProfile([]byte(`{"name":"x","key_form":"sf"}`))
	assert.ErrorContains(t, err, `key_form "sf"`)
}
