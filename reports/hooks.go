package reports

import (
	"fmt"
	"strings"
	"time"
)

// HookRun is one run of a lifecycle hook (--hook-restart,
// --hook-store-down, --hook-store-up; sut/remote.RunHook) during a
// certification: what ran, how it ended and what it printed, scrubbed of
// the run's API keys. The run folder keeps them in certification.json
// ("hooks") and in hooks.log.
type HookRun struct {
	// Name is restart, store_down or store_up; For is the requirement
	// that ran it.
	Name string `json:"name"`
	For  string `json:"for,omitempty"`
	// Argv is the command as run (no shell), scrubbed.
	Argv    []string  `json:"argv"`
	Started time.Time `json:"started"`
	// Seconds is how long it ran.
	Seconds float64 `json:"seconds"`
	// ExitCode is its exit status; -1 when it did not start or was killed.
	ExitCode int `json:"exit_code"`
	// Error is why the hook failed ("timed out after 5s; its process
	// group was killed", "failed: exit status 1"); "" when it succeeded.
	Error string `json:"error,omitempty"`
	// Stdout and Stderr are its output, at most 64 KiB each, scrubbed.
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
}

// hooksLog is the run folder's hooks.log: every hook run in order, its
// command, ending and output.
func hooksLog(runs []HookRun) []byte {
	var b strings.Builder
	for i, h := range runs {
		end := fmt.Sprintf("exit %d", h.ExitCode)
		if h.Error != "" {
			end = h.Error
		}
		fmt.Fprintf(&b, "## %d. %s for %s at %s: %s (%.1fs)\n$ %s\n", i+1, h.Name, h.For, h.Started.Format(time.RFC3339Nano), end, h.Seconds, quoteArgv(h.Argv))
		for _, o := range []struct{ name, text string }{{"stdout", h.Stdout}, {"stderr", h.Stderr}} {
			if o.text != "" {
				fmt.Fprintf(&b, "--- %s\n%s", o.name, o.text)
				if !strings.HasSuffix(o.text, "\n") {
					b.WriteByte('\n')
				}
			}
		}
	}
	return Scrub([]byte(b.String()))
}

// quoteArgv is argv as one shell line: a word with anything but letters,
// digits and -_./=:,@+% in it is quoted (shellQuote), so a word with a
// blank reads as one word and the line can be pasted back.
func quoteArgv(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = a
		if a == "" || strings.IndexFunc(a, func(r rune) bool {
			return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("-_./=:,@+%", r))
		}) >= 0 {
			words[i] = shellQuote(a)
		}
	}
	return strings.Join(words, " ")
}
