package faults

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The in-process recorder answers as httptest.ResponseRecorder does, for
// every way a handler may write its answer: status, the header map as the
// status was written (later changes do not reach it), the sniffed
// Content-Type, the body.
func TestRecorderAnswersAsHttptest(t *testing.T) {
	handlers := map[string]http.HandlerFunc{
		"nothing written": func(http.ResponseWriter, *http.Request) {},
		"status only":     func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusConflict) },
		"json answer": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Add("Idempotent-Replayed", "true")
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"id":"ch_000001"}`))
		},
		"body without a type": func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<html>no</html>")) },
		"header after the status": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("A", "1")
			w.WriteHeader(http.StatusAccepted)
			w.Header().Set("A", "2")
			w.Header().Set("B", "3")
			_, _ = w.Write([]byte("x"))
		},
		"header after the body": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("x"))
			w.Header().Set("Late", "1")
			w.WriteHeader(http.StatusTeapot)
		},
		"empty type kept": func(w http.ResponseWriter, _ *http.Request) {
			w.Header()["Content-Type"] = nil
			_, _ = w.Write([]byte("{}"))
		},
		"flushed": func(w http.ResponseWriter, _ *http.Request) {
			w.(http.Flusher).Flush()
			w.Header().Set("Late", "1")
		},
		"a length given": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "2")
			_, _ = w.Write([]byte("{}"))
		},
		"headers read after the status": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Location", "/v1/charges/ch_000001")
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(w.Header().Get("Location"))) // a wrapper reading what it sent
		},
	}
	for name, h := range handlers {
		want := httptest.NewRecorder()
		h(want, nil)
		wres := want.Result()
		got := newRecorder()
		h(got, nil)
		res, body := got.result()
		assert.Equal(t, wres.StatusCode, res.StatusCode, name)
		assert.Equal(t, wres.Status, res.Status, name)
		assert.Equal(t, wres.Header, res.Header, name)
		assert.Equal(t, want.Body.String(), string(body), name)
		assert.Equal(t, wres.ContentLength, res.ContentLength, name)
	}
	assert.Panics(t, func() { newRecorder().WriteHeader(42) }, "an invalid status, as httptest and net/http")
	assert.Panics(t, func() { httptest.NewRecorder().WriteHeader(42) })
}
