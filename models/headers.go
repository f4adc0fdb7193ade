package models

import (
	"mime"
	"net/http"
	"strings"
)

// ResponseHeaders are the response headers of one answer that carry
// meaning for idempotency, as the answer carried them ("" when absent): a
// replay must repeat them (draft-ietf-httpapi-idempotency-key-header §2.6:
// a replay is the first response; RFC 9110 §10.2.2 Location, §8.3
// Content-Type, §10.2.3 Retry-After). Replay is the value of the replay
// header (Idempotent-Replayed in the reference dialect, or the profile's
// replay_header), which a first answer lacks and a replay may carry.
type ResponseHeaders struct {
	Location    string `json:"location,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	RetryAfter  string `json:"retry_after,omitempty"`
	Replay      string `json:"replay,omitempty"`
}

// HeadersOf reads the ResponseHeaders of h; replayHeader names the replay
// header ("" for ReplayedHeader, Idempotent-Replayed).
func HeadersOf(h http.Header, replayHeader string) ResponseHeaders {
	if replayHeader == "" {
		replayHeader = ReplayedHeader
	}
	return ResponseHeaders{
		Location:    h.Get("Location"),
		ContentType: h.Get("Content-Type"),
		RetryAfter:  h.Get("Retry-After"),
		Replay:      h.Get(replayHeader),
	}
}

// ReplayDiffers names the first header a replay changed from the first
// answer ("Location: /v1/charges/ch_000001 → absent"), or "" when it
// repeats them. The replay header is not compared: a replay may add it.
// Content-Type is compared by media type, so "application/json" and
// "application/json; charset=utf-8" are one.
func (first ResponseHeaders) ReplayDiffers(replay ResponseHeaders) string {
	for _, h := range []struct{ name, a, b string }{
		{"Location", first.Location, replay.Location},
		{"Content-Type", mediaType(first.ContentType), mediaType(replay.ContentType)},
		{"Retry-After", first.RetryAfter, replay.RetryAfter},
	} {
		if h.a != h.b {
			return h.name + ": " + orAbsent(h.a) + " → " + orAbsent(h.b)
		}
	}
	return ""
}

// IsProblem reports whether the Content-Type is RFC 9457's
// application/problem+json (parameters ignored).
func (h ResponseHeaders) IsProblem() bool { return mediaType(h.ContentType) == ProblemContentType }

// ProblemContentType is RFC 9457's media type for problem details.
const ProblemContentType = "application/problem+json"

func mediaType(ct string) string {
	switch ct {
	case "", "application/json", ProblemContentType: // as parsed, without parsing (issue 29)
		return ct
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(ct))
	}
	return mt
}

func orAbsent(s string) string {
	if s == "" {
		return "absent"
	}
	return s
}
