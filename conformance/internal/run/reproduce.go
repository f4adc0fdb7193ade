package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/conformance/internal/machine"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/backend"
)

// DefaultReplays is how many times CheckReproducible replays a failure
// when not told otherwise.
const DefaultReplays = 10

// replayTimeout bounds one replay of a shrunk failure in a child process.
const replayTimeout = 5 * time.Minute

// ReplayFunc runs a shrunk failure once more and reports whether it failed
// again the same way. An error means the replay could not be run at all.
type ReplayFunc func(ctx context.Context) (failedAgain bool, err error)

// CheckReproducible runs replay n times (DefaultReplays when n <= 0), one
// after another, and counts how often the failure came back: "reproduced
// 10/10", or "flaky (k/10)" when it depends on something outside the seed
// (timing, a real network). The first error, or ctx ending, stops it.
func CheckReproducible(ctx context.Context, n int, replay ReplayFunc) (reports.Reproducibility, error) {
	if n <= 0 {
		n = DefaultReplays
	}
	rep := reports.Reproducibility{Runs: n}
	for i := range n {
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("conformance: reproducibility check stopped after %d of %d replays: %w", i, n, err)
		}
		again, err := replay(ctx)
		if err != nil {
			return rep, fmt.Errorf("conformance: replay %d of %d: %w", i+1, n, err)
		}
		if again {
			rep.Reproduced++
		}
	}
	return rep, nil
}

// ChildReplay returns a ReplayFunc that runs the test binary bin (os.Args[0]
// inside go test) selecting the test by the -run pattern, replaying rapid's
// failFile (absolute, or relative to the current directory) with no new
// random search after it (-rapid.checks=0) and no new fail file, with env
// added to the environment. Each replay runs in a fresh empty directory,
// so rapid replays that fail file only and not the others it keeps under
// testdata/rapid. The failure came back when the child fails and its
// output contains match (for a conformance run "idemcheck: <invariant>
// violated"). Each replay is bounded by 5 minutes.
func ChildReplay(bin, pattern, failFile, match string, env []string) ReplayFunc {
	return func(ctx context.Context) (bool, error) {
		ff, err := filepath.Abs(failFile)
		if err != nil {
			return false, err
		}
		dir, err := os.MkdirTemp("", "idemcheck-replay-")
		if err != nil {
			return false, err
		}
		defer func() { _ = os.RemoveAll(dir) }()
		ctx, cancel := context.WithTimeout(ctx, replayTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "-test.run="+pattern, "-test.v",
			"-rapid.failfile="+ff, "-rapid.checks=0", "-rapid.nofailfile")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		switch {
		case err == nil && strings.Contains(string(out), "INCONCLUSIVE: "):
			return false, errReplayBudget
		case err == nil:
			return false, nil
		case ctx.Err() != nil:
			return false, fmt.Errorf("replay did not end within %s: %w", replayTimeout, ctx.Err())
		case errors.As(err, &exit):
			return strings.Contains(string(out), match), nil
		default:
			return false, err
		}
	}
}

// errReplayBudget is a replay against a remote provider that ran out of
// its share of the budget: it says nothing about reproducibility.
var errReplayBudget = errors.New("a replay spent its share of the budget before it could tell (INCONCLUSIVE)")

// replayBudget is the environment that gives each of n replays of a
// remote run an equal share of what is left of the run's budgets, so the
// check never sends more than the run was allowed; an error when the share
// is nothing.
func (r *runState) replayBudget(n int) ([]string, error) {
	p := r.cfg.Remote
	if p == nil {
		return nil, nil
	}
	lim := p.Config().Limits
	reqs, posts := p.Meter().Used()
	perReq, perPost := (lim.MaxRequests-reqs)/n, (lim.MaxCharges-posts)/n
	perTime := time.Until(p.Meter().Deadline()) / time.Duration(n)
	if perReq < 1 || perPost < 1 || perTime <= 0 {
		return nil, fmt.Errorf("not checked: the budget left (%d requests, %d charges, %s) cannot pay for %d replays", lim.MaxRequests-reqs, lim.MaxCharges-posts, time.Until(p.Meter().Deadline()).Round(time.Second), n)
	}
	return []string{"IDEMCHECK_MAX_REQUESTS=" + strconv.Itoa(perReq), "IDEMCHECK_MAX_CHARGES=" + strconv.Itoa(perPost),
		"IDEMCHECK_MAX_DURATION=" + perTime.String()}, nil
}

// reproduce replays the run's failure of invariant, kept in rapid's
// failFile, r.cfg.Reproduce times in child processes of this test binary
// (against a remote provider, each within its share of the budget left):
// same test, same configuration through the environment, reports written
// to a scratch folder, no reproducibility check of their own and nothing
// appended to the CI job summary. Provider processing and retention are
// not passed on: a run that set them by hand replays with the defaults.
func (r *runState) reproduce(invariant, failFile string) (reports.Reproducibility, error) {
	return r.reproduceMatching("idemcheck: "+invariant+" violated", failFile)
}

// reproduceMatching is reproduce with the line a replay that failed again
// prints (match) and extra environment for the child.
func (r *runState) reproduceMatching(match, failFile string, extra ...string) (reports.Reproducibility, error) {
	scratch, err := os.MkdirTemp("", "idemcheck-replay-")
	if err != nil {
		return reports.Reproducibility{}, err
	}
	defer func() { _ = os.RemoveAll(scratch) }()
	env := []string{
		"IDEMCHECK_PROVIDER=" + r.cfg.Provider, "IDEMCHECK_MUTANT=" + r.cfg.Mutant,
		"IDEMCHECK_PROVIDER_STORE=" + r.cfg.ProviderStore, "IDEMCHECK_REDIS_URL=" + r.cfg.RedisURL,
		"IDEMCHECK_MAX_ORDERS=" + strconv.Itoa(r.cfg.MaxOrders), "IDEMCHECK_MAX_SCHEDULE=" + strconv.Itoa(r.cfg.MaxSchedule),
		"IDEMCHECK_REPORT_DIR=" + scratch, "IDEMCHECK_REPRODUCE=0", reports.StepSummaryEnv + "=",
		"IDEMCHECK_TIME_SCALE=" + strconv.FormatFloat(r.cfg.TimeScale, 'g', -1, 64),
	}
	if r.cfg.Provider == machine.ProviderWireMock {
		if url, err := backend.WireMockURL(); err == nil {
			// The replays share this run's server, under its turn.
			env = append(env, "IDEMCHECK_WIREMOCK_URL="+url, "IDEMCHECK_WIREMOCK_LOCKED=1")
		}
	}
	budget, err := r.replayBudget(r.cfg.Reproduce)
	if err != nil {
		return reports.Reproducibility{}, err
	}
	env = append(append(env, budget...), extra...)
	replay := ChildReplay(os.Args[0], runPattern(r.test), failFile, match, env)
	return CheckReproducible(context.Background(), r.cfg.Reproduce, replay)
}

// invariantNames lists every invariant, safety then liveness, in checking
// order.
func invariantNames() []string {
	var out []string
	for _, inv := range append(check.Safety(), check.Liveness()...) {
		out = append(out, inv.Name)
	}
	return out
}
