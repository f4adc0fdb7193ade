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
	var ch models.Charge
	post(t, e, "/v1/charges", auth, fmt.Sprintf(`"k-%d"`, i), models.ChargeRequest{Amount: 1000 + int64(i), Currency: "TRY", Source: "tok_visa", MerchantReference: fmt.Sprintf("order-%d", i)}, &ch)
	return ch.ID
}

// post sends req as JSON to the embedded provider's path under key, and
// decodes its 201 answer into out.
func post(t *testing.T, e *Embedded, path, auth, key string, req, out any) {
	t.Helper()
	body, err := json.Marshal(req)
	require.NoError(t, err)
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(string(body)))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", auth)
	r.Header.Set("Idempotency-Key", key)
	w := httptest.NewRecorder()
	e.prov.ServeHTTP(w, r)
	require.Equal(t, http.StatusCreated, w.Code, w.Body.String())
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), out))
}

func ids(cs []models.Charge) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

// The embedded provider's refunds, read after every refund: each read
// holds every refund so far, in creation order, and an earlier read is
// unchanged by later refunds.
func TestEmbeddedRefundsReadWhatWasAdded(t *testing.T) {
	e := NewEmbedded(0, 24*time.Hour, nil, &models.History{}, time.Now)
	const auth = "Bearer sk_test_idemcheck_merchant_a"
	ch := charge(t, e, auth, 0)
	var want []string
	var first []models.Refund
	for i := range 3 {
		var re models.Refund
		post(t, e, "/v1/refunds", auth, fmt.Sprintf(`"r-%d"`, i), models.RefundRequest{Charge: ch, Amount: 100, MerchantReference: fmt.Sprintf("refund-%d", i)}, &re)
		want = append(want, re.ID)
		got, err := e.Refunds()
		require.NoError(t, err)
		var ids []string
		for _, g := range got {
			ids = append(ids, g.ID)
		}
		assert.Equal(t, want, ids, "after refund %d", i)
		if i == 0 {
			first = got
		}
	}
	assert.Len(t, first, 1, "a read is unchanged by later refunds")
}
