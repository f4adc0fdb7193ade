package faults

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// recorder is the http.ResponseWriter an in-process provider answers
// into: what httptest.ResponseRecorder keeps, without its copy of the
// header map at WriteHeader and its second copy in Result (issue 29). As
// on the wire and in httptest, what the handler does to the header map
// after the status is written does not reach the answer: the map is
// handed over then, and a later Header returns a copy of it (made only
// if a handler asks). Trailers are not kept (no provider here sends one).
type recorder struct {
	header http.Header // what Header returns; nil after the status until asked for again
	sent   http.Header // the header map as the status was written; nil before
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header {
	if r.header == nil {
		r.header = r.sent.Clone() // after the status: what was written, changes go nowhere
	}
	return r.header
}

// WriteHeader writes the status once (a second is ignored, as net/http
// does); a code outside 100-999 panics, as in net/http and httptest.
func (r *recorder) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if r.sent != nil {
		return
	}
	r.status, r.sent, r.header = code, r.header, nil
}

// Write writes the status 200 first if none was, with a Content-Type
// sniffed from b when the handler set none (as httptest.ResponseRecorder
// and net/http's server do).
func (r *recorder) Write(b []byte) (int, error) {
	if r.sent == nil {
		h := r.header
		if _, typed := h["Content-Type"]; !typed && h.Get("Transfer-Encoding") == "" {
			h.Set("Content-Type", http.DetectContentType(b))
		}
		r.WriteHeader(http.StatusOK)
	}
	return r.body.Write(b)
}

// Flush is a no-op: the answer is read once the handler returns.
func (r *recorder) Flush() {
	if r.sent == nil {
		r.WriteHeader(http.StatusOK)
	}
}

// result is the handler's answer: its status (200 when it wrote
// nothing), the header map as the status was written, the body, and its
// ContentLength as httptest gives it (the Content-Length header's, else -1).
func (r *recorder) result() (*http.Response, []byte) {
	if r.sent == nil {
		r.WriteHeader(http.StatusOK)
	}
	body := r.body.Bytes()
	length := int64(-1)
	if v := r.sent.Get("Content-Length"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			length = n
		}
	}
	return &http.Response{
		Status: strconv.Itoa(r.status) + " " + http.StatusText(r.status), StatusCode: r.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: r.sent, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: length,
	}, body
}
