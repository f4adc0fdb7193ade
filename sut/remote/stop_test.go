package remote_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/sut/remote"
)

// TestMeterStop: after Stop (idemcheck's SIGINT) the meter refuses every
// request as interrupted, with plenty of every budget left — not as a
// spent duration budget (issue 22, item 5: every reason then read "the
// duration budget is spent").
func TestMeterStop(t *testing.T) {
	m := remote.NewMeter(remote.Limits{MaxRequests: 10, MaxCharges: 10, MaxDuration: time.Hour})
	if err := m.Take(http.MethodPost); err != nil {
		t.Fatal(err)
	}
	m.Interrupt("the run was interrupted (SIGINT)")
	m.Interrupt("a second reason is not kept")
	var ie *remote.InterruptError
	if err := m.Take(http.MethodGet); !errors.As(err, &ie) || !errors.Is(err, remote.ErrBudget) || ie.Why != "the run was interrupted (SIGINT)" {
		t.Errorf("Take after Interrupt = %v, want the interrupt, wrapping ErrBudget", err)
	}
	if ok, why := m.Afford(1, 0); ok || why != "interrupted" {
		t.Errorf("Afford after Interrupt = %v %q, want false \"interrupted\"", ok, why)
	}
	if got := m.Interrupted(); got != "the run was interrupted (SIGINT)" {
		t.Errorf("Interrupted = %q", got)
	}
	if req, posts := m.Used(); req != 1 || posts != 1 {
		t.Errorf("Used = %d, %d: a refused request was counted", req, posts)
	}
}

// TestInterruptEndsARequestInFlight: the run's interrupt ends a request
// the provider holds, at once, rather than when the provider answers or
// the request's own timeout ends it. Regression (issue 22, item 5): after
// SIGINT the run waited 7–11 s for a hung request. The provider here
// holds every request 60 s; the bound, 20 s, is far from both.
func TestInterruptEndsARequestInFlight(t *testing.T) {
	const hang = 60 * time.Second
	arrived := make(chan struct{}, 1)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20)) // then a hang-up ends r's context
		select {
		case arrived <- struct{}{}:
		default:
		}
		select { // held: until the client hangs up, or at most hang
		case <-r.Context().Done():
		case <-time.After(hang):
		}
	}))
	t.Cleanup(s.Close)
	p, err := remote.New(remote.Config{BaseURL: s.URL, Limits: remote.Limits{MaxDuration: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		err  error
		took time.Duration
	}
	done := make(chan result, 1)
	go func() {
		began := time.Now()
		resp, err := create(context.Background(), p, "interrupted") // no deadline of its own
		if resp != nil {
			_ = resp.Body.Close()
		}
		done <- result{err, time.Since(began)}
	}()
	select {
	case <-arrived:
	case <-time.After(hang):
		t.Fatal("the create never reached the provider")
	}
	p.Meter().Interrupt("the run was interrupted (SIGTERM)")
	var got result
	select {
	case got = <-done:
	case <-time.After(2 * hang):
		t.Fatal("the create never ended")
	}
	var ie *remote.InterruptError
	if !errors.As(got.err, &ie) || ie.Why != "the run was interrupted (SIGTERM)" {
		t.Errorf("the create in flight ended with %v, want the interrupt", got.err)
	}
	if got.took >= 20*time.Second {
		t.Errorf("the create in flight ended after %s, not at the interrupt (the provider held it %s)", got.took, hang)
	}
}
