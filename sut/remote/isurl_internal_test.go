package remote

import (
	"net/url"
	"testing"

	"pgregory.net/rapid"
)

// TestIsURLAsParsed holds IsURL's quick refusal to what parsing the
// string says, on strings near a URL: any scheme's case, spaces and
// control characters before it, one slash, no host.
func TestIsURLAsParsed(t *testing.T) {
	parsed := func(s string) bool {
		u, err := url.Parse(s)
		return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
	}
	for _, s := range []string{"", "embedded", "wiremock", "http://127.0.0.1:8080", "HTTP://x", "hTtPs://x/y", "http:/x",
		"http:x", " http://x", "\thttp://x", "http://", "https://", "ftp://x", "http//x", "https:\\\\x", "http://[::1]:80", "Http://%zz"} {
		if got, want := IsURL(s), parsed(s); got != want {
			t.Errorf("IsURL(%q) = %v, parsing says %v", s, got, want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.SampledFrom([]string{"", " ", "\x00", "\x7f", "x"}).Draw(t, "before") +
			rapid.SampledFrom([]string{"http", "https", "HTTP", "hTTps", "htt", "httpx", "ftp", ""}).Draw(t, "scheme") +
			rapid.SampledFrom([]string{"://", ":/", ":", "//", ":\\\\", ""}).Draw(t, "sep") +
			rapid.String().Draw(t, "rest")
		if got, want := IsURL(s), parsed(s); got != want {
			t.Fatalf("IsURL(%q) = %v, parsing says %v", s, got, want)
		}
	})
}
