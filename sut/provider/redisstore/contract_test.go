package redisstore_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/provider/redisstore"
)

// The store contract: what the reference provider answers, in memory and
// on Redis alike, for refunds and for the ledger per account.

const secretB = "Bearer sk_test_redisstore_merchant_b"

// onBothStores runs test against a fresh in-memory provider and a fresh
// one on Redis (under a prefix of the subtest's own, deleted after it).
func onBothStores(t *testing.T, test func(t *testing.T, p *provider.Provider)) {
	t.Run("memory", func(t *testing.T) { test(t, provider.New(provider.Config{})) })
	t.Run("redis", func(t *testing.T) {
		test(t, provider.New(provider.Config{Store: newStore(t, redisstore.Config{})}))
	})
}

// postRefund sends POST /v1/refunds with req under key as account auth;
// it may run on another goroutine than the test's.
func postRefund(h http.Handler, key, auth string, req models.RefundRequest) *httptest.ResponseRecorder {
	return send(h, models.RefundsPath, key, auth, req)
}

// paid is a visa charge of 548.90 TRY under key as account auth.
func paid(t *testing.T, h http.Handler, key, auth, ref string) models.Charge {
	t.Helper()
	w := post(t, h, key, auth, charge(ref, "tok_visa"))
	require.Equal(t, http.StatusCreated, w.Code, w.Body.String())
	var ch models.Charge
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &ch))
	return ch
}

// TestContract_Refunds: a refund is created, replayed byte for byte with
// Idempotent-Replayed, refused with 422 for another body under its key and
// with 402 beyond what is left of the charge; a charge unknown to the
// account is 404; GET lists the refund by merchant_reference. On Redis
// this answered 501 before refunds were served there.
func TestContract_Refunds(t *testing.T) {
	onBothStores(t, func(t *testing.T, p *provider.Provider) {
		ch := paid(t, p, "c1", secret, "bookstore-1-a")
		req := models.RefundRequest{Charge: ch.ID, Amount: 40000, MerchantReference: "refund-1-a"}
		first := postRefund(p, "r1", secret, req)
		require.Equal(t, http.StatusCreated, first.Code, first.Body.String())
		assert.JSONEq(t, `{"id":"re_000001","charge":"`+ch.ID+`","amount":40000,"status":"succeeded","merchant_reference":"refund-1-a"}`, first.Body.String())
		assert.Empty(t, first.Header().Get("Location"), "a refund is no charge")
		again := postRefund(p, "r1", secret, req)
		assert.Equal(t, http.StatusCreated, again.Code)
		assert.Equal(t, "true", again.Header().Get(models.ReplayedHeader))
		assert.Equal(t, first.Body.String(), again.Body.String(), "the stored body, byte for byte")
		other := req
		other.Amount = 1
		assert.Equal(t, http.StatusUnprocessableEntity, postRefund(p, "r1", secret, other).Code)

		// 54890 - 40000 = 14890 left: 14891 is refused, and stored so; 14890 is not.
		over := models.RefundRequest{Charge: ch.ID, Amount: 14891, MerchantReference: "refund-1-b"}
		refused := postRefund(p, "r2", secret, over)
		assert.Equal(t, http.StatusPaymentRequired, refused.Code)
		assert.JSONEq(t, `{"error":{"type":"invalid_request_error","code":"amount_too_large"}}`, refused.Body.String())
		assert.Equal(t, "true", postRefund(p, "r2", secret, over).Header().Get(models.ReplayedHeader))
		rest := models.RefundRequest{Charge: ch.ID, Amount: 14890, MerchantReference: "refund-1-c"}
		assert.Equal(t, http.StatusCreated, postRefund(p, "r3", secret, rest).Code)
		assert.Equal(t, http.StatusPaymentRequired, postRefund(p, "r4", secret, models.RefundRequest{Charge: ch.ID, Amount: 1, MerchantReference: "refund-1-d"}).Code)
		assert.Equal(t, http.StatusNotFound, postRefund(p, "r5", secret, models.RefundRequest{Charge: "ch_999999", Amount: 1, MerchantReference: "refund-1-e"}).Code)
		assert.Len(t, p.Refunds(), 2)

		assert.JSONEq(t, `{"data":[{"id":"re_000001","charge":"`+ch.ID+`","amount":40000,"status":"succeeded","merchant_reference":"refund-1-a"}]}`,
			find(p, "/v1/refunds?merchant_reference=refund-1-a", secret))
		assert.JSONEq(t, `{"data":[]}`, find(p, "/v1/refunds?merchant_reference=refund-1-b", secret))
	})
}

// TestContract_KeyScopedPerEndpoint: a key a charge completed with, sent
// to /v1/refunds, is a new key there (the refund is decided on its own: a
// 402, never the charge's 201 replayed, never a 409), and a refund's key
// sent to /v1/charges charges (invariant key-scoped-per-endpoint).
func TestContract_KeyScopedPerEndpoint(t *testing.T) {
	onBothStores(t, func(t *testing.T, p *provider.Provider) {
		ch := paid(t, p, "k1", secret, "bookstore-1-a")
		probe := postRefund(p, "k1", secret, models.RefundRequest{Charge: ch.ID, Amount: ch.Amount + 1, MerchantReference: "probe-1"})
		assert.Equal(t, http.StatusPaymentRequired, probe.Code, probe.Body.String())
		assert.Empty(t, probe.Header().Get(models.ReplayedHeader))
		assert.NotContains(t, probe.Body.String(), ch.ID)

		require.Equal(t, http.StatusCreated, postRefund(p, "k2", secret, models.RefundRequest{Charge: ch.ID, Amount: 1, MerchantReference: "refund-1-a"}).Code)
		second := post(t, p, "k2", secret, charge("bookstore-2-a", "tok_visa"))
		assert.Equal(t, http.StatusCreated, second.Code)
		assert.Empty(t, second.Header().Get(models.ReplayedHeader))
		assert.Len(t, p.Charges(), 2)
	})
}

// TestContract_LedgerPerAccount: two accounts that use the same
// merchant_reference each list only their own charges and refunds, and
// neither can refund the other's charge (draft §5). On Redis the charges
// list was shared by every account before.
func TestContract_LedgerPerAccount(t *testing.T) {
	onBothStores(t, func(t *testing.T, p *provider.Provider) {
		a := paid(t, p, "k1", secret, "bookstore-1-a")
		b := paid(t, p, "k1", secretB, "bookstore-1-a")
		require.NotEqual(t, a.ID, b.ID)
		for auth, id := range map[string]string{secret: a.ID, secretB: b.ID} {
			var list models.ChargeList
			require.NoError(t, json.Unmarshal([]byte(find(p, "/v1/charges?merchant_reference=bookstore-1-a", auth)), &list))
			require.Len(t, list.Data, 1, auth)
			assert.Equal(t, id, list.Data[0].ID, auth)
		}
		assert.JSONEq(t, `{"data":[]}`, find(p, "/v1/charges?merchant_reference=bookstore-1-a", ""), "anonymous made none")

		assert.Equal(t, http.StatusNotFound, postRefund(p, "r0", secretB, models.RefundRequest{Charge: a.ID, Amount: 1, MerchantReference: "refund-1-a"}).Code, "B refunds A's charge")
		require.Equal(t, http.StatusCreated, postRefund(p, "r1", secret, models.RefundRequest{Charge: a.ID, Amount: 1, MerchantReference: "refund-1-a"}).Code)
		require.Equal(t, http.StatusCreated, postRefund(p, "r1", secretB, models.RefundRequest{Charge: b.ID, Amount: 2, MerchantReference: "refund-1-a"}).Code)
		for auth, amount := range map[string]int64{secret: 1, secretB: 2} {
			var list models.RefundList
			require.NoError(t, json.Unmarshal([]byte(find(p, "/v1/refunds?merchant_reference=refund-1-a", auth)), &list))
			require.Len(t, list.Data, 1, auth)
			assert.Equal(t, amount, list.Data[0].Amount, auth)
		}
		assert.Len(t, p.Charges(), 2, "the provider's truth is every account's")
		assert.Len(t, p.Refunds(), 2)
	})
}

// TestContract_FingerprintCoversTheWholePayload: a member outside the
// contract counts in the fingerprint of a charge and of a refund, in
// memory and on Redis (docs/provider-api.md: the fingerprint covers the
// whole payload): the same key with another metadata is 422, and the same
// members in another order are the replay. Before, the refund's
// fingerprint read its struct's fields only and replayed a changed
// metadata (breaker of 27c0871).
func TestContract_FingerprintCoversTheWholePayload(t *testing.T) {
	onBothStores(t, func(t *testing.T, p *provider.Provider) {
		body := func(req any, try int) map[string]any {
			raw, _ := json.Marshal(req)
			var m map[string]any
			require.NoError(t, json.Unmarshal(raw, &m))
			m["metadata"] = map[string]int{"try": try}
			return m
		}
		first := send(p, "/v1/charges", "c1", secret, body(charge("bookstore-1-a", "tok_visa"), 0))
		require.Equal(t, http.StatusCreated, first.Code, first.Body.String())
		assert.Equal(t, http.StatusUnprocessableEntity, send(p, "/v1/charges", "c1", secret, body(charge("bookstore-1-a", "tok_visa"), 1)).Code)
		again := send(p, "/v1/charges", "c1", secret, body(charge("bookstore-1-a", "tok_visa"), 0))
		assert.Equal(t, first.Body.String(), again.Body.String(), "the same members (in encoding/json's sorted order): the replay")

		var ch models.Charge
		require.NoError(t, json.Unmarshal(first.Body.Bytes(), &ch))
		req := models.RefundRequest{Charge: ch.ID, Amount: 100, MerchantReference: "refund-1-a"}
		refund := send(p, models.RefundsPath, "r1", secret, body(req, 0))
		require.Equal(t, http.StatusCreated, refund.Code, refund.Body.String())
		assert.Equal(t, http.StatusUnprocessableEntity, send(p, models.RefundsPath, "r1", secret, body(req, 1)).Code)
		assert.Equal(t, refund.Body.String(), send(p, models.RefundsPath, "r1", secret, body(req, 0)).Body.String())
	})
}
