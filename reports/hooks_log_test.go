package reports

import (
	"strings"
	"testing"
)

// TestHooksLogQuotesArgv: hooks.log writes a hook's argv as one shell
// line, a word with blanks or quotes quoted, so it reads (and pastes) as
// the argv it ran.
func TestHooksLogQuotesArgv(t *testing.T) {
	log := string(hooksLog([]HookRun{{Name: "restart", For: "property", Argv: []string{"sh", "-c", "sleep 1 & echo it's", "", "a=b/c"}}}))
	want := `$ sh -c 'sleep 1 & echo it'\''s' '' a=b/c` + "\n"
	if !strings.Contains(log, want) {
		t.Errorf("hooks.log:\n%s\nwant the line %q", log, want)
	}
}
