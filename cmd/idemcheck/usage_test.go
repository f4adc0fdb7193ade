package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCertifyInconclusiveSaysWhy: an INCONCLUSIVE certification prints,
// before its verdict line, one line per INCONCLUSIVE requirement and
// invariant with its reason: with 5 sequences and no profile an invariant
// held vacuously; with 300 requests the budget stopped the run.
func TestCertifyInconclusiveSaysWhy(t *testing.T) {
	url := serve(t)
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"few checks":   {[]string{"--checks", "5"}, ": held vacuously: no "},
		"small budget": {[]string{"--checks", "50", "--budget-requests", "300"}, ": the run stopped early: the requests budget is spent"},
	} {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := idemcheck(t, nil, append([]string{"certify", url, "--seed", "1", "--report-dir", t.TempDir()}, tc.args...)...)
			if code != 3 {
				t.Fatalf("exit %d, want 3 (INCONCLUSIVE); stderr:\n%s", code, stderr)
			}
			if v, _, _ := lastVerdictLine(t, "", stderr); v != "INCONCLUSIVE" || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr does not end with the verdict after a reason %q:\n%s", tc.want, stderr)
			}
			b, err := os.ReadFile(filepath.Join(filepath.Dir(strings.TrimSpace(stdout)), "certification.json"))
			if err != nil {
				t.Fatal(err)
			}
			var c struct {
				Requirements []struct{ ID, Verdict, Reason string }
				Invariants   []struct{ Name, Verdict, Reason string }
			}
			if err := json.Unmarshal(b, &c); err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, r := range c.Requirements {
				if r.Verdict == "INCONCLUSIVE" {
					want = append(want, "idemcheck: INCONCLUSIVE requirement "+r.ID+": ")
				}
			}
			for _, i := range c.Invariants {
				if i.Verdict == "INCONCLUSIVE" {
					want = append(want, "idemcheck: INCONCLUSIVE invariant "+i.Name+": ")
				}
			}
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if len(want) == 0 || len(lines) < len(want)+1 {
				t.Fatalf("%d INCONCLUSIVE verdicts in the page; stderr:\n%s", len(want), stderr)
			}
			got := lines[len(lines)-1-len(want) : len(lines)-1]
			for i, w := range want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("line %d before the verdict: %q, want it to start %q", len(want)-i, got[i], w)
				}
			}
		})
	}
}

// TestUsageErrorIsShort: a usage error prints one line saying what is
// wrong and one pointing to the verb's help, and exits 2; the help itself
// is not printed.
func TestUsageErrorIsShort(t *testing.T) {
	for _, args := range [][]string{{"certify"}, {"certify", "--bogus", "http://127.0.0.1:1"}, {"serve", "--bogus"}, {"replay", "-x"}, {"run", "extra"}, {"merge"}} {
		code, stdout, stderr := idemcheck(t, nil, args...)
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		want := "run 'idemcheck help " + args[0] + "' for its flags and exit codes"
		if code != 2 || stdout != "" || len(lines) != 2 || lines[1] != want {
			t.Errorf("idemcheck %q: exit %d, stdout %q, stderr %q: want exit 2 and two lines, the last %q", args, code, stdout, stderr, want)
		}
	}
	for _, args := range [][]string{{}, {"frobnicate"}} {
		code, _, stderr := idemcheck(t, nil, args...)
		if lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n"); code != 2 || len(lines) != 2 || lines[1] != "run 'idemcheck help' for the verbs" {
			t.Errorf("idemcheck %q: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// TestVerbHelpIsItsOwn: each verb's -h prints its usage line, its flags
// and its own exit codes, each once: serve's flags under one heading,
// replay's exit codes not certify's.
func TestVerbHelpIsItsOwn(t *testing.T) {
	for verb, want := range map[string]string{
		"certify": "held vacuously: raise --checks",
		"run":     "the property failed",
		"serve":   "stopped by SIGINT or SIGTERM",
		"replay":  "the failure came back",
		"merge":   "a part failed",
	} {
		code, stdout, stderr := idemcheck(t, nil, verb, "-h")
		if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "Usage: idemcheck "+verb+" ") {
			t.Errorf("idemcheck %s -h: exit %d, stderr %q, stdout:\n%s", verb, code, stderr, stdout)
		}
		for _, once := range []string{"Usage", "Flags:", "Exit codes:"} {
			if n := strings.Count(stdout, once); n != 1 {
				t.Errorf("idemcheck %s -h: %q %d times, want once:\n%s", verb, once, n, stdout)
			}
		}
		if !strings.Contains(stdout, want) {
			t.Errorf("idemcheck %s -h lacks its exit code %q:\n%s", verb, want, stdout)
		}
		if verb != "certify" && strings.Contains(stdout, "a verdict FAIL") {
			t.Errorf("idemcheck %s -h prints certify's exit codes:\n%s", verb, stdout)
		}
	}
}
