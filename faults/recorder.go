package faults

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
)

// recorder is the http.ResponseWriter an in-process provider answers
// into: what httptest.ResponseRecorder keeps, without its copy of the
// header map at WriteHeader and its second copy in Result (issue 29). As
// on the wire, what the handler does to the header map after the status
// is written does not reach the answer: the map is handed over then, and
// Header returns a new one.
type recorder struct {
	header http.Header
	sent   http.Header // the header map as the status was written; nil before
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header {
	if r.header == nil {
		r.header = http.Header{} // after the status: changes go nowhere
	}
	return r.header
}

func (r *recorder) WriteHeader(code int) {
	if r.sent != nil || code < 100 || code > 999 {
		return // a second status is ignored, as net/http does
	}
	r.status, r.sent, r.header = code, r.header, nil
	if r.sent == nil {
		r.sent = http.Header{}
	}
}

// Write writes the status 200 first if none was, with a Content-Type
// sniffed from b when the handler set none (as httptest.ResponseRecorder
// and net/http's server do).
func (r *recorder) Write(b []byte) (int, error) {
	if r.sent == nil {
		h := r.Header()
		if _, typed := h["Content-Type"]; !typed && h.Get("Transfer-Encoding") == "" {
			h.Set("Content-Type", http.DetectContentType(b))
		}
		r.WriteHeader(http.StatusOK)
	}
	return r.body.Write(b)
}

// Flush is a no-op: the answer is read once the handler returns.
func (r *recorder) Flush() { r.WriteHeader(http.StatusOK) }

// result is the handler's answer: its status (200 when it wrote
// nothing), the header map as the status was written, the body.
func (r *recorder) result() (*http.Response, []byte) {
	r.WriteHeader(http.StatusOK)
	body := r.body.Bytes()
	return &http.Response{
		Status: strconv.Itoa(r.status) + " " + http.StatusText(r.status), StatusCode: r.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: r.sent, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)),
	}, body
}
