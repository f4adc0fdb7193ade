package faults

import (
	"bytes"
	"io"
	"net/http"
	"strconv"

	"github.com/idemcheck/idemcheck/models"
)

// Dialect is a provider API other than docs/provider-api.md as the fault
// layer reads and answers it (sut/stripewire.Recorder for Stripe's): the
// key and body fields of a request the client sent in it, the charge id
// of an answer, and the error body a status fault answers with in the
// provider's place, so that a client of that API reads an injected 429 or
// 503 as it reads the provider's own (an SDK that finds no error it
// knows retries even a 400).
type Dialect interface {
	// Name is the dialect, recorded as models.Exchange.Dialect.
	Name() string
	// Describe sets ex's key fields from the request's Idempotency-Key
	// header values (none: no key) and its body fields from body, as
	// sent; ex's Method and Path are set.
	Describe(ex *models.Exchange, keys []string, body []byte)
	// ChargeID is the charge id of a 2xx answer (a list's ids joined by
	// ","), or "".
	ChargeID(status int, body []byte) string
	// ErrorBody is the Content-Type and body of an error answer of
	// status made by the fault layer.
	ErrorBody(status int) (contentType string, body []byte)
}

// describeIn reads req's key and body in d (nil: docs/provider-api.md).
func describeIn(d Dialect, req *http.Request, limit int64) (models.Exchange, []byte, error) {
	if d == nil {
		return describe(req, limit)
	}
	ex := models.Exchange{Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery, Dialect: d.Name()}
	body, err := requestBody(req, limit)
	if err != nil {
		return ex, nil, err
	}
	d.Describe(&ex, req.Header.Values(models.IdempotencyKeyHeader), body)
	return ex, body, nil
}

// chargeIDIn is the charge id of an answer in d (nil: chargeID's).
func chargeIDIn(d Dialect, status int, body []byte) string {
	if d == nil {
		return chargeID(status, body)
	}
	return d.ChargeID(status, body)
}

// inDialect rewrites a status fault's answer resp in d's error form.
func inDialect(d Dialect, resp *http.Response) {
	ct, body := d.ErrorBody(resp.StatusCode)
	resp.Header.Set("Content-Type", ct)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
}
