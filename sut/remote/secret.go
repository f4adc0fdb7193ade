package remote

import (
	"fmt"
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

// livePrefixes are the prefixes of production credentials refused before
// any request: Stripe-style secret and restricted live keys.
var livePrefixes = []string{"sk_live_", "rk_live_"}

// LooksLive reports whether the key looks like a production credential:
// it holds a live prefix anywhere (a key pasted as "Bearer sk_live_…" is
// still live).
func (k APIKey) LooksLive() bool {
	for _, p := range livePrefixes {
		if strings.Contains(string(k), p) {
			return true
		}
	}
	return false
}
