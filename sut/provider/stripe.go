package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"github.com/google/uuid"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/stripewire"
)

// Stripe is p speaking Stripe's API instead of docs/provider-api.md: the
// `stripe` dialect served (idemcheck serve -dialect stripe). It translates
// each request into the reference provider's and each answer back, so the
// same key store, mutants, retention and account scopes decide; the wire
// form is sut/stripewire's, the one the harness's own stripe dialect
// (sut/remote) sends, so both directions agree.
//
//   - POST /v1/charges and POST /v1/refunds take form bodies
//     (application/x-www-form-urlencoded; stripewire.ChargeRequest,
//     RefundRequest): 200 with the charge or refund object; a decline is
//     402 card_error card_declined with the failed charge's id in
//     error.charge; a refund beyond the charge is 400 amount_too_large;
//     validation errors are 400 invalid_request_error before the key store
//     (nothing stored: a request that failed validation saves no result,
//     https://docs.stripe.com/api/idempotent_requests).
//   - POST /v1/payment_intents with confirm=true (stripewire.IntentRequest)
//     is a charge under the charges' keys, answered as the PaymentIntent
//     that made it ("pi_<n>" of "ch_<n>", latest_charge naming it); a
//     decline is the 402 card_error with the intent left
//     requires_payment_method; an unconfirmed intent is 400.
//   - The Idempotency-Key is opaque, at most 255 characters, sent bare
//     (a longer one, one outside printable ASCII, or two headers are 400);
//     a request without one is processed under a fresh key of its own
//     (the key is optional on Stripe, so nothing is deduplicated).
//     Reused with another body it is 400 idempotency_error; while its
//     first request is in flight 409 idempotency_error
//     idempotency_key_in_use; a replay carries Idempotent-Replayed: true.
//     Keys are kept for the provider's retention window (24 h by default).
//   - GET /v1/charges/{id}, GET /v1/charges?limit=N (newest first),
//     GET /v1/charges/search?query=metadata['merchant_reference']:'REF',
//     the same three under /v1/payment_intents,
//     GET /v1/refunds/{id} and GET /v1/refunds?limit=N (stripe_read.go).
//
// Errors are Stripe's JSON ({"error":{"type","code","message"}},
// https://docs.stripe.com/api/errors): 400 and 404 invalid_request_error,
// 402 card_error, 409 and the 400 of a reused key idempotency_error, 429
// rate_limit, 5xx api_error (Retry-After kept).
func (p *Provider) Stripe() http.Handler { return stripeAPI{p} }

type stripeAPI struct{ p *Provider }

// intentsPath is Stripe's PaymentIntents resource: a confirmed intent is
// a charge of the reference provider's, under the charges' keys.
const intentsPath = "/v1/payment_intents"

// The kinds of object a create answers with.
const (
	kindCharge = "charge"
	kindIntent = "payment_intent"
	kindRefund = "refund"
)

// pathOf is the reference provider's resource of a create of kind.
func pathOf(kind string) string {
	if kind == kindRefund {
		return models.RefundsPath
	}
	return chargesPath
}

// maxFormBytes caps a form body, as MaxBodyBytes caps a JSON one.
const maxFormBytes = MaxBodyBytes

func (s stripeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case r.Method == http.MethodPost && path == chargesPath:
		s.post(w, r, kindCharge, func(f url.Values) (any, error) { return stripewire.ChargeRequest(f) })
	case r.Method == http.MethodPost && path == intentsPath:
		s.post(w, r, kindIntent, func(f url.Values) (any, error) { return stripewire.IntentRequest(f) })
	case r.Method == http.MethodPost && path == models.RefundsPath:
		s.post(w, r, kindRefund, func(f url.Values) (any, error) { return stripewire.RefundRequest(f) })
	case r.Method == http.MethodGet:
		s.get(w, r, path)
	default:
		writeStripe(w, http.StatusNotFound, stripewire.TypeInvalidRequest, "", "Unrecognized request URL ("+r.Method+": "+r.URL.Path+").")
	}
}

// post serves a create of kind (its object): the form read by parse, the
// key checked, the reference provider's answer translated back.
func (s stripeAPI) post(w http.ResponseWriter, r *http.Request, kind string, parse func(url.Values) (any, error)) {
	key, ok := stripeKey(w, r)
	if !ok {
		return
	}
	form, err := readForm(w, r)
	if err != nil {
		writeStripe(w, http.StatusBadRequest, stripewire.TypeInvalidRequest, "", err.Error())
		return
	}
	body, err := parse(form)
	var pe *stripewire.ParamError
	if errors.As(err, &pe) {
		writeStripe(w, http.StatusBadRequest, stripewire.TypeInvalidRequest, pe.Code, pe.Message)
		return
	}
	in, err := http.NewRequestWithContext(r.Context(), http.MethodPost, pathOf(kind), bytes.NewReader(mustJSON(body)))
	if err != nil {
		writeStripe(w, http.StatusBadRequest, stripewire.TypeInvalidRequest, "", err.Error())
		return
	}
	in.Header.Set("Content-Type", "application/json")
	in.Header.Set(models.IdempotencyKeyHeader, models.FormatKey(key))
	if a := r.Header.Values("Authorization"); len(a) > 0 {
		in.Header["Authorization"] = a // the account (AccountScope)
	}
	rec := httptest.NewRecorder()
	s.p.ServeHTTP(rec, in)
	translate(w, rec, kind)
}

// stripeKey is r's Idempotency-Key, opaque and bare: the whole value is
// the key (quotes included). None is a fresh key of the request's own.
// Two headers, an empty one, one longer than stripewire.MaxKeyLength or
// outside printable ASCII are answered 400.
func stripeKey(w http.ResponseWriter, r *http.Request) (string, bool) {
	vs := r.Header.Values(models.IdempotencyKeyHeader)
	if len(vs) == 0 {
		return "keyless-" + uuid.NewString(), true
	}
	k := strings.TrimSpace(vs[0])
	bad := ""
	switch {
	case len(vs) > 1:
		bad = "Idempotency-Key was sent more than once"
	case k == "":
		bad = "Idempotency-Key is empty"
	case len(k) > stripewire.MaxKeyLength:
		bad = "Idempotency-Key is longer than 255 characters"
	case strings.IndexFunc(k, func(c rune) bool { return c < ' ' || c > '~' }) >= 0:
		bad = "Idempotency-Key holds a character outside printable ASCII"
	}
	if bad != "" {
		writeStripe(w, http.StatusBadRequest, stripewire.TypeInvalidRequest, "", bad)
	}
	return k, bad == ""
}

// readForm reads a form body of at most maxFormBytes.
func readForm(w http.ResponseWriter, r *http.Request) (url.Values, error) {
	if r.Body == nil {
		return url.Values{}, nil
	}
	var b bytes.Buffer
	if _, err := b.ReadFrom(http.MaxBytesReader(w, r.Body, maxFormBytes)); err != nil {
		return nil, errors.New("the request body could not be read: " + err.Error())
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		return nil, errors.New("the request body must be application/x-www-form-urlencoded, not " + ct)
	}
	f, err := url.ParseQuery(b.String())
	if err != nil {
		return nil, errors.New("the request body is not a form: " + err.Error())
	}
	return f, nil
}

// translate writes the reference provider's answer rec to a create of
// kind in Stripe's form; Retry-After and Idempotent-Replayed are kept.
func translate(w http.ResponseWriter, rec *httptest.ResponseRecorder, kind string) {
	for _, h := range []string{"Retry-After", models.ReplayedHeader} {
		if v := rec.Header().Values(h); len(v) > 0 {
			w.Header()[h] = v
		}
	}
	raw := rec.Body.Bytes()
	switch rec.Code {
	case http.StatusCreated:
		var c models.Charge
		var re models.Refund
		var v any
		var err error
		switch kind {
		case kindRefund:
			err = json.Unmarshal(raw, &re)
			v = stripewire.RefundOf(re)
		case kindIntent:
			err = json.Unmarshal(raw, &c)
			v = stripewire.IntentOf(c)
		default:
			err = json.Unmarshal(raw, &c)
			v = stripewire.ChargeOf(c)
		}
		if err != nil {
			passThrough(w, rec)
			return
		}
		writeJSON(w, http.StatusOK, v)
	case http.StatusPaymentRequired:
		var e models.ErrorBody
		_ = json.Unmarshal(raw, &e) // an undecodable body leaves type and code empty
		var se stripewire.Error
		se.Error.Type, se.Error.Code, se.Error.DeclineCode, se.Error.Charge = e.Error.Type, e.Error.Code, e.Error.DeclineCode, e.Error.DeclineID
		status := http.StatusPaymentRequired
		switch kind {
		case kindRefund: // amount_too_large: Stripe's 400
			status = http.StatusBadRequest
			se.Error.Message = "Refund amount is greater than what is left of the charge."
		case kindIntent: // the intent is left waiting for another payment method
			se.Error.Message = "Your card was declined."
			se.Error.PaymentIntent = &stripewire.PaymentIntent{ID: "pi_" + e.Error.DeclineID, Object: kindIntent, Status: "requires_payment_method", LatestCharge: e.Error.DeclineID}
		default:
			se.Error.Message = "Your card was declined."
		}
		writeJSON(w, status, se)
	default:
		var pd models.Problem
		_ = json.Unmarshal(raw, &pd) // an undecodable body leaves the detail empty
		status, typ, code, msg := stripeStatus(rec.Code, pd.Detail)
		writeStripe(w, status, typ, code, msg)
	}
}

// stripeStatus is Stripe's status, error type, code and message for a
// reference provider's error status and problem detail
// (https://docs.stripe.com/api/errors): a reused key with another body
// (422) is 400 idempotency_error; in flight (409) 409 idempotency_error
// idempotency_key_in_use; 429 rate_limit; 404 resource_missing; 5xx
// api_error.
func stripeStatus(status int, detail string) (int, string, string, string) {
	switch {
	case status == http.StatusUnprocessableEntity:
		return http.StatusBadRequest, stripewire.TypeIdempotency, "",
			"Keys for idempotent requests can only be used with the same parameters they were first used with."
	case status == http.StatusConflict:
		return status, stripewire.TypeIdempotency, "idempotency_key_in_use",
			"There is currently another in-progress request using this idempotency key. Try again later."
	case status == http.StatusTooManyRequests:
		return status, stripewire.TypeInvalidRequest, "rate_limit", "Too many requests hit the API too quickly."
	case status == http.StatusNotFound:
		return status, stripewire.TypeInvalidRequest, "resource_missing", detail
	case status >= 500:
		return status, stripewire.TypeAPI, "", detail
	}
	return status, stripewire.TypeInvalidRequest, "", detail
}

// passThrough copies an answer this translator cannot read (a planted bug
// may send one) as it is, so that the harness judges what was sent.
func passThrough(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	if ct := rec.Header().Get("Content-Type"); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

func writeStripe(w http.ResponseWriter, status int, typ, code, msg string) {
	var e stripewire.Error
	e.Error.Type, e.Error.Code, e.Error.Message = typ, code, msg
	writeJSON(w, status, e)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(mustJSON(v))
}
