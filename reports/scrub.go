package reports

import (
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"sync"
)

// secrets are the values no report may hold (API keys), each with the
// marker that replaces it; every file this package writes passes through
// Scrub (writeFile, AppendStepSummary).
var secrets struct {
	mu    sync.Mutex // guards pairs, r
	pairs map[string]string
	r     *strings.Replacer
}

// RegisterSecret makes every report written from now on hold marker where
// it would hold s (s as it is, JSON- and URL-escaped). sut/remote registers
// both API keys when it builds a provider; "" is ignored. Safe for
// concurrent use.
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
	var old []string
	for k, m := range secrets.pairs {
		old = append(old, k, m)
		if q := url.QueryEscape(k); q != k {
			old = append(old, q, m)
		}
		if j, err := json.Marshal(k); err == nil && strings.Trim(string(j), `"`) != k {
			old = append(old, strings.Trim(string(j), `"`), m)
		}
	}
	secrets.r = strings.NewReplacer(old...)
}

// Scrub replaces every registered secret in b with its marker.
func Scrub(b []byte) []byte {
	secrets.mu.Lock()
	r := secrets.r
	secrets.mu.Unlock()
	if r == nil {
		return b
	}
	return []byte(r.Replace(string(b)))
}

// writeFile is os.WriteFile through Scrub: the one way this package
// writes a report file.
func writeFile(path string, b []byte, mode os.FileMode) error {
	return os.WriteFile(path, Scrub(b), mode)
}
