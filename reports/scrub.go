package reports

import (
	"cmp"
	"encoding/base64"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// secrets are the values no report may hold (API keys), each with the
// marker that replaces it; every file this package writes passes through
// Scrub (writeFile, AppendStepSummary).
var secrets struct {
	mu    sync.Mutex // guards pairs, s
	pairs map[string]string
	s     *Scrubber
}

// RegisterSecret makes every report written from now on hold marker where
// it would hold s, in any form a Scrubber finds. sut/remote registers both
// API keys when it builds a provider; "" is ignored. Safe for concurrent
// use.
func RegisterSecret(s, marker string) {
	if s == "" {
		return
	}
	secrets.mu.Lock()
	defer secrets.mu.Unlock()
	if secrets.pairs == nil {
		secrets.pairs = map[string]string{}
	}
	secrets.pairs[s] = marker
	var pairs []string
	for k, m := range secrets.pairs {
		pairs = append(pairs, k, m)
	}
	secrets.s = NewScrubber(pairs...)
}

// Scrub replaces every registered secret in b with its marker.
func Scrub(b []byte) []byte {
	secrets.mu.Lock()
	s := secrets.s
	secrets.mu.Unlock()
	if s == nil {
		return b
	}
	return []byte(s.Replace(string(b)))
}

// writeFile is os.WriteFile through Scrub: the one way this package
// writes a report file.
func writeFile(path string, b []byte, mode os.FileMode) error {
	return os.WriteFile(path, Scrub(b), mode)
}

// Scrubber replaces secrets with their markers in every form a provider
// may echo them: as they are, in any ASCII case (upper-cased, or in a
// header name net/http canonicalized); with any of their bytes JSON-escaped
// (\u0073, \/) or percent-encoded (%73, %2F, %2f; "+" for a space), in
// any mix and hex case; and base64-encoded (standard or URL alphabet, at
// any offset of a longer base64 text such as "Bearer <key>" or "<key>:"
// encoded; the one or two characters a neighbour shares stay). A longer
// secret is replaced before a shorter one, so a secret that holds another
// is replaced whole. It is safe for concurrent use.
type Scrubber struct{ forms []secretForms }

// secretForms is one secret, its marker and its base64 forms.
type secretForms struct {
	secret, marker string
	base64         []string
}

// NewScrubber scrubs pairs: a secret, its marker, and so on; an empty
// secret is ignored.
func NewScrubber(pairs ...string) *Scrubber {
	s := &Scrubber{}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i] != "" {
			s.forms = append(s.forms, secretForms{secret: pairs[i], marker: pairs[i+1], base64: base64Forms(pairs[i])})
		}
	}
	slices.SortFunc(s.forms, func(a, b secretForms) int {
		return cmp.Or(cmp.Compare(len(b.secret), len(a.secret)), strings.Compare(a.secret, b.secret))
	})
	return s
}

// Replace is text with every secret, in every form, replaced.
func (s *Scrubber) Replace(text string) string {
	for _, f := range s.forms {
		text = replaceFold(text, f.secret, f.marker)
		text = replaceEscaped(text, f.secret, f.marker)
		for _, b := range f.base64 {
			text = strings.ReplaceAll(text, b, f.marker)
		}
	}
	return text
}

// replaceFold replaces secret in text in any ASCII case: a provider may
// echo a key upper-cased, and net/http canonicalizes a header name that
// holds one ("X-Sk_test_abc…", the rest lower-cased).
func replaceFold(text, secret, marker string) string {
	low, sec := asciiLower(text), asciiLower(secret)
	if !strings.Contains(low, sec) {
		return text
	}
	var b strings.Builder
	last := 0
	for {
		i := strings.Index(low[last:], sec)
		if i < 0 {
			break
		}
		b.WriteString(text[last : last+i])
		b.WriteString(marker)
		last += i + len(sec)
	}
	b.WriteString(text[last:])
	return b.String()
}

// asciiLower is s with A–Z lower-cased and every other byte kept, so that
// its byte offsets are those of s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// replaceEscaped replaces secret in text where some of its bytes are
// escaped (matchEscaped).
func replaceEscaped(text, secret, marker string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(text); i++ {
		if c := text[i]; c != secret[0] && c != '%' && c != '\\' && c != '+' {
			continue
		}
		n := matchEscaped(text[i:], secret)
		if n == 0 {
			continue
		}
		b.WriteString(text[last:i])
		b.WriteString(marker)
		last = i + n
		i = last - 1
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// matchEscaped is the length of the secret at the start of t, each of its
// bytes as it is, %XX, \u00XX, "\/" for "/" or "+" for a space; 0 when t
// does not start with it.
func matchEscaped(t, secret string) int {
	j := 0
	for k := 0; k < len(secret); k++ {
		c := secret[k]
		switch {
		case j+3 <= len(t) && t[j] == '%' && hexByte(t[j+1:j+3], c):
			j += 3
		case j+6 <= len(t) && strings.HasPrefix(t[j:], `\u00`) && hexByte(t[j+4:j+6], c):
			j += 6
		case c == '/' && strings.HasPrefix(t[j:], `\/`):
			j += 2
		case c == ' ' && j < len(t) && t[j] == '+', j < len(t) && t[j] == c:
			j++
		default:
			return 0
		}
	}
	return j
}

// hexByte reports whether h, two hex digits in any case, is c.
func hexByte(h string, c byte) bool {
	v, err := strconv.ParseUint(h, 16, 8)
	return err == nil && byte(v) == c
}

// minBase64 is the shortest secret whose base64 forms are scrubbed: the
// form of a shorter one could match text that merely looks like it.
const minBase64 = 8

// base64Forms are the parts of secret's base64 encodings (standard and
// URL alphabet, at the three offsets a longer text may put it at) that
// only secret's bits decide.
func base64Forms(secret string) []string {
	var forms []string
	if len(secret) < minBase64 {
		return nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for off := range 3 {
			e := enc.EncodeToString(append(make([]byte, off), secret...))
			if core := e[(8*off+5)/6 : 8*(off+len(secret))/6]; !slices.Contains(forms, core) {
				forms = append(forms, core)
			}
		}
	}
	return forms
}

// minPartial is the shortest prefix of a secret ScrubCut drops at a cut.
const minPartial = 4

// ScrubCut is Scrub for text cut off after its last byte (a capped hook
// output): besides every whole registered secret, a prefix of one (at
// least 4 bytes, in any form Scrubber finds) that b ends with is dropped,
// since the rest of it was cut. It returns the scrubbed text and how many
// bytes of b's end were dropped.
func ScrubCut(b []byte) ([]byte, int) {
	secrets.mu.Lock()
	s := secrets.s
	secrets.mu.Unlock()
	if s == nil {
		return b, 0
	}
	text := s.Replace(string(b))
	cut := len(text)
	for _, f := range s.forms {
		cut = min(cut, partialAt(text, f))
	}
	return []byte(text[:cut]), len(text) - cut
}

// partialAt is where text's trailing prefix of f's secret begins (as it
// is in any case, escaped, or base64-encoded), len(text) for none.
func partialAt(text string, f secretForms) int {
	low, sec := asciiLower(text), asciiLower(f.secret)
	from := max(0, len(text)-6*len(f.secret)) // \u00XX is the longest form of a byte
	for i := from; i <= len(text)-minPartial; i++ {
		t := text[i:]
		if n := len(low) - i; n < len(sec) && strings.HasPrefix(sec, low[i:]) {
			return i
		}
		if escapedPrefix(t, f.secret) {
			return i
		}
		for _, b := range f.base64 {
			if len(t) < len(b) && strings.HasPrefix(b, t) {
				return i
			}
		}
	}
	return len(text)
}

// escapedPrefix reports whether t is a prefix of secret, at least
// minPartial of its bytes, each as it is, %XX, \u00XX, "\/" or "+" (the
// forms matchEscaped reads), perhaps with its last byte's form cut short.
func escapedPrefix(t, secret string) bool {
	j, k := 0, 0
	for ; k < len(secret) && j < len(t); k++ {
		n := matchEscaped(t[j:], secret[k:k+1])
		if n == 0 {
			break
		}
		j += n
	}
	if j == len(t) {
		return k >= minPartial && k < len(secret)
	}
	// the last byte's escape cut short: "%7", "\u00"
	rest := t[j:]
	return k >= minPartial-1 && k < len(secret) && len(rest) < 6 && (strings.HasPrefix(`\u00`, rest[:min(len(rest), 4)]) || rest[0] == '%' && len(rest) < 3 || rest == `\`)
}
