package reports_test

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/reports"
)

// Regression (breaker, issue 11): the scrubbers replaced a key only as it
// is and JSON- or URL-escaped as a whole, so "\u0073k_test…" (which a
// JSON decoder turns back into the key), a percent-encoding in lower-case
// hex, or the key base64-encoded in a Basic or Bearer credential went
// through; and with one key the prefix of the other, the second key was
// cut after the first one's length, its marker depending on map order.
func TestScrubber_EveryEchoedForm(t *testing.T) {
	const k1, k2 = "sk_test_a+b/c=XYZ012", "sk_test_a+b/c=XYZ012extra"
	s := reports.NewScrubber(k1, "[one]", k2, "[two]", "", "[none]")
	allU := func(k string) string {
		var b strings.Builder
		for i := 0; i < len(k); i++ {
			fmt.Fprintf(&b, `\u%04X`, k[i])
		}
		return b.String()
	}
	pct := func(k string) string {
		var b strings.Builder
		for i := 0; i < len(k); i++ {
			fmt.Fprintf(&b, "%%%02x", k[i])
		}
		return b.String()
	}
	b64 := base64.StdEncoding.EncodeToString
	for name, c := range map[string]struct{ in, want string }{
		"as it is":               {"id ch_" + k1 + "_1", "id ch_[one]_1"},
		"the longer key whole":   {"by " + k2 + ".", "by [two]."},
		"first byte \\u-escaped": {`"ch_\u0073` + k1[1:] + `"`, `"ch_[one]"`},
		"every byte \\U-escaped": {`"` + allU(k2) + `"`, `"[two]"`},
		"JSON \\/":               {`"sk_test_a+b\/c=XYZ012"`, `"[one]"`},
		"query-escaped":          {"?k=" + url.QueryEscape(k1), "?k=[one]"},
		"path-escaped":           {"/" + url.PathEscape(k1) + "/", "/[one]/"},
		"percent, lower hex":     {pct(k1), "[one]"},
		"base64 whole":           {b64([]byte(k1)), "[one]I="},
		"base64 Bearer":          {"Basic " + b64([]byte("Bearer "+k1)), "Basic QmVhcmVyIH[one]"},
		"base64 URL, key:":       {base64.URLEncoding.EncodeToString([]byte(k2 + ":")), "[two]To="},
		"no secret":              {"sk_test_other", "sk_test_other"},
	} {
		got := s.Replace(c.in)
		assert.Equal(t, c.want, got, name)
		assert.NotContains(t, got, k1[1:], name)
	}
}
