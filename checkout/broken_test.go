package checkout_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/conformance"
	"github.com/idemcheck/idemcheck/sut/service"
)

// brokenVar selects, in a child process of TestCheckClient_broken, the way
// the client under test breaks its contract.
const brokenVar = "IDEMCHECK_TEST_BROKEN_CLIENT"

// broken is a client under test that breaks the checkout contract on its
// first checkout: it panics, hangs past every timeout (ignoring its
// context), or answers an outcome that is not one of the four.
type broken struct{ how string }

func (b broken) Checkout(context.Context, checkout.Order, string) checkout.Result {
	switch b.how {
	case "panics":
		panic("boom")
	case "hangs":
		<-time.After(2 * time.Hour) // virtual time in the harness's bubble: ignores its context
		return checkout.Result{Outcome: checkout.Paid}
	}
	return checkout.Result{Outcome: "OK!"}
}

func (broken) Reconcile(context.Context) (string, error) { return "", nil }

// brokenService is a checkout service on 127.0.0.1 that places orders as
// docs/client-api.md says, reconciles (nothing), and breaks the contract on checkout: it hangs
// until the harness hangs up, panics (net/http then cuts the connection),
// or answers bytes that are not HTTP.
func brokenService(how string) service.Launcher {
	return func(context.Context, string) (string, func(), error) {
		mux := http.NewServeMux()
		mux.HandleFunc("POST /orders", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"id": 1}`))
		})
		mux.HandleFunc("POST /reconcile", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"summary": "checked 0"}`))
		})
		mux.HandleFunc("POST /orders/{id}/checkout", func(w http.ResponseWriter, r *http.Request) {
			switch how {
			case "service-hangs":
				_, _ = io.Copy(io.Discard, r.Body)
				<-r.Context().Done()
			case "service-panics":
				panic("boom")
			default:
				if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
					_, _ = c.Write([]byte("OK PAID\r\n\r\n"))
					_ = c.Close()
				}
			}
		})
		s := httptest.NewServer(mux)
		return s.URL, s.Close, nil
	}
}

// serviceBudget is the duration budget of a broken service's run: every
// shrink attempt that reaches the hung checkout waits out its call timeout
// (1 s), and rapid checks its shrink time only between passes, so without
// it the hung service's run took over 2 minutes.
const serviceBudget = 30 * time.Second

// TestCheckClient_broken: a client under test — in Go (CheckClient) or a
// service over HTTP (CheckService) — that panics, hangs or answers
// garbage ends the run with a clear verdict (client-api, with a fixed
// sentence) and a failure report, in a bounded time — never a crash of the
// test binary or a hang. Each client runs in a child process of this test,
// since the run must fail.
func TestCheckClient_broken(t *testing.T) {
	switch how := os.Getenv(brokenVar); {
	case how == "":
	case strings.HasPrefix(how, "service-"):
		conformance.CheckService(t, brokenService(how), conformance.WithService(conformance.ServiceOptions{CallTimeout: time.Second, MaxDuration: serviceBudget}))
		return
	default:
		conformance.CheckClient(t, func(checkout.Env) (checkout.Client, error) { return broken{how}, nil })
		return
	}
	for how, want := range map[string]string{
		"panics":  "client-api: a checkout panicked",
		"hangs":   "client-api: a checkout did not return within",
		"garbage": `client-api: a checkout answered "OK!", not one of Paid, PaymentPending, Declined, Failed`,
		// The same over HTTP (CheckService), bounded by the call timeout.
		"service-hangs":   "client-api: a checkout got no answer within 1s",
		"service-panics":  "client-api: a checkout lost the connection before a whole answer",
		"service-garbage": "client-api: a checkout got an answer that is not HTTP",
	} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCheckClient_broken$", "-rapid.seed=1")
			// Over HTTP every shrink attempt that reaches the hang waits out
			// the call timeout (1 s): the run's duration budget
			// (serviceBudget) is what bounds the run then.
			cmd.Env = append(os.Environ(), brokenVar+"="+how, "IDEMCHECK_REPORT_DIR="+dir, "RAPID_CHECKS=20", "RAPID_SHRINKTIME=20s",
				"IDEMCHECK_PROVIDER=", "IDEMCHECK_MUTANT=", "GITHUB_STEP_SUMMARY=", "IDEMCHECK_REPRODUCE=0")
			cmd.Dir = t.TempDir() // rapid's fail file lands there, not in the package
			out, err := cmd.CombinedOutput()
			require.NoError(t, ctx.Err(), "the run did not end in time; output:\n%s", out)
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "the run must fail; output:\n%s", out)
			assert.NotContains(t, string(out), "panic: boom", "the client's panic must not crash the test binary")
			// Regression: a Go client still sleeping past its bound when the
			// sequence ended made synctest report a deadlock ("[rapid] panic
			// after 0 tests") instead of the verdict.
			assert.NotContains(t, string(out), "deadlock")
			// A hung service's shrink ends at the run's duration budget; an
			// attempt cut there does not fail again, which rapid may call
			// "flaky test" (on a loaded machine). Either way the run ends
			// with the client-api verdict and its report, checked below.
			if !strings.Contains(string(out), "[rapid] flaky test") {
				assert.Contains(t, string(out), "[rapid] failed after")
			}
			files, _ := filepath.Glob(filepath.Join(dir, "*", "failure.json"))
			require.Len(t, files, 1, "one failure report; output:\n%s", out)
			raw, err := os.ReadFile(files[0])
			require.NoError(t, err)
			var rep struct {
				Invariant string   `json:"invariant"`
				Message   string   `json:"message"`
				StepCount int      `json:"step_count"`
				Notes     []string `json:"notes"`
			}
			require.NoError(t, json.Unmarshal(raw, &rep))
			assert.Equal(t, "client-api", rep.Invariant)
			assert.Contains(t, rep.Message, want)
			assert.LessOrEqual(t, rep.StepCount, 2, "a broken first checkout shrinks to a short sequence")
			if how == "service-hangs" {
				// The shrink ends at the budget, and the report says so.
				assert.Contains(t, strings.Join(rep.Notes, "\n"), "the duration budget (ServiceOptions.MaxDuration "+serviceBudget.String()+") is spent")
			}
			_, err = os.Stat(filepath.Join(filepath.Dir(files[0]), "failure.md"))
			assert.NoError(t, err, "the Markdown report beside the JSON")
		})
	}
}
