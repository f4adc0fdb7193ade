package provider

import (
	"encoding/json"
	"net/http"

	"github.com/idemcheck/idemcheck/models"
)

// writeRaw answers with status and body as mediaTypeOf(status), body
// bytes unchanged (a replay sends the stored bytes exactly), and a 201's
// charge with Location: /v1/charges/<id>.
func writeRaw(w http.ResponseWriter, status int, body []byte) {
	setLocation(w.Header(), status, body)
	w.Header().Set("Content-Type", mediaTypeOf(status))
	w.WriteHeader(status)
	_, _ = w.Write(body) // the client may be gone; nothing to do about it
}

// writeProblem answers with an RFC 9457 problem-details body
// (application/problem+json) whose title is the status text.
func writeProblem(w http.ResponseWriter, status int, detail string) {
	body := mustJSON(models.Problem{
		Title:  http.StatusText(status),
		Status: status,
		Detail: detail,
	})
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// mustJSON marshals v, one of this package's wire types, which cannot fail.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("provider: marshal " + err.Error())
	}
	return b
}

// writeMismatch answers 422: the key belongs to another request body.
func writeMismatch(w http.ResponseWriter) {
	writeProblem(w, http.StatusUnprocessableEntity, "the Idempotency-Key was used with a different request body")
}

// writeInFlight answers 409: another request under the key is in flight,
// with Retry-After: 1 (seconds, RFC 9110 §10.2.3) when hint is set: when
// to ask again, as seed article 004's lock implies (docs/provider-api.md).
func writeInFlight(w http.ResponseWriter, hint bool) {
	if hint {
		w.Header().Set("Retry-After", "1")
	}
	writeProblem(w, http.StatusConflict, "a request with this Idempotency-Key is still being processed; retry later with the same key")
}

// mediaTypeOf is the Content-Type of a processed answer with status: an
// error but a 402 (a refund's 404 for an unknown charge, stored under its
// key) is problem details, application/problem+json (RFC 9457); a
// success, a decline or a refusal of amount is application/json. Before
// issue 25 the refund's 404 and its replay went as application/json.
func mediaTypeOf(status int) string {
	if status >= 400 && status != http.StatusPaymentRequired {
		return models.ProblemContentType
	}
	return "application/json"
}
