package main_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestCertifyFailPageLeadsWithReproduction is the newcomer's 30-second
// test (issue 23): on the FAIL page of idemcheck serve --mutant
// replay-new-charge the first five lines give the verdict, the counts
// (one cause that charges twice, the requirements), the cause with the
// first failure's reason and the command that reproduces it (issue 24,
// item 5: nine requirements' FAILs were nine entries); stderr's last
// line gives the same counts; running
// that command shows the failure — one key and body answered with two
// different charges — where the reference provider would answer the
// same charge each time.
func TestCertifyFailPageLeadsWithReproduction(t *testing.T) {
	url := serve(t, "--mutant", "replay-new-charge")
	code, stdout, stderr := idemcheck(t, nil, "certify", url, "--profile", profile, "--checks", "3", "--seed", "7",
		"--budget-requests", "400", "--report-dir", t.TempDir())
	if code != 1 {
		t.Fatalf("exit %d, want 1 (FAIL); stderr:\n%s", code, stderr)
	}
	md, err := os.ReadFile(strings.TrimSpace(stdout))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(md), "\n", 6)
	if len(lines) < 6 {
		t.Fatalf("page of %d lines:\n%s", len(lines), md)
	}
	head := strings.Join(lines[:5], "\n")
	for i, re := range []string{
		`^# idemcheck certification: FAIL$`,
		"^Causes \\(1\\): 1 charges twice; requirements \\([0-9]+\\): [0-9]+ PASS, [1-9][0-9]* FAIL, [0-9]+ INCONCLUSIVE, [0-9]+ NOT JUDGED.*; seed `7`\\.$",
		`^$`,
		"^1\\. \\*\\*charges twice\\*\\* `replay-charges-again`: a completed key is charged again[^(]* \\(a retry with the same key and body answered 201 ch_[0-9]+, not the first response 201 ch_[0-9]+(; .*)?\\)\\\\$",
		"^   reproduce: `bash [^`]+/replay-returns-first-response\\.curl\\.sh`",
	} {
		if !regexp.MustCompile(re).MatchString(lines[i]) {
			t.Errorf("line %d %q does not match %s; the page begins:\n%s", i+1, lines[i], re, head)
		}
	}
	if last := strings.Split(strings.TrimRight(stderr, "\n"), "\n"); !strings.HasPrefix(last[len(last)-1], "idemcheck: FAIL · causes (1): 1 charges twice; "+requirementsCounted) {
		t.Errorf("stderr's last line does not count the cause and the requirements: %q", last[len(last)-1])
	}
	// A requirement printed FAIL as it ended and left NOT JUDGED by the
	// cause is named so on stderr too: stderr and the page agree.
	var cert struct {
		Requirements []struct{ ID, Verdict string } `json:"requirements"`
	}
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(strings.TrimSpace(stdout)), "certification.json")); err != nil || json.Unmarshal(b, &cert) != nil {
		t.Fatalf("certification.json: %v", err)
	}
	explained := regexp.MustCompile(`(?m)^idemcheck: FAIL above, NOT JUDGED because of replay-charges-again \(their judgement needs a replay\): (.+)$`).FindStringSubmatch(stderr)
	for _, r := range cert.Requirements {
		if r.Verdict != "NOT JUDGED" || !strings.Contains(stderr, "FAIL "+r.ID) {
			continue
		}
		if explained == nil || !slices.Contains(strings.Split(explained[1], ", "), r.ID) {
			t.Errorf("%s: FAIL on stderr, NOT JUDGED on the page, and stderr does not say why:\n%s", r.ID, stderr)
		}
	}
	m := regexp.MustCompile("reproduce: `(bash [^`]+)`").FindStringSubmatch(lines[4])
	if m == nil {
		t.Fatalf("no reproduction command on line 5:\n%s", head)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", "-c", m[1]).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", m[1], err, out)
	}
	// The script sends the evidence's two creates (one key, one body) and
	// asks for the merchant reference's charges: the mutant answers each
	// create with a new charge.
	created := regexp.MustCompile(`(?m)^\{"id":"(ch_[0-9]+)"`).FindAllStringSubmatch(string(out), -1)
	if len(created) != 2 || created[0][1] == created[1][1] {
		t.Errorf("%s: want two creates answered with two different charges, got %v:\n%s", m[1], created, out)
	}
}

// The FAIL page of replay-new-charge, and the job summary that gets it,
// read in a 100-column terminal (issue 23, item 1): no table row is wider
// (before, a lookup's "GET /v1/charges?merchant_reference=…" row was 143
// characters and an evidence table's header 105); a lookup's query stays
// on the page, in a note under its table.
func TestCertifyFailPageFitsATerminal(t *testing.T) {
	url := serve(t, "--mutant", "replay-new-charge")
	summary := filepath.Join(t.TempDir(), "summary.md")
	code, stdout, stderr := idemcheck(t, []string{"GITHUB_STEP_SUMMARY=" + summary}, "certify", url, "--profile", profile,
		"--checks", "3", "--seed", "7", "--budget-requests", "400", "--report-dir", t.TempDir())
	if code != 1 {
		t.Fatalf("exit %d, want 1 (FAIL); stderr:\n%s", code, stderr)
	}
	for _, path := range []string{strings.TrimSpace(stdout), summary} {
		md, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rows := 0
		for line := range strings.SplitSeq(string(md), "\n") {
			if !strings.HasPrefix(line, "|") {
				continue
			}
			rows++
			if n := utf8.RuneCountInString(line); n > 100 {
				t.Errorf("%s: a table row of %d characters:\n%s", filepath.Base(path), n, line)
			}
		}
		if rows < 40 {
			t.Errorf("%s: %d table rows; want the page's tables (run, budgets, requirements, invariants, evidence)", filepath.Base(path), rows)
		}
		if !regexp.MustCompile(`(?m)^- \[[0-9]+\] GET /v1/charges\?merchant_reference=idemcheck-[0-9a-f]+-[a-z-]+-[0-9]+$`).Match(md) {
			t.Errorf("%s: no lookup's query in a note under its table", filepath.Base(path))
		}
	}
}
