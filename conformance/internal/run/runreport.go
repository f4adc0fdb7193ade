package run

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/conformance/internal/machine"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// What a run writes for people: the failure report and its replay command,
// the summary of a passing run.

// fromRoot shows path, relative to the conformance package directory where
// go test runs it, as seen from the repository root where the user typed
// the command; an absolute path is returned as it is.
func fromRoot(path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(pkgDir(), path)
}

// envHint is what rapid's own "To reproduce" line needs in front of it.
func (r *runState) envHint() string {
	if !testing.Testing() {
		return "" // cmd/idemcheck: its replay: line names everything as flags
	}
	if env := r.replayEnv(); env != "" {
		return "\nreproduce with " + env + "set (see the replay: line below)"
	}
	return ""
}

// replayEnv is the environment a replay of this run needs, each variable
// followed by a space: the provider when it is not the embedded one
// (a URL is shown without credentials; IDEMCHECK_API_KEY and the other
// remote settings stay the user's to set) and the mutant.
func (r *runState) replayEnv() string {
	var env string
	if r.cfg.Provider != machine.ProviderEmbedded {
		env += "IDEMCHECK_PROVIDER=" + reports.RedactURL(r.cfg.Provider) + " "
	}
	if r.cfg.OnRedis() {
		env += "IDEMCHECK_PROVIDER_STORE=redis "
	}
	if r.cfg.Mutant != "" {
		env += "IDEMCHECK_MUTANT=" + r.cfg.Mutant + " "
	}
	if r.cfg.parallelism() > 1 {
		env += r.cfg.parallelVar() + "=1 " // one property, so rapid's own -rapid.seed= line replays too
	}
	if !r.cfg.Shard.whole() {
		env += ShardEnv + "= " // the seed rapid printed is the check's own, not a shard's base
	}
	return env
}

// reportBase is where the failure report of the run goes, without
// extension: in the run's own folder, <report dir>/<UTC start>-<test>/
// (reports.RunFolder), fixed when the run starts.
func (r *runState) reportBase() string {
	return filepath.Join(r.cfg.ReportDir, reports.RunFolder(r.started, r.test), "failure")
}

func failureOf(r *runState, m *machine.Machine, w check.World, v *check.ViolationError) reports.Failure {
	f := reports.Failure{
		Test: r.test, Invariant: v.Invariant, Message: v.Message, Provider: reports.RedactURL(r.cfg.Provider),
		History: w.History, Orders: w.Orders, Attempts: w.Attempts, Charges: w.Charges,
	}
	if r.mutant != nil {
		f.Mutant, f.MutantSide = r.mutant.Name, r.mutant.Side
	}
	f.Schedule = append(f.Schedule, m.World().Schedules()...)
	f.Compare = comparisonOf(w, v)
	return f
}

func (r *runState) writeReport(t *testing.T) {
	f, ok := r.last.get()
	if !ok {
		return
	}
	ff := newestFailFile(r.test, r.started)
	f.Replay, f.Seed, f.Explanation = replayCommand(r, ff), failFileSeed(ff), explain(f)
	if why := r.stoppedWhy(); why != "" {
		f.Notes = append(f.Notes, "The run stopped while rapid was shrinking ("+why+"), so this may not be the smallest failing sequence"+stoppedAdvice(why, ": ", "to shrink further")+".")
	}
	switch {
	case r.cfg.Reproduce > 0 && ff == "":
		t.Logf("idemcheck: reproducibility not checked: rapid kept no fail file for %s", r.test)
	case r.cfg.Reproduce > 0 && r.stoppedWhy() != "":
		// rapid's own confirmation of the failure may have hit the budget,
		// which it reports as flaky: replays would say nothing either.
		t.Logf("idemcheck: reproducibility not checked: %s", r.stoppedWhy())
	}
	if r.cfg.Reproduce > 0 && ff != "" && r.stoppedWhy() == "" {
		rep, err := r.reproduce(f.Invariant, ff)
		if err != nil {
			t.Logf("idemcheck: reproducibility check stopped: %v", err)
		} else {
			f.Reproducibility = &rep
		}
	}
	p, err := reports.WriteFailureRun(r.cfg.ReportDir, r.started, f, invariantNames())
	if err != nil {
		t.Logf("idemcheck: could not write the report: %v", err)
		if p.Markdown == "" {
			return
		}
	}
	if err := reports.WriteRunStats(p.Dir, r.runStats(reports.Fail, f.Invariant+" violated")); err != nil {
		t.Logf("idemcheck: could not write the run's statistics: %v", err) // for idemcheck merge
	}
	d := reports.Deviation{Invariant: f.Invariant, Message: f.Message, Verdict: reports.Fail,
		Steps: len(f.History.Steps), Replay: f.Replay, FailFile: ff, Report: relTo(r.cfg.ReportDir, p.Markdown), Curl: relTo(r.cfg.ReportDir, p.Curl)}
	r.stats.deviation(d)
	if w, ok := chargesWitness(1, d, f.Charges); ok {
		r.stats.witnessed(w)
	}
	repro := ""
	if f.Reproducibility != nil {
		repro = "\nreplayed: " + f.Reproducibility.String()
	}
	t.Logf("idemcheck: %s violated after %d shopper steps\n%s\n%s\nreport: %s\njson:   %s\ncurl:   %s\njunit:  %s\nindex:  %s%s\nreplay: %s%s",
		f.Invariant, len(f.History.Steps), f.Explanation, f.Message, fromRoot(p.Markdown), fromRoot(p.JSON), fromRoot(p.Curl),
		fromRoot(p.JUnit), fromRoot(filepath.Join(r.cfg.ReportDir, reports.IndexFile)), repro, f.Replay, replayWhere())
}

// writeSummary logs the statistics of a passing run and records the run
// in the report directory's index.
func (r *runState) writeSummary(t *testing.T) {
	sum := r.stats.Summary()
	t.Log(sum)
	verdict, reason := reports.Pass, ""
	if why := r.stoppedWhy(); why != "" {
		verdict, reason = reports.Inconclusive, why+" after "+strconv.Itoa(r.stats.Sequences())+" complete sequences"
	}
	dir, err := reports.WriteRunSummary(r.cfg.ReportDir, r.started, r.test, sum, verdict, reason)
	if err != nil {
		t.Logf("idemcheck: could not record the run: %v", err)
		return
	}
	if err := reports.WriteRunStats(dir, r.runStats(verdict, reason)); err != nil {
		t.Logf("idemcheck: could not write the run's statistics: %v", err) // for idemcheck merge
	}
	t.Logf("summary: %s\nindex:   %s", fromRoot(filepath.Join(dir, "summary.md")), fromRoot(filepath.Join(r.cfg.ReportDir, reports.IndexFile)))
}

// runPattern is the go test -run pattern that selects test exactly.
func runPattern(test string) string {
	parts := strings.Split(test, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// replayCommand is the command that replays the run's failure from the
// repository root: the go test line with the run's mutant and failFile
// (rapid's fail file, relative to the package directory; "" for none).
// Outside go test (cmd/idemcheck) it is the CLI line, from the directory
// the run started in (cliReplay).
func replayCommand(r *runState, failFile string) string {
	if !testing.Testing() && failFile != "" {
		return r.cliReplay(failFile)
	}
	cmd := fmt.Sprintf("go test ./%s -run '%s'", filepath.ToSlash(pkgDir()), runPattern(r.test))
	if failFile != "" {
		cmd += " -rapid.failfile=" + failFile
	}
	return r.replayEnv() + cmd
}

// writeCatalogue ends a run against a URL: with no deviation, the summary
// of a passing (or budget-stopped) run; else catalogue.md, listing every
// deviation, beside their reports in the run folder.
func (r *runState) writeCatalogue(t *testing.T) {
	devs := r.stats.Deviations()
	if len(devs) == 0 {
		r.writeSummary(t)
		return
	}
	sum := r.stats.Summary()
	t.Log(sum)
	p, err := reports.WriteCatalogueRun(r.cfg.ReportDir, r.started, r.test, sum, devs)
	if err != nil {
		t.Logf("idemcheck: could not write the catalogue: %v", err)
		return
	}
	verdict := reports.Known
	for _, d := range devs {
		if d.Verdict == reports.Fail {
			verdict = reports.Fail
		}
	}
	if err := reports.WriteRunStats(filepath.Dir(p), r.runStats(verdict, strconv.Itoa(len(devs))+" deviations")); err != nil {
		t.Logf("idemcheck: could not write the run's statistics: %v", err) // for idemcheck merge
	}
	t.Logf("idemcheck: %d deviations in one run\ncatalogue: %s\nindex:     %s", len(devs), fromRoot(p), fromRoot(filepath.Join(r.cfg.ReportDir, reports.IndexFile)))
}

// replayWhere is where a replay: line runs from, as the line's suffix:
// for the go test form the repository root, as a shell comment (the line
// pastes into a shell as it is), nothing for cmd/idemcheck's (the
// directory the run started in, as its docs say).
func replayWhere() string {
	if testing.Testing() {
		return "   # from the repository root"
	}
	return ""
}

// cliReplay is "idemcheck replay FAILFILE" with, as flags, what makes a
// replay draw and judge the same sequence as the run that failed: the
// provider (a URL without credentials), the mutant, and against a URL the
// profile and dialect the run used (a profile decides which invariants are
// judged from the provider's answers, and how: without it a replay of a
// certification is judged against the draft and may pass). The API keys
// stay in IDEMCHECK_API_KEY / IDEMCHECK_API_KEY_2.
func (r *runState) cliReplay(failFile string) string {
	args := []string{"idemcheck", "replay", failFile}
	if r.cfg.Provider != machine.ProviderEmbedded {
		args = append(args, "-provider", reports.RedactURL(r.cfg.Provider))
	}
	if r.cfg.Mutant != "" {
		args = append(args, "-mutant", r.cfg.Mutant)
	}
	if p := r.cfg.Remote; p != nil {
		if c := p.Config(); c.ProfilePath != "" {
			args = append(args, "-profile", c.ProfilePath)
		}
		if d := p.Config().Dialect; d != "" && d != remote.DialectReference {
			args = append(args, "-dialect", d)
		}
	}
	env := ""
	if r.cfg.OnRedis() {
		env = "IDEMCHECK_PROVIDER_STORE=redis "
	}
	for i, a := range args {
		args[i] = shellWord(a)
	}
	return env + strings.Join(args, " ")
}

// shellWord is a in single quotes when a POSIX shell would split or expand
// it.
func shellWord(a string) string {
	if a != "" && strings.IndexFunc(a, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./:=,@+%", c))
	}) < 0 {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

// relTo is path relative to dir, or path itself when it is not under dir
// or empty.
func relTo(dir, path string) string {
	if s, err := filepath.Rel(dir, path); err == nil && path != "" {
		return s
	}
	return path
}

// pkgDir is the test's package directory relative to the module root
// ("conformance" for this package's own tests), where report paths and
// the replay command start from; "conformance" when no go.mod is found
// above it (a child process of a test, run in a temporary folder); ""
// outside go test (cmd/idemcheck), where paths start from the current
// directory.
var pkgDir = sync.OnceValue(func() string {
	if !testing.Testing() {
		return "" // cmd/idemcheck: paths are as the user gave them
	}
	wd, err := os.Getwd()
	if err != nil {
		return "conformance"
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil {
				return "conformance"
			}
			return rel
		}
		if filepath.Dir(dir) == dir {
			return "conformance"
		}
	}
})
