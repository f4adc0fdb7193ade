package models_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/models"
)

// TestSpec_MismatchInFlightAllows409: another body while the key's first
// request is processing (a double click carrying another amount) may be
// refused with 409 or 422, never processed.
func TestSpec_MismatchInFlightAllows409(t *testing.T) {
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s, _ := models.NewSpec(time.Hour).Arrive("k", true, "fp1", start)
	_, x := s.Arrive("k", true, "fp2", start.Add(time.Millisecond))
	assert.Equal(t, models.ExpectMismatch, x.Kind)
	assert.True(t, x.Matches(409, ""), "409 while in flight")
	assert.True(t, x.Matches(422, ""))
	assert.False(t, x.Matches(201, "d"), "never a charge")
	s = s.Complete("k", 201, "d1", start.Add(time.Second))
	_, x = s.Arrive("k", true, "fp2", start.Add(2*time.Second))
	assert.False(t, x.Matches(409, ""), "once completed, 422 only")
	assert.False(t, x.Matches(201, "d1"), "nor the stored charge")
}

// TestSpec_MismatchUnderDeclineAllowsTheStoredDecline: another card under
// a declined key gets 422 or the stored 402, never a charge or another
// decline.
func TestSpec_MismatchUnderDeclineAllowsTheStoredDecline(t *testing.T) {
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s, _ := models.NewSpec(time.Hour).Arrive("k", true, "declined", start)
	s = s.Complete("k", 402, "dc1", start.Add(time.Second))
	_, x := s.Arrive("k", true, "visa", start.Add(2*time.Second))
	assert.True(t, x.Matches(422, ""))
	assert.True(t, x.Matches(402, "dc1"), "the stored decline")
	assert.False(t, x.Matches(402, "dc2"), "not another decline")
	assert.False(t, x.Matches(201, "ch"), "never a charge")
	assert.False(t, x.Matches(409, ""))
}

// TestResponseHeaders_ReplayDiffers: a replay repeats Location,
// Content-Type (by media type) and Retry-After; it may add the replay
// header.
func TestResponseHeaders_ReplayDiffers(t *testing.T) {
	h := http.Header{}
	h.Set("Location", "/v1/charges/ch_000001")
	h.Set("Content-Type", "application/json")
	first := models.HeadersOf(h, "")
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set(models.ReplayedHeader, "true")
	replay := models.HeadersOf(h, "")
	assert.Equal(t, "true", replay.Replay)
	assert.Empty(t, first.ReplayDiffers(replay))
	h.Del("Location")
	assert.Equal(t, "Location: /v1/charges/ch_000001 → absent", first.ReplayDiffers(models.HeadersOf(h, "")))
	h.Set("Location", "/v1/charges/ch_000001")
	h.Set("Content-Type", "text/plain")
	assert.Equal(t, "Content-Type: application/json → text/plain", first.ReplayDiffers(models.HeadersOf(h, "")))
	h.Set("Content-Type", "application/problem+json; charset=utf-8")
	assert.True(t, models.HeadersOf(h, "").IsProblem())
}
