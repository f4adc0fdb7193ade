package faults

import "testing"

// chargeID reads a created charge's id, and the ids a find-by-reference
// found (so a report's lookup arrow can say what it found).
func TestChargeID(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		want   string
	}{
		{201, `{"id":"ch_000001","amount":1}`, "ch_000001"},
		{200, `{"data":[{"id":"ch_000001"},{"id":"ch_000002"}]}`, "ch_000001,ch_000002"},
		{200, `{"data":[]}`, ""},
		{402, `{"id":"ch_000001"}`, ""},
		{200, `not json`, ""},
	} {
		if got := chargeID(c.status, []byte(c.body)); got != c.want {
			t.Errorf("chargeID(%d, %s) = %q, want %q", c.status, c.body, got, c.want)
		}
	}
}
