package remote

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/stripewire"
)

// stripeDialect maps docs/provider-api.md onto a Stripe-style API:
//
//   - create: form-encoded POST /v1/charges (amount, currency in lower
//     case, source, description, metadata[merchant_reference]); the
//     Idempotency-Key goes as the bare token (a quoted key is unquoted);
//     200 becomes 201 with the charge's id, amount, currency, status and
//     metadata.merchant_reference; 402 card_error stays 402 (decline_id is
//     the failed charge's id); 400 with error type idempotency_error
//     becomes 422; 409 (idempotency_key_in_use) stays 409; 429 and 5xx keep
//     their status and Retry-After;
//   - find: GET /v1/charges/search?query=metadata['merchant_reference']:'REF'
//     becomes {"data":[...]} in docs/provider-api.md form;
//   - refunds: POST and GET /v1/refunds (stripe_refund.go).
//
// The provider's own error messages are never copied (a provider may echo
// what it was sent); only its error type and code are.
type stripeDialect struct {
	replayHeader string // the profile's replay_header, passed through with Idempotent-Replayed
	maxBody      int64  // the body cap, bytes (Limits.MaxBody)
}

func (stripeDialect) Name() string { return DialectStripe }

func (s stripeDialect) Send(next http.RoundTripper, base *url.URL, key APIKey, req *http.Request) (*http.Response, error) {
	if strings.HasPrefix(req.URL.Path, models.RefundsPath) { // stripe_refund.go
		switch req.Method {
		case http.MethodPost:
			return s.refund(next, base, key, req)
		case http.MethodGet:
			return s.findRefunds(next, base, key, req)
		}
	}
	switch req.Method {
	case http.MethodPost:
		return s.create(next, base, key, req)
	case http.MethodGet:
		return s.find(next, base, key, req)
	}
	return nil, fmt.Errorf("remote: the stripe dialect has no mapping for %s %s", req.Method, req.URL.Path)
}

func (d stripeDialect) create(next http.RoundTripper, base *url.URL, key APIKey, req *http.Request) (*http.Response, error) {
	var cr models.ChargeRequest
	if req.Body != nil {
		b, err := faults.ReadBody(req.Body, d.maxBody)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &cr); err != nil {
			return nil, fmt.Errorf("remote: stripe dialect: the create body is not a charge request: %v", err)
		}
	}
	body := stripewire.ChargeForm(cr).Encode()
	out, err := http.NewRequestWithContext(req.Context(), http.MethodPost, onBase(base, "/v1/charges", "").String(), strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	out.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if v := req.Header.Get(models.IdempotencyKeyHeader); v != "" {
		if k, _, ok := models.ParseKey(v); ok {
			v = k
		}
		out.Header.Set(models.IdempotencyKeyHeader, v)
	}
	resp, raw, err := exchange(next, out, key, d.maxBody)
	if err != nil {
		return nil, err
	}
	h := keep(resp.Header, "Retry-After", models.ReplayedHeader, d.replayHeader)
	if r := foreign(req, resp, h, raw, func() bool {
		var c stripewire.Charge
		return json.Unmarshal(raw, &c) == nil && c.ID != ""
	}); r != nil {
		return r, nil
	}
	switch {
	case resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusCreated:
		var c stripewire.Charge
		_ = json.Unmarshal(raw, &c) // foreign checked it reads
		h.Set("Content-Type", "application/json")
		return newResponse(req, http.StatusCreated, h, mustJSON(c.Model())), nil
	case resp.StatusCode == http.StatusPaymentRequired:
		se := decodeStripeError(raw)
		var e models.ErrorBody
		e.Error.Type, e.Error.Code, e.Error.DeclineCode, e.Error.DeclineID = se.Error.Type, se.Error.Code, se.Error.DeclineCode, se.Error.Charge
		h.Set("Content-Type", "application/json")
		return newResponse(req, http.StatusPaymentRequired, h, mustJSON(e)), nil
	case resp.StatusCode == http.StatusBadRequest && decodeStripeError(raw).Error.Type == "idempotency_error":
		return problem(req, http.StatusUnprocessableEntity, h, "idempotency_error: the key was used with other parameters"), nil
	}
	se := decodeStripeError(raw)
	return problem(req, resp.StatusCode, h, strings.Trim(se.Error.Type+" "+se.Error.Code, " ")), nil
}

func (d stripeDialect) find(next http.RoundTripper, base *url.URL, key APIKey, req *http.Request) (*http.Response, error) {
	query, err := stripewire.SearchQuery(req.URL.Query().Get("merchant_reference"))
	if err != nil {
		return nil, fmt.Errorf("remote: stripe dialect: %w", err)
	}
	q := url.Values{}
	q.Set("query", query)
	q.Set("limit", "100")
	out, err := http.NewRequestWithContext(req.Context(), http.MethodGet, onBase(base, "/v1/charges/search", q.Encode()).String(), nil)
	if err != nil {
		return nil, err
	}
	resp, raw, err := exchange(next, out, key, d.maxBody)
	if err != nil {
		return nil, err
	}
	h := keep(resp.Header, "Retry-After")
	if resp.StatusCode != http.StatusOK {
		se := decodeStripeError(raw)
		return problem(req, resp.StatusCode, h, strings.Trim(se.Error.Type+" "+se.Error.Code, " ")), nil
	}
	var list stripewire.List[stripewire.Charge]
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("remote: stripe dialect: a search answer is not a list: %v", err)
	}
	out2 := models.ChargeList{Data: []models.Charge{}}
	for _, c := range list.Data {
		out2.Data = append(out2.Data, c.Model())
	}
	h.Set("Content-Type", "application/json")
	return newResponse(req, http.StatusOK, h, mustJSON(out2)), nil
}

// foreign is the provider's answer as it came, its status, Content-Type
// and body untranslated, when it is not of the stripe dialect: a 2xx that
// ok does not read as the object asked for, or an error whose body is not
// JSON. Translated, it would read as an answer of the reference dialect (a
// charge, problem details) or as no answer at all, and a verdict drawn
// from it would not be one about the provider's idempotency; as it came,
// models.OfDialect sees it for what it is, and a judgement drawn from
// such answers alone is INCONCLUSIVE (docs/profiles.md). Nil for an answer
// of the dialect.
func foreign(req *http.Request, resp *http.Response, h http.Header, raw []byte, ok func() bool) *http.Response {
	two := resp.StatusCode >= 200 && resp.StatusCode <= 299
	if two && ok() || !two && json.Valid(raw) {
		return nil
	}
	h.Set("Content-Type", resp.Header.Get("Content-Type"))
	return newResponse(req, resp.StatusCode, h, raw)
}

func decodeStripeError(b []byte) stripewire.Error {
	var e stripewire.Error
	_ = json.Unmarshal(b, &e) // an undecodable error body leaves type and code empty
	return e
}

// exchange authenticates out with key, sends it through next and reads
// the answer's body (at most maxBody bytes, the cap the wire read it
// with: never cut short in silence).
func exchange(next http.RoundTripper, out *http.Request, key APIKey, maxBody int64) (*http.Response, []byte, error) {
	authorize(out, key)
	resp, err := next.RoundTrip(out)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := faults.ReadBody(resp.Body, maxBody)
	return resp, raw, err
}

// keep copies the named headers of h that are set.
func keep(h http.Header, names ...string) http.Header {
	out := http.Header{}
	for _, n := range names {
		for _, v := range h.Values(n) { // every line: several Retry-After lines hold the longest
			out.Add(n, v)
		}
	}
	return out
}

func problem(req *http.Request, status int, h http.Header, detail string) *http.Response {
	h.Set("Content-Type", "application/problem+json")
	return newResponse(req, status, h, mustJSON(models.Problem{Title: http.StatusText(status), Status: status, Detail: detail}))
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("remote: " + err.Error()) // only plain structs are marshalled
	}
	return b
}

// StripeMockProfile is the profile of stripe-mock, the stateless Stripe
// API mock, used with the stripe dialect when no profile is given; it
// matches profiles/stripe-mock.json.
func StripeMockProfile() Profile {
	return Profile{
		Name: "stripe-mock", Dialect: DialectStripe, Environment: EnvTest,
		RetentionWindow: Duration(DefaultRetentionWindow), KeyRequired: false, ErrorsStored: true,
		ReplayHeader: "Idempotent-Replayed",
		Statuses:     Statuses{Mismatch: 400, InFlight: 409},
		Accounts:     1, Lookup: "metadata_search",
	}
}
