package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/idemcheck/idemcheck/models"
)

// Kinds that answer in the provider's place without forwarding: nothing is
// charged. 429 carries Retry-After (Fault.RetryAfter seconds); 503 is
// transient in the reference dialect; 500 is an unknown outcome for a
// client that cannot know the request was never forwarded. 400 and 422 are
// a provider refusing the request as malformed or as a fingerprint
// mismatch: a contract violation the client must never retry (draft §2.6).
const (
	KindStatus400 Kind = "400"
	KindStatus422 Kind = "422"
	KindStatus429 Kind = "429"
	KindStatus500 Kind = "500"
	KindStatus503 Kind = "503"
)

func init() {
	for _, k := range []Kind{KindStatus400, KindStatus422, KindStatus429, KindStatus500, KindStatus503} {
		register(k, kind{
			describe: func(f Fault) string {
				if f.Kind == KindStatus429 {
					return "429 retry-after " + strconv.Itoa(f.RetryAfter) + "s"
				}
				return string(f.Kind)
			},
			apply: func(_ context.Context, f Fault, req *http.Request, _ forwardFunc) (*http.Response, error) {
				return statusResponse(req, f), nil
			},
		})
	}
}

func statusResponse(req *http.Request, f Fault) *http.Response {
	code, h, body := StatusAnswer(f)
	return &http.Response{
		Status:        strconv.Itoa(code) + " " + http.StatusText(code),
		StatusCode:    code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}

// StatusAnswer is what a status fault answers in the provider's place: the
// status code, headers (Content-Type application/problem+json; Retry-After
// in whole seconds for 429) and an RFC 9457 problem body. A wire that
// makes status faults natively (NativeFaults) answers the same.
func StatusAnswer(f Fault) (code int, h http.Header, body []byte) {
	code, _ = strconv.Atoi(string(f.Kind))
	body, _ = json.Marshal(models.Problem{Title: http.StatusText(code) + " (injected)", Status: code})
	h = http.Header{"Content-Type": {"application/problem+json"}}
	if f.Kind == KindStatus429 {
		h.Set("Retry-After", strconv.Itoa(f.RetryAfter))
	}
	return code, h, body
}

// IsStatus reports whether k is one of the status kinds (400, 422, 429,
// 500, 503), which answer without forwarding.
func IsStatus(k Kind) bool {
	switch k {
	case KindStatus400, KindStatus422, KindStatus429, KindStatus500, KindStatus503:
		return true
	}
	return false
}
