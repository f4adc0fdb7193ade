package faults

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"time"
)

// Kind names one kind of fault.
type Kind string

// Fault is what happens to one request. Delay is the wait for KindDelay and
// the extra processing time for KindSlowProcessing; RetryAfter is the
// Retry-After value in whole seconds for KindStatus429.
type Fault struct {
	Kind       Kind          `json:"kind"`
	Delay      time.Duration `json:"delay,omitempty"`
	RetryAfter int           `json:"retry_after,omitempty"`
}

// String is the fault as reports and failure messages show it, for example
// "pass", "delay 1.5s", "503", "slow-processing 12s".
func (f Fault) String() string {
	k, ok := registry[f.Kind]
	if !ok {
		return string(f.Kind)
	}
	return k.describe(f)
}

// forwardFunc sends the request on to the provider.
type forwardFunc func(*http.Request) (*http.Response, error)

// kind is one registered fault kind: how it is described and applied.
type kind struct {
	describe func(Fault) string
	// apply decides what the client gets: it may call forward (at most once).
	apply func(ctx context.Context, f Fault, req *http.Request, forward forwardFunc) (*http.Response, error)
	// forwards is false for kinds that never let the request reach the provider.
	forwards bool
}

var registry = map[Kind]kind{}

func register(k Kind, v kind) {
	if _, dup := registry[k]; dup {
		panic("faults: kind registered twice: " + k)
	}
	registry[k] = v
}

// Kinds lists the registered fault kinds in name order.
func Kinds() []Kind {
	ks := make([]Kind, 0, len(registry))
	for k := range registry {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
	return ks
}

// Forwards reports whether a fault of kind k lets the request reach the
// provider (pass, delay, lose-response, slow-processing) or not.
func Forwards(k Kind) bool { return registry[k].forwards }

// ErrInjected is the sentinel every injected transport failure wraps.
var ErrInjected = errors.New("idemcheck: injected fault")

// InjectedError is a transport failure the fault layer made up: the client
// sees it as a network error. Kind names the fault.
type InjectedError struct {
	Kind Kind
	Msg  string
}

func (e *InjectedError) Error() string { return fmt.Sprintf("%s (injected %s)", e.Msg, e.Kind) }

// Unwrap makes errors.Is(err, ErrInjected) hold.
func (e *InjectedError) Unwrap() error { return ErrInjected }

// wait blocks for d or until ctx is done, whichever is first; it reports
// whether the full d passed.
func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
