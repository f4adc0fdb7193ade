package remote_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/idemcheck/idemcheck/sut/remote"
)

// TestLoadProfile_RefusesWhatIsNotASmallRegularFile: a FIFO (opening it
// blocked the run forever), a device (/dev/zero ran it out of memory), a
// folder and a file over the cap are refused before they are read, with
// an error naming the path. Regression (issue 22, item 6: a 50 MB profile
// took 2.4 GB).
func TestLoadProfile_RefusesWhatIsNotASmallRegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte(`{"name":"`+strings.Repeat("x", remote.MaxProfileBytes)+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, "/dev/zero", dir, big} {
		_, err := remote.LoadProfile(path) // a FIFO would block here, a device allocate without end
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("LoadProfile(%s) = %v, want an error naming the path", path, err)
		}
	}
}

// TestLoadProfile_RefusesBadValuesNamingPathAndField: every value the
// harness would act on is checked, and the error is one line naming the
// profile's path and the field. Regression (issue 22, item 6): a
// replay_header with a space, colon or CRLF failed the provider instead;
// statuses 99, 200 and -1 and accounts -1 were taken; a null profile,
// duplicate keys ("environment":"production" then "sandbox") and data
// after the object were read as if fine.
func TestLoadProfile_RefusesBadValuesNamingPathAndField(t *testing.T) {
	for name, c := range map[string]struct{ json, field string }{
		"header with a space":       {`{"replay_header":"Idempotent Replayed"}`, "replay_header"},
		"header with a colon":       {`{"replay_header":"X:Y"}`, "replay_header"},
		"header with CRLF":          {`{"replay_header":"X\r\nSet-Cookie: a"}`, "replay_header"},
		"status 99":                 {`{"statuses":{"in_flight":99}}`, "statuses.in_flight"},
		"status 200 for an error":   {`{"statuses":{"mismatch":200}}`, "statuses.mismatch"},
		"status -1":                 {`{"statuses":{"missing_key":-1}}`, "statuses.missing_key"},
		"status 600":                {`{"statuses":{"in_flight":600}}`, "statuses.in_flight"},
		"missing key as a 5xx":      {`{"statuses":{"missing_key":503}}`, "statuses.missing_key"},
		"accounts -1":               {`{"accounts":-1}`, "accounts"},
		"max_body_bytes too small":  {`{"max_body_bytes":100}`, "max_body_bytes"},
		"max_body_bytes negative":   {`{"max_body_bytes":-1}`, "max_body_bytes"},
		"slow trigger of nothing":   {`{"slow_trigger":{"duration":"2s"}}`, "slow_trigger"},
		"lookup lag too long":       {`{"lookup_lag":"11m"}`, "lookup_lag"},
		"lookup lag negative":       {`{"lookup_lag":"-1s"}`, "lookup_lag"},
		"lookup lag not a duration": {`{"lookup_lag":"soon"}`, "lookup_lag"},
		"slow trigger of both":      {`{"slow_trigger":{"source":"tok_visa_slow","amount":5,"duration":"2s"}}`, "slow_trigger"},
		"slow trigger too long":     {`{"slow_trigger":{"source":"tok_visa_slow","duration":"2m"}}`, "slow_trigger.duration"},
		"slow trigger too short":    {`{"slow_trigger":{"amount":4242,"duration":"10ms"}}`, "slow_trigger.duration"},
		"slow trigger unknown key":  {`{"slow_trigger":{"token":"tok_visa_slow","duration":"2s"}}`, "token"},
		"null":                      {`null`, "null"},
		"an array":                  {`[]`, "object"},
		"duplicate key":             {`{"environment":"production","environment":"sandbox"}`, "environment"},
		"duplicate key, other case": {`{"environment":"production","Environment":"sandbox"}`, "environment"},
		"duplicate nested key":      {`{"statuses":{"mismatch":422,"mismatch":400}}`, "statuses.mismatch"},
		"trailing data":             {`{"name":"x"} {"environment":"production"}`, "after the JSON object"},
		"trailing garbage":          {`{"name":"x"}x`, "after the JSON object"},
		"name with a newline":       {`{"name":"a\nb"}`, "name"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.json")
			if err := os.WriteFile(path, []byte(c.json), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := remote.LoadProfile(path)
			if err == nil {
				t.Fatalf("LoadProfile(%s) took it", c.json)
			}
			msg := err.Error()
			if !strings.Contains(msg, path) || !strings.Contains(msg, c.field) || strings.ContainsAny(msg, "\r\n") {
				t.Errorf("LoadProfile(%s) = %q, want one line naming %s and %q", c.json, msg, path, c.field)
			}
		})
	}
	// What the doc allows is still read.
	for _, ok := range []string{`{"statuses":{"in_flight":503,"mismatch":400,"missing_key":401}}`, `{"accounts":0}`, `{"accounts":2}`,
		`{"replay_header":"Idempotent-Replayed"}`, "{\"name\":\"x\"}\n\n"} {
		if _, err := remote.ParseProfile([]byte(ok)); err != nil {
			t.Errorf("ParseProfile(%q) = %v, want it read", ok, err)
		}
	}
}
