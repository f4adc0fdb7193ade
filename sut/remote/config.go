package remote

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/reports"
)

// Config configures a remote provider run. FromEnv reads it from the
// environment; it can also be filled in Go. The zero value of a field means
// its default.
type Config struct {
	// BaseURL is the provider's base URL, http(s)://host[:port][/path];
	// requests go to BaseURL + "/v1/charges" (a path is kept as a prefix of
	// every request). IDEMCHECK_PROVIDER.
	BaseURL string
	// Dialect is "reference" or "stripe"; default the profile's.
	// IDEMCHECK_DIALECT.
	Dialect string
	// APIKey is sent as "Authorization: Bearer <key>"; never printed.
	// IDEMCHECK_API_KEY.
	APIKey APIKey
	// SecondAPIKey is a second account's key, for the cross-account
	// requirement; "" leaves it NOT JUDGED. IDEMCHECK_API_KEY_2.
	SecondAPIKey APIKey
	// APIKeyFrom and SecondAPIKeyFrom name where each key came from (the
	// variable, or the field set in Go), in a refusal; default
	// IDEMCHECK_API_KEY and IDEMCHECK_API_KEY_2.
	APIKeyFrom, SecondAPIKeyFrom string
	// ProfilePath is the provider profile to load; "" to judge the
	// provider against the draft alone (DraftProfile: none of
	// refprovider's or stripe-mock's own claims). IDEMCHECK_PROFILE.
	ProfilePath string
	// Profile is the loaded profile; set by FromEnv or by the caller.
	Profile Profile
	// Limits bound the run.
	Limits Limits
	// RunID tags every merchant reference of the run; default a fresh
	// random id.
	RunID string
	// Hooks are the lifecycle hooks (--hook-restart, …; IDEMCHECK_HOOK_*);
	// Validate puts each set one over the profile's lifecycle.hooks.
	Hooks Hooks
}

// Limits are a run's budgets; a run stops with INCONCLUSIVE verdicts
// rather than exceed one. Zero means the default.
type Limits struct {
	// MaxRequests bounds the HTTP requests sent to the provider; default
	// 20 000, a full run (100 sequences and one deviation shrunk to its end
	// took 5 208 against refprovider). IDEMCHECK_MAX_REQUESTS.
	MaxRequests int
	// MaxCharges bounds the POSTs sent to the provider, creates (POST
	// /v1/charges) and refunds (POST /v1/refunds): each may move money, so
	// this bounds charges even for a provider that charges on every
	// request; default 10 000.
	// IDEMCHECK_MAX_CHARGES.
	MaxCharges int
	// MaxDuration bounds the run's wall-clock time, requests in flight at
	// its end included (they are ended then); default 30m.
	// IDEMCHECK_MAX_DURATION (a Go duration, "90s").
	MaxDuration time.Duration
	// MaxBody caps each answer's body, in bytes: a longer one is not read
	// past the cap and is recorded as oversize; default 1 MiB
	// (faults.DefaultMaxBody). IDEMCHECK_MAX_BODY.
	MaxBody int64
}

// Defaults of Limits.
const (
	DefaultMaxRequests = 20000
	DefaultMaxCharges  = 10000
	DefaultMaxDuration = 30 * time.Minute
)

func (l Limits) withDefaults() Limits {
	if l.MaxRequests <= 0 {
		l.MaxRequests = DefaultMaxRequests
	}
	if l.MaxCharges <= 0 {
		l.MaxCharges = DefaultMaxCharges
	}
	if l.MaxDuration <= 0 {
		l.MaxDuration = DefaultMaxDuration
	}
	if l.MaxBody <= 0 {
		l.MaxBody = faults.DefaultMaxBody
	}
	return l
}

// ErrLiveCredential is returned, before any request is sent, for a key
// that looks live (APIKey.LooksLive: sk_live_, rk_live_, pk_live_, … in
// any case) or a profile whose environment is production.
var ErrLiveCredential = errors.New("remote: refusing to run against a live (production) credential or environment")

// ErrInvalidKey is returned, before any request is sent, for a key that
// cannot be sent in a header: it holds CR, LF or another control byte.
var ErrInvalidKey = errors.New("remote: refusing an API key with a character not allowed in a header value (CR, LF or another control byte)")

// sameKeyError is a second key equal to the first: errors.Is
// ErrInvalidKey, and says what is wrong rather than ErrInvalidKey's words.
type sameKeyError struct{ first, second string }

func (e sameKeyError) Error() string {
	return fmt.Sprintf("remote: refusing %s: it is the same key as %s (one account twice); the second account needs a key of its own", e.second, e.first)
}
func (sameKeyError) Is(target error) bool { return target == ErrInvalidKey }

// ErrInsecure is returned for an http:// URL to a host that is not
// loopback when an API key would be sent in the clear.
var ErrInsecure = errors.New("remote: refusing to send an API key over plain http to a non-loopback host")

// FromEnv reads IDEMCHECK_PROVIDER, IDEMCHECK_DIALECT, IDEMCHECK_API_KEY,
// IDEMCHECK_API_KEY_2, IDEMCHECK_PROFILE, IDEMCHECK_MAX_REQUESTS,
// IDEMCHECK_MAX_CHARGES, IDEMCHECK_MAX_DURATION and IDEMCHECK_MAX_BODY. BaseURL is "" unless
// IDEMCHECK_PROVIDER is an http(s) URL. An unusable value is an error
// naming the variable (never its value, for the key).
func FromEnv() (Config, error) {
	c := Config{
		Dialect:      os.Getenv("IDEMCHECK_DIALECT"),
		APIKey:       APIKey(os.Getenv("IDEMCHECK_API_KEY")),
		SecondAPIKey: APIKey(os.Getenv("IDEMCHECK_API_KEY_2")),
		ProfilePath:  os.Getenv("IDEMCHECK_PROFILE"),
	}
	if p := os.Getenv("IDEMCHECK_PROVIDER"); IsURL(p) {
		c.BaseURL = p
	}
	for name, dst := range map[string]*int{"IDEMCHECK_MAX_REQUESTS": &c.Limits.MaxRequests, "IDEMCHECK_MAX_CHARGES": &c.Limits.MaxCharges} {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return c, fmt.Errorf("remote: %s=%q is not a positive integer", name, v)
			}
			*dst = n
		}
	}
	if v := os.Getenv("IDEMCHECK_MAX_BODY"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return c, fmt.Errorf("remote: IDEMCHECK_MAX_BODY=%q is not a positive number of bytes", v)
		}
		c.Limits.MaxBody = n
	}
	if v := os.Getenv("IDEMCHECK_MAX_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("remote: IDEMCHECK_MAX_DURATION=%q is not a positive Go duration", v)
		}
		c.Limits.MaxDuration = d
	}
	h, err := hooksFromEnv()
	if err != nil {
		return c, err
	}
	c.Hooks = h
	if c.ProfilePath != "" {
		p, err := LoadProfile(c.ProfilePath)
		if err != nil {
			return c, err
		}
		c.Profile = p
	}
	return c, nil
}

// IsURL reports whether s is an absolute http or https URL with a host.
// A string that does not begin with "http://" or "https://" (in any case)
// is none, and is told so without parsing it: the state machine asks at
// its steps, of a provider that is mostly "embedded" (issue 29).
func IsURL(s string) bool {
	if !hasFold(s, "http://") && !hasFold(s, "https://") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// hasFold reports whether s begins with prefix, ASCII case folded.
func hasFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// Validate fills defaults and applies the safety rails, before any
// request: a key with a control character is ErrInvalidKey; a
// live-looking key or a production profile is ErrLiveCredential; a key
// over plain http to a non-loopback host is ErrInsecure; an unknown
// dialect, a dialect other than the profile's or a base URL with a query
// or fragment is an error. Without a
// profile the provider is judged against the draft alone (DraftProfile).
func (c Config) Validate() (Config, error) {
	first, second := cmp.Or(c.APIKeyFrom, "IDEMCHECK_API_KEY"), cmp.Or(c.SecondAPIKeyFrom, "IDEMCHECK_API_KEY_2")
	for _, k := range []struct {
		name string
		key  APIKey
	}{{first, c.APIKey}, {second, c.SecondAPIKey}} {
		if !k.key.validHeader() {
			return c, fmt.Errorf("%w: %s", ErrInvalidKey, k.name)
		}
		if p := k.key.livePrefix(); p != "" {
			return c, fmt.Errorf("%w: %s has a live marker (%s, in any case)", ErrLiveCredential, k.name, p)
		}
	}
	if c.SecondAPIKey != "" && c.SecondAPIKey == c.APIKey {
		// One account twice: the cross-account requirement would fail a
		// correct provider for replaying an account's own key.
		return c, sameKeyError{first, second}
	}
	if p := liveInURL(c.BaseURL); p != "" {
		// A live credential pasted into the URL (user info, path or
		// query) goes to the provider with every request.
		name := "the provider URL" // given by the caller (idemcheck certify's argument)
		if os.Getenv("IDEMCHECK_PROVIDER") == c.BaseURL {
			name = "IDEMCHECK_PROVIDER"
		}
		return c, fmt.Errorf("%w: %s has a live marker (%s, in any case)", ErrLiveCredential, name, p)
	}
	if c.Profile.Name == "" && c.Profile.Dialect == "" {
		c.Profile = DraftProfile(c.Dialect)
	}
	p, err := c.Profile.withDefaults()
	if err != nil {
		return c, err
	}
	c.Profile = p
	if err := c.Hooks.check(); err != nil {
		return c, fmt.Errorf("remote: %w", err)
	}
	c.Hooks = p.Lifecycle.Hooks.Over(c.Hooks)
	if p.Environment == EnvProduction {
		return c, fmt.Errorf("%w: profile %q declares environment production", ErrLiveCredential, p.Name)
	}
	if c.Dialect == "" {
		c.Dialect = p.Dialect
	}
	if c.Dialect != p.Dialect {
		return c, fmt.Errorf("remote: dialect %q differs from profile %q's dialect %q", c.Dialect, p.Name, p.Dialect)
	}
	if _, err := dialectNamed(c.Dialect, "", 0); err != nil {
		return c, err
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || !IsURL(c.BaseURL) {
		return c, fmt.Errorf("remote: base URL %q is not an http(s) URL", c.BaseURL)
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(c.BaseURL, "#") {
		// The paths are appended to the base URL as text: they would
		// land in its query, and the query in every report.
		return c, fmt.Errorf("remote: base URL %s has a query or fragment: give the provider's root (scheme, host, path) only", reports.RedactURL(c.BaseURL))
	}
	if u.Scheme == "http" && c.APIKey != "" && !isLoopback(u.Hostname()) {
		return c, ErrInsecure
	}
	c.Limits = c.Limits.withDefaults()
	return c, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
