package server

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/idemcheck/idemcheck/models"
)

// The key forms OnlyKeyForm serves (idemcheck serve --key-form).
const (
	KeyFormBoth   = "both"
	KeyFormQuoted = "quoted"
	KeyFormBare   = "bare"
)

// OnlyKeyForm is h accepting the Idempotency-Key in one form only, as
// many real providers and idempotency middlewares do: KeyFormQuoted
// (a Structured Field String, draft-ietf-httpapi-idempotency-key-header
// §2.1) or KeyFormBare (the bare token, as Stripe's keys are). A request
// whose one key parses (models.ParseKey) in the other form is answered
// 400 with a problem body and reaches h not at all; anything else goes to
// h. KeyFormBoth or "" is h itself (docs/provider-api.md: providers
// SHOULD accept both). Another form is an error.
func OnlyKeyForm(h http.Handler, form string) (http.Handler, error) {
	switch form {
	case "", KeyFormBoth:
		return h, nil
	case KeyFormQuoted, KeyFormBare:
	default:
		return nil, fmt.Errorf("key form %q: quoted, bare or both", form)
	}
	wantQuoted, only := form == KeyFormQuoted, "bare token"
	if wantQuoted {
		only = "quoted Structured Field String"
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Values(models.IdempotencyKeyHeader); len(v) == 1 {
			if _, quoted, ok := models.ParseKey(v[0]); ok && quoted != wantQuoted {
				b, _ := json.Marshal(models.Problem{Title: http.StatusText(http.StatusBadRequest), Status: http.StatusBadRequest,
					Detail: "this provider accepts the Idempotency-Key only as the " + only})
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write(b)
				return
			}
		}
		h.ServeHTTP(w, r)
	}), nil
}
