package remote

import (
	"fmt"
	"net/url"
	"strings"
)

// APIKey is a provider credential. It is sent as "Authorization: Bearer
// <key>" and is never printed: String, GoString, Format and MarshalJSON all
// render "[redacted]" (or "" for an empty key). Reveal is the one way to
// read it, and only the dialects call it.
type APIKey string

const redacted = "[redacted]"

// String redacts the key.
func (k APIKey) String() string {
	if k == "" {
		return ""
	}
	return redacted
}

// GoString redacts the key for %#v.
func (k APIKey) GoString() string { return `remote.APIKey("` + k.String() + `")` }

// Format redacts the key for every fmt verb, %x and %q included.
func (k APIKey) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, k.GoString())
		return
	}
	fmt.Fprint(f, k.String())
}

// MarshalJSON redacts the key.
func (k APIKey) MarshalJSON() ([]byte, error) { return []byte(`"` + k.String() + `"`), nil }

// MarshalText redacts the key (encoding/xml, flag printing, map keys).
func (k APIKey) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Reveal returns the key itself, for the Authorization header.
func (k APIKey) Reveal() string { return string(k) }

// livePrefixes are the markers of production credentials refused before
// any request, matched anywhere in the key and in any case (a key pasted
// as "Bearer SK_LIVE_…" is still live): Stripe's secret, restricted and
// publishable live keys (Paystack uses the same sk_live_ / pk_live_),
// Razorpay's rzp_live_; docs/profiles.md lists them.
var livePrefixes = []string{"sk_live_", "rk_live_", "pk_live_", "rzp_live_"}

// liveStarts are markers of a live credential at the start of the key
// only (case-insensitive): Mollie's and GoCardless's live_ tokens. A key
// pasted with its authorization scheme ("Bearer live_…", "token LIVE_…")
// is checked after the scheme name too.
var liveStarts = []string{"live_"}

// LooksLive reports whether the key looks like a production credential
// (livePrefixes anywhere, liveStarts at its start or after a leading
// authorization scheme name; any letter case).
func (k APIKey) LooksLive() bool { return k.livePrefix() != "" }

// livePrefix is the live marker the key holds, or "".
func (k APIKey) livePrefix() string {
	low := strings.ToLower(strings.TrimSpace(string(k)))
	for _, p := range livePrefixes {
		if strings.Contains(low, p) {
			return p
		}
	}
	starts := []string{low}
	if scheme, rest, ok := strings.Cut(strings.ReplaceAll(low, "\t", " "), " "); ok && isToken(scheme) {
		// "Bearer live_…", "BEARER LIVE_…", "Token live_…": any scheme
		// name (RFC 9110 §11.1: a token), in any case.
		starts = append(starts, strings.TrimLeft(rest, " "))
	}
	for _, s := range starts {
		for _, p := range liveStarts {
			if strings.HasPrefix(s, p) {
				return p
			}
		}
	}
	return ""
}

// isToken reports whether s is an RFC 9110 token (§5.6.2): one or more
// tchar, as an authorization scheme name is.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// liveInURL is the live marker (livePrefixes, any case) a base URL holds
// anywhere — user info, path, query, even percent-encoded — or "".
func liveInURL(raw string) string {
	low := strings.ToLower(raw)
	if u, err := url.PathUnescape(raw); err == nil {
		low += " " + strings.ToLower(u)
	}
	for _, p := range livePrefixes {
		if strings.Contains(low, p) {
			return p
		}
	}
	return ""
}

// validHeader reports whether "Bearer <key>" is a valid header value
// (RFC 9110 §5.5): no CR, LF, NUL or other control byte but tab.
func (k APIKey) validHeader() bool {
	for i := 0; i < len(k); i++ {
		if b := k[i]; (b < ' ' && b != '\t') || b == 0x7f {
			return false
		}
	}
	return true
}
