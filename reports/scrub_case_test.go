package reports_test

import (
	"net/textproto"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/reports"
)

// Regression (issue 11, left out by the catalogue): the scrubber matched a
// key only in its own case, so a provider echoing it upper-cased, or as a
// header name (which net/http canonicalizes: "X-Sk_test_…", the rest
// lower-cased), went through to the reports.
func TestScrubber_AnyCase(t *testing.T) {
	const k = "sk_test_CaSe0123xyz"
	s := reports.NewScrubber(k, "[one]")
	for name, c := range map[string]struct{ in, want string }{
		"upper-cased":         {"id ch_" + strings.ToUpper(k) + "_1", "id ch_[one]_1"},
		"lower-cased":         {strings.ToLower(k) + "!", "[one]!"},
		"canonical header":    {textproto.CanonicalMIMEHeaderKey("x-" + k), "X-[one]"},
		"twice, mixed":        {k + " " + strings.ToUpper(k), "[one] [one]"},
		"non-ASCII around it": {"é" + strings.ToUpper(k) + "İ", "é[one]İ"},
		"another key":         {"sk_test_case0123xy", "sk_test_case0123xy"},
		"no secret, any case": {"SK_TEST_OTHER", "SK_TEST_OTHER"},
		"escaped as before":   {`"\u0073k_test_CaSe0123xyz"`, `"[one]"`},
	} {
		assert.Equal(t, c.want, s.Replace(c.in), name)
	}
}
