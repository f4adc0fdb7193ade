package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider/server"
)

// A provider served with one key form refuses the other with 400 and
// charges nothing for it; "both" accepts either.
func TestOnlyKeyForm(t *testing.T) {
	body := `{"amount":1099,"currency":"USD","source":"tok_visa","description":"d","merchant_reference":"r"}`
	for form, want := range map[string][2]int{ // form → statuses for a quoted, then a bare key
		server.KeyFormBoth:   {201, 201},
		server.KeyFormQuoted: {201, 400},
		server.KeyFormBare:   {400, 201},
	} {
		h, err := server.Handler("", 0, 0)
		require.NoError(t, err)
		h, err = server.OnlyKeyForm(h, form)
		require.NoError(t, err)
		for i, key := range []string{`"k-quoted"`, `k-bare`} {
			req := httptest.NewRequest(http.MethodPost, "/v1/charges", strings.NewReader(body))
			req.Header.Set(models.IdempotencyKeyHeader, key)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			assert.Equal(t, want[i], rec.Code, "--key-form %s, key %s", form, key)
		}
	}
	_, err := server.OnlyKeyForm(http.NotFoundHandler(), "sf")
	assert.ErrorContains(t, err, `key form "sf"`)
}
