package reports_test

import (
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/reports"
)

// TestScrubCutDropsPartialKey: text cut inside a registered key keeps no
// prefix of it (4 bytes or more) in any form the Scrubber reads, and
// loses nothing else.
func TestScrubCutDropsPartialKey(t *testing.T) {
	const key = "sk_test_cutKEY0123456789"
	reports.RegisterSecret(key, "[redacted]")
	b64 := base64.StdEncoding.EncodeToString([]byte(key))
	for cutText, want := range map[string]string{
		"out: " + key[:21]:            "out: ",
		"out: SK_TEST_CU":             "out: ",
		"out: sk%5Ftest_c":            "out: ",
		`out: sk\u005ftest`:           "out: ",
		`out: sk_t\u00`:               "out: ",
		"out: " + b64[:12]:            "out: ",
		"out: " + key + " then sk_te": "out: [redacted] then ",
		"out: sk_":                    "out: sk_",
		"out: nothing secret":         "out: nothing secret",
	} {
		got, dropped := reports.ScrubCut([]byte(cutText))
		assert.Equal(t, want, string(got), cutText)
		assert.Equal(t, len(reports.Scrub([]byte(cutText)))-len(want), dropped, cutText)
	}
}
