package conformance

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/service"
)

// ServiceOptions bound a CheckService run's calls to the service.
type ServiceOptions struct {
	// CallTimeout bounds each request to the service, answer included;
	// default service.DefaultCallTimeout (5 s). A service that does not
	// answer a checkout within it fails the run on client-api.
	CallTimeout time.Duration
	// MaxDuration bounds the run's wall-clock time, from CheckService's
	// start; default DefaultServiceDuration (10 min, as a remote run's
	// IDEMCHECK_MAX_DURATION). The search stops once all but ShrinkShare
	// (30 %) of it is spent — the run is then INCONCLUSIVE, as a remote
	// run on its budget — and a shrink stops at its end, its smallest
	// counterexample marked "not minimal: budget": a hung service costs a
	// CallTimeout per shrink attempt, and rapid's shrink time is only
	// checked between its passes (a pass over one drawn number can make
	// ~100 attempts).
	MaxDuration time.Duration
}

// DefaultServiceDuration is ServiceOptions.MaxDuration's default.
const DefaultServiceDuration = 10 * time.Minute

// WithService sets CheckService's bounds.
func WithService(o ServiceOptions) Option {
	return func(u *underTest) { u.service = o }
}

// CheckService checks the conformance property against a checkout service
// in another process, in any language, speaking docs/client-api.md: for
// each drawn sequence, launch starts a fresh service whose provider is the
// embedded reference provider behind the fault proxy on 127.0.0.1, in real
// time (the service's own timeouts should be scaled like Config.TimeScale:
// 1/15 by default, attempt 200 ms, total 667 ms); the harness places
// orders, checks out, reconciles and (if offered) restarts and reads the
// state over HTTP, and judges what crossed the wire to the provider plus
// the service's answers. Every call is bounded (ServiceOptions); a hung,
// crashed or garbage-answering service fails on client-api with a report.
func CheckService(t *testing.T, launch service.Launcher, opts ...Option) *Stats {
	t.Helper()
	opts = append([]Option{func(u *underTest) { u.launch = launch }}, opts...)
	opts = append(opts, func(u *underTest) {
		u.service.MaxDuration = orDefault(u.service.MaxDuration, DefaultServiceDuration)
		u.deadline = time.Now().Add(u.service.MaxDuration)
	})
	return CheckClient(t, nil, opts...)
}

// dialService is the checkout.New of CheckService: start the service
// against the loopback provider and dial it.
func (w *world) dialService(u *underTest) checkout.New {
	return func(env checkout.Env) (checkout.Client, error) {
		ctx, cancel := context.WithTimeout(context.Background(), service.StartTimeout+time.Second)
		defer cancel()
		base, stop, err := u.launch(ctx, env.BaseURL)
		if err != nil {
			return nil, err
		}
		w.closers = append(w.closers, stop)
		return service.Dial(ctx, service.Config{BaseURL: base, Now: env.Now, CallTimeout: u.service.CallTimeout})
	}
}

// overHTTP reports whether the client under test is a service in another
// process (CheckService): the run is then in real time.
func (u *underTest) overHTTP() bool { return u != nil && u.launch != nil }

// close ends what the world started outside the process, last first.
func (w *world) close() {
	for i := len(w.closers) - 1; i >= 0; i-- {
		w.closers[i]()
	}
	w.closers = nil
	if c, ok := w.cli.(io.Closer); ok {
		_ = c.Close()
	}
}

// orderReader is a client that can say where one order stands (the
// service's GET /orders/{id}) without a whole view.
type orderReader interface {
	Order(ctx context.Context, id int64) (models.Order, error)
}
