package remote

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Lifecycle is what a provider publishes about its own failures (profile
// field "lifecycle", docs/profiles.md): what a restart keeps, how long a
// key stays locked in flight, and the hooks that restart it and take its
// store down and up. Every field is optional; the lifecycle requirements
// (certify/lifecycle.go) that need a missing one are NOT JUDGED.
type Lifecycle struct {
	// Lease is how long the in-flight lock of a key outlives the worker
	// holding it (seed article 004: a lock with a lease of its own): after
	// a restart that killed a request in flight, the key answers 409 at
	// most this long. A Go duration ("30s"); 0 for not published.
	Lease Span `json:"lease,omitempty"`
	// RestartKeeps is what a restart keeps: RestartKeepsAll (keys and
	// charges, the default: the draft's retention window does not end at
	// a restart), RestartKeepsCharges (the ledger, not the keys) or
	// RestartKeepsNothing (all in process memory).
	RestartKeeps string `json:"restart_keeps,omitempty"`
	// Hooks are the provider team's commands (Hooks); flags and
	// IDEMCHECK_HOOK_* variables override them one by one.
	Hooks Hooks `json:"hooks"`
}

// What a restart keeps (Lifecycle.RestartKeeps).
const (
	RestartKeepsAll     = "keys-and-charges"
	RestartKeepsCharges = "charges"
	RestartKeepsNothing = "nothing"
)

// KeepsKeys reports whether the profile publishes that a restart keeps
// completed keys (the default).
func (l Lifecycle) KeepsKeys() bool { return l.RestartKeeps == "" || l.RestartKeeps == RestartKeepsAll }

func (l Lifecycle) check() error {
	switch l.RestartKeeps {
	case "", RestartKeepsAll, RestartKeepsCharges, RestartKeepsNothing:
	default:
		return fmt.Errorf("lifecycle.restart_keeps %q is not %s, %s or %s", l.RestartKeeps, RestartKeepsAll, RestartKeepsCharges, RestartKeepsNothing)
	}
	return l.Hooks.check()
}

// Span is a positive time.Duration read from and written as a Go
// duration string ("30s"): a lease or a hook's timeout.
type Span time.Duration

// UnmarshalJSON reads a positive Go duration string.
func (d *Span) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New("a duration must be a string such as \"30s\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		return fmt.Errorf("%q is not a positive Go duration", s)
	}
	*d = Span(v)
	return nil
}

// MarshalJSON writes a duration string.
func (d Span) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }
