package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
)

// MaxProfileBytes is the largest profile file LoadProfile reads: 64 KiB
// (a profile is a dozen fields).
const MaxProfileBytes = 64 << 10

// LoadProfile reads the profile at path, fills defaults and validates it
// (ParseProfile). Only a regular file of at most MaxProfileBytes is read,
// its type and size checked before it is opened (a FIFO would block the
// run, a device such as /dev/zero never end). Every error is one line
// naming path and, for a bad value, the field.
func LoadProfile(path string) (Profile, error) {
	b, err := readProfile(path)
	if err != nil {
		return Profile{}, fmt.Errorf("remote: profile %s: %w", path, err)
	}
	p, err := parseProfile(b)
	if err != nil {
		return p, fmt.Errorf("remote: profile %s: %w", path, err)
	}
	return p, nil
}

// readProfile is the content of the regular file at path, at most
// MaxProfileBytes.
func readProfile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	case fi.Size() > MaxProfileBytes:
		return nil, fmt.Errorf("%d bytes, over the %d a profile may hold", fi.Size(), MaxProfileBytes)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, MaxProfileBytes+1))
	if err == nil && len(b) > MaxProfileBytes {
		err = fmt.Errorf("over the %d bytes a profile may hold", MaxProfileBytes)
	}
	return b, err
}

// ParseProfile decodes a profile from JSON, fills defaults and validates
// it: one JSON object (not null, nothing after it), no field twice (in
// any letter case: encoding/json would keep the last), no unknown field
// (a misspelt claim is not silently ignored), and every value in its
// range (Profile.check).
func ParseProfile(b []byte) (Profile, error) {
	p, err := parseProfile(b)
	if err != nil {
		return p, fmt.Errorf("remote: profile: %w", err)
	}
	return p, nil
}

func parseProfile(b []byte) (Profile, error) {
	var p Profile
	if err := checkObject(b); err != nil {
		return p, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, errors.New(oneLine(err.Error()))
	}
	if err := p.check(); err != nil {
		return p, err
	}
	return p.withDefaults()
}

// maxProfileDepth bounds the nesting checkObject walks (the schema has 2).
const maxProfileDepth = 8

// checkObject reports b unless it is exactly one JSON object whose
// objects name no key twice (letter case ignored).
func checkObject(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	t, err := dec.Token()
	if err != nil {
		return fmt.Errorf("not JSON: %s", oneLine(err.Error()))
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		if t == nil {
			return errors.New("the profile is null, not a JSON object")
		}
		return fmt.Errorf("not a JSON object (it starts with %v)", t)
	}
	if err := walkObject(dec, "", 1); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON object (one object per profile)")
	}
	return nil
}

// walkObject reads the members of an object whose '{' was read, up to its
// '}', refusing a key seen twice; prefix names the object ("statuses.").
func walkObject(dec *json.Decoder, prefix string, depth int) error {
	if depth > maxProfileDepth {
		return fmt.Errorf("%snested deeper than %d", prefix, maxProfileDepth)
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fmt.Errorf("not JSON: %s", oneLine(err.Error()))
		}
		key, _ := t.(string) // a key is a string, or Token errs
		if seen[strings.ToLower(key)] {
			return fmt.Errorf("%s%s appears twice (encoding/json would keep the last)", prefix, strings.ToLower(key))
		}
		seen[strings.ToLower(key)] = true
		if err := walkValue(dec, prefix+strings.ToLower(key)+".", depth); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // '}'
		return fmt.Errorf("not JSON: %s", oneLine(err.Error()))
	}
	return nil
}

// walkValue reads one value, walking the objects and arrays in it.
func walkValue(dec *json.Decoder, prefix string, depth int) error {
	t, err := dec.Token()
	if err != nil {
		return fmt.Errorf("not JSON: %s", oneLine(err.Error()))
	}
	switch t {
	case json.Delim('{'):
		return walkObject(dec, prefix, depth+1)
	case json.Delim('['):
		for dec.More() {
			if err := walkValue(dec, prefix, depth+1); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil { // ']'
			return fmt.Errorf("not JSON: %s", oneLine(err.Error()))
		}
	}
	return nil
}

// maxProfileName bounds a profile's name, quoted in every report.
const maxProfileName = 100

// check validates p's values, naming the field: name printable and
// short; dialect and environment known; replay_header a header field name
// (an RFC 9110 token: no space, colon, CR or LF); statuses 0 (the
// dialect's default) or an error status — missing_key and mismatch a 4xx
// (a final refusal the client must not retry), in_flight a 4xx or 5xx
// (409 by the draft; some providers answer 425, 429 or 503); accounts 0
// (the default, 1) or more.
// maxKeyLengthLimit bounds a profile's max_key_length: the requirement
// sends a key one character longer in a header, and servers commonly
// refuse a header block over 8 KiB.
const maxKeyLengthLimit = 4096

func (p Profile) check() error {
	if len(p.Name) > maxProfileName || strings.IndexFunc(p.Name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return fmt.Errorf("name %q: at most %d printable characters", p.Name, maxProfileName)
	}
	if _, err := dialectNamed(p.Dialect, "", 0); err != nil {
		return fmt.Errorf("dialect %q is not reference or stripe", p.Dialect)
	}
	switch p.Environment {
	case "", EnvSandbox, EnvTest, EnvProduction:
	default:
		return fmt.Errorf("environment %q is not sandbox, test or production", p.Environment)
	}
	switch p.KeyForm {
	case "", KeyFormQuoted, KeyFormBare:
	default:
		return fmt.Errorf("key_form %q is not quoted or bare (left out: learned by the preflight)", p.KeyForm)
	}
	if p.MaxKeyLength < 0 || p.MaxKeyLength > maxKeyLengthLimit {
		return fmt.Errorf("max_key_length %d: 0 (none published) to %d characters", p.MaxKeyLength, maxKeyLengthLimit)
	}
	if p.ReplayHeader != "" && !isToken(p.ReplayHeader) {
		return fmt.Errorf("replay_header %q is not a header field name (letters, digits and !#$%%&'*+-.^_`|~; no space, colon, CR or LF)", p.ReplayHeader)
	}
	for _, s := range []struct {
		field     string
		v, lo, hi int
	}{
		{"statuses.missing_key", p.Statuses.MissingKey, 400, 499},
		{"statuses.mismatch", p.Statuses.Mismatch, 400, 499},
		{"statuses.in_flight", p.Statuses.InFlight, 400, 599},
	} {
		if s.v != 0 && (s.v < s.lo || s.v > s.hi) {
			return fmt.Errorf("%s %d is not a status from %d to %d (0 or left out: the dialect's)", s.field, s.v, s.lo, s.hi)
		}
	}
	if p.Accounts < 0 {
		return fmt.Errorf("accounts %d: at least 1 (0 or left out: 1)", p.Accounts)
	}
	if err := checkLookupLag(p.LookupLag); err != nil {
		return err
	}
	if p.MaxBodyBytes != 0 && (p.MaxBodyBytes < MinMaxBodyBytes || p.MaxBodyBytes > MaxMaxBodyBytes) {
		return fmt.Errorf("max_body_bytes %d: from %d to %d (0 or left out: none published)", p.MaxBodyBytes, MinMaxBodyBytes, MaxMaxBodyBytes)
	}
	if p.SlowTrigger != nil {
		if err := p.SlowTrigger.check(); err != nil {
			return err
		}
	}
	return p.Lifecycle.check()
}

// oneLine is s with CR and LF replaced by spaces, for a one-line refusal.
func oneLine(s string) string { return strings.NewReplacer("\r", " ", "\n", " ").Replace(s) }
