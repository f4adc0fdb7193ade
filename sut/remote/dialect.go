package remote

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// The dialects.
const (
	// DialectReference is docs/provider-api.md as it is.
	DialectReference = "reference"
	// DialectStripe is a Stripe-style API (stripe.go).
	DialectStripe = models.DialectStripe
)

// Dialect maps the docs/provider-api.md operations — create a charge, read its
// outcome, find charges by merchant reference, classify a status — onto
// one provider's API. The harness speaks docs/provider-api.md; a dialect translates
// each request onto the wire and each answer back.
type Dialect interface {
	// Name is the dialect's name in profiles and reports.
	Name() string
	// Send sends req, a docs/provider-api.md request (POST /v1/charges, or GET
	// /v1/charges?merchant_reference=REF), to the provider at base through
	// next, authenticated with key, and returns the provider's answer in
	// docs/provider-api.md terms (status codes, JSON bodies).
	Send(next http.RoundTripper, base *url.URL, key APIKey, req *http.Request) (*http.Response, error)
}

// dialectNamed is the dialect called name; replayHeader is the profile's
// replay_header, which a translating dialect passes through, and maxBody
// the body cap it reads with (Limits.MaxBody; 0 is faults.DefaultMaxBody).
func dialectNamed(name, replayHeader string, maxBody int64) (Dialect, error) {
	switch name {
	case DialectReference, "":
		return referenceDialect{}, nil
	case DialectStripe:
		return stripeDialect{replayHeader: replayHeader, maxBody: maxBody}, nil
	}
	return nil, fmt.Errorf("remote: unknown dialect %q (reference or stripe)", name)
}

// referenceDialect sends docs/provider-api.md requests unchanged, to base.
// A create's answer in the profile's own status for a key in flight
// (statuses.in_flight: 425, 429 or 503 for some providers) is read as
// 409, and in its own status for a reused key with another body
// (statuses.mismatch) as 422, unless that status is 400, which a
// missing key or an invalid body also answer (docs/profiles.md).
type referenceDialect struct {
	statuses Statuses // the profile's; 0 fields are the draft's 400 / 422 / 409
}

func (referenceDialect) Name() string { return DialectReference }

func (d referenceDialect) Send(next http.RoundTripper, base *url.URL, key APIKey, req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.URL = onBase(base, req.URL.Path, req.URL.RawQuery)
	out.Host = ""
	out.RequestURI = ""
	authorize(out, key)
	resp, err := next.RoundTrip(out)
	if err == nil && req.Method == http.MethodPost {
		d.mapStatus(resp)
	}
	return resp, err
}

// mapStatus rewrites a create's answer in the profile's in-flight or
// mismatch status to the draft's 409 or 422; the body and headers stay.
func (d referenceDialect) mapStatus(resp *http.Response) {
	to := 0
	switch s := resp.StatusCode; {
	case d.statuses.InFlight != 0 && s == d.statuses.InFlight:
		to = http.StatusConflict
	case d.statuses.Mismatch != 0 && d.statuses.Mismatch != http.StatusBadRequest && s == d.statuses.Mismatch:
		to = http.StatusUnprocessableEntity
	}
	if to != 0 && to != resp.StatusCode {
		resp.StatusCode, resp.Status = to, strconv.Itoa(to)+" "+http.StatusText(to)
	}
}

// onBase is base with path appended to its own path and query set.
func onBase(base *url.URL, path, rawQuery string) *url.URL {
	u := *base
	u.Path = trimSlash(base.Path) + path
	u.RawPath = ""
	u.RawQuery = rawQuery
	return &u
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

// authorize sets "Authorization: Bearer <key>", or removes the header for
// an empty key.
func authorize(r *http.Request, key APIKey) {
	if key == "" {
		r.Header.Del("Authorization")
		return
	}
	r.Header.Set("Authorization", "Bearer "+key.Reveal())
}

// newResponse builds the docs/provider-api.md answer a dialect translated.
func newResponse(req *http.Request, status int, header http.Header, body []byte) *http.Response {
	if header == nil {
		header = http.Header{}
	}
	header.Set("Content-Length", strconv.Itoa(len(body)))
	return &http.Response{
		Status: strconv.Itoa(status) + " " + http.StatusText(status), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: header, Body: io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)), Request: req,
	}
}

// RetryAfter is the wait a 429 or 503 answer asks for in its Retry-After
// header (ParseRetryAfter), or 0 when it names none. Retry-After is a
// singleton field; of several lines the longest wait holds, so that
// nothing is sent before any of them expires.
func RetryAfter(resp *http.Response, now time.Time) time.Duration {
	var d time.Duration
	for _, v := range resp.Header.Values("Retry-After") {
		if w, ok := ParseRetryAfter(v, now); ok {
			d = max(d, w)
		}
	}
	return d
}

// maxRetryAfter is where a Retry-After is clamped: 100 years, beyond any
// run (and far from time.Duration's 292-year overflow).
const maxRetryAfter = 100 * 365 * 24 * time.Hour

// ParseRetryAfter reads a Retry-After value as RFC 9110 §10.2.3 defines
// it: delay-seconds (1*DIGIT, a non-negative decimal integer) or an
// HTTP-date (IMF-fixdate, or the obsolete RFC 850 and asctime forms); ok
// is false for anything else ("-5", "1.5", "", "soon"). A delay too large
// for a time.Duration (18446744074 s) is clamped to 100 years, never
// wrapped around; a date in the past is a wait of 0.
func ParseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if strings.Trim(v, "0123456789") == "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil || s > uint64(maxRetryAfter/time.Second) {
			return maxRetryAfter, true // ErrRange: more digits than uint64 holds
		}
		return time.Duration(s) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	if !t.After(now) {
		return 0, true
	}
	return min(t.Sub(now), maxRetryAfter), true
}
