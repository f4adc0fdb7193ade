package backend

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
)

// The embedded provider's ledger, read after every charge: each read
// holds every charge of its account so far, in creation order (the
// ledger reads only what was added since the last read, and must miss
// nothing); what an earlier read returned is unchanged by later charges,
// and a caller appending to it does not write into the ledger.
func TestEmbeddedLedgerReadsWhatWasAdded(t *testing.T) {
	e := NewEmbedded(0, 24*time.Hour, nil, &models.History{}, time.Now)
	var wantMine, wantOther []string
	var earlier []models.Charge
	for i := range 7 {
		auth := "Bearer sk_test_idemcheck_merchant_a"
		if i%3 == 1 {
			auth = MerchantB
		}
		id := charge(t, e, auth, i)
		if auth == MerchantB {
			wantOther = append(wantOther, id)
		} else {
			wantMine = append(wantMine, id)
		}
		mine, err := e.Charges()
		require.NoError(t, err)
		other, err := e.OtherCharges()
		require.NoError(t, err)
		assert.Equal(t, wantMine, ids(mine), "after charge %d", i)
		assert.Equal(t, wantOther, ids(other), "after charge %d", i)
		if i == 2 {
			earlier = mine
			_ = append(mine, models.Charge{ID: "ch_appended_by_the_caller"})
		}
	}
	assert.Equal(t, wantMine[:2], ids(earlier), "a read is unchanged by later charges")
	mine, _ := e.Charges()
	assert.NotContains(t, ids(mine), "ch_appended_by_the_caller")
}

// charge creates the i-th charge through the embedded provider as auth.
func charge(t *testing.T, e *Embedded, auth string, i int) string {
	t.Helper()
	body, err := json.Marshal(models.ChargeRequest{Amount: 1000 + int64(i), Currency: "TRY", Source: "tok_visa", MerchantReference: fmt.Sprintf("order-%d", i)})
	require.NoError(t, err)
	r := httptest.NewRequest(http.MethodPost, "/v1/charges", strings.NewReader(string(body)))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", auth)
	r.Header.Set("Idempotency-Key", fmt.Sprintf(`"k-%d"`, i))
	w := httptest.NewRecorder()
	e.prov.ServeHTTP(w, r)
	require.Equal(t, http.StatusCreated, w.Code, w.Body.String())
	var ch models.Charge
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &ch))
	return ch.ID
}

func ids(cs []models.Charge) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}
