package models

import (
	"fmt"
	"time"
)

// KeyState is what a provider remembers of one idempotency key.
type KeyState int

// The states of a key in the specification.
const (
	// KeyAbsent: never seen, or forgotten after the retention window.
	KeyAbsent KeyState = iota
	// KeyInFlight: a request under the key is being processed.
	KeyInFlight
	// KeyCompleted: the first request finished; its response is stored.
	KeyCompleted
)

func (s KeyState) String() string {
	switch s {
	case KeyInFlight:
		return "in-flight"
	case KeyCompleted:
		return "completed"
	default:
		return "absent"
	}
}

// ExpectKind is what the specification allows a provider to do with one
// arriving request.
type ExpectKind int

// The provider's possible answers (docs/provider-api.md; draft §2.6 "Error Scenarios").
const (
	// ExpectProcess: the key is free; the provider processes the request
	// and its answer becomes the key's stored response.
	ExpectProcess ExpectKind = iota
	// ExpectConflict: the first request under the key is still being
	// processed; answer 409 and create nothing.
	ExpectConflict
	// ExpectReplay: the key completed; answer the stored status and body.
	ExpectReplay
	// ExpectMismatch: the key is known with another fingerprint; answer
	// 422 and create nothing.
	ExpectMismatch
	// ExpectMissingKey: no key on a create; answer 400 and create nothing.
	ExpectMissingKey
)

func (k ExpectKind) String() string {
	return [...]string{"process", "409 conflict", "replay", "422 mismatch", "400 missing key"}[k]
}

// Expect is the specification's verdict on one arrival. For ExpectReplay,
// Status and Digest are those of the stored first response; for an
// ExpectMismatch under a stored decline (402) they are the decline's, which
// may be replayed instead of 422 (another card under a declined key must
// not charge: the stored 402 or 422). InFlight marks an ExpectMismatch that
// arrived while the key's first request was still processing (a double
// click carrying another amount or card): 409 is then allowed as well.
type Expect struct {
	Kind     ExpectKind
	Status   int
	Digest   string
	InFlight bool
}

// Status409 and friends are the status codes of the reference dialect.
const (
	Status400 = 400
	Status409 = 409
	Status422 = 422
	status402 = 402 // a decline (docs/provider-api.md)
)

// Matches reports whether a provider answer (status and body digest) is one
// the specification allows. For ExpectProcess any answer below 500 is
// allowed (what to answer is the provider's business; that it is stored is
// checked by later replays).
func (e Expect) Matches(status int, digest string) bool {
	switch e.Kind {
	case ExpectConflict:
		return status == Status409
	case ExpectReplay:
		return status == e.Status && digest == e.Digest
	case ExpectMismatch:
		return status == Status422 || (e.InFlight && status == Status409) ||
			(e.Status == status402 && status == e.Status && digest == e.Digest)
	case ExpectMissingKey:
		return status == Status400
	default:
		return status < 500
	}
}

func (e Expect) String() string {
	switch {
	case e.Kind == ExpectReplay:
		return fmt.Sprintf("replay of %d (body %s)", e.Status, short(e.Digest))
	case e.Kind == ExpectMismatch && e.InFlight:
		return "422 mismatch or 409 (in flight)"
	case e.Kind == ExpectMismatch && e.Status == status402:
		return fmt.Sprintf("422 mismatch or the stored 402 (body %s)", short(e.Digest))
	}
	return e.Kind.String()
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// KeyRecord is the specification's memory of one key.
type KeyRecord struct {
	State       KeyState
	Fingerprint string
	Status      int
	Digest      string
	StartedAt   time.Time
	CompletedAt time.Time
	// FreeBy is set for a key whose processing died with its provider
	// (Abandon): it stays in flight until FreeBy at the latest — the end
	// of the in-flight lock's lease — and is absent after.
	FreeBy time.Time
}

// Spec is the provider's idempotency contract as a pure state machine:
// key → in-flight / completed(status, body) / expired. Its methods return a
// new Spec and never change the receiver, so a checker may keep earlier
// states (as a linearizability search does). Sources: draft-ietf-httpapi-
// idempotency-key-header §2 (uniqueness, fingerprint, retention), seed
// article 004 (in-flight lock, stored full response, 24 h TTL).
type Spec struct {
	// Retention is the published retention window; a completed key is
	// forgotten once more than Retention has passed since it completed.
	Retention time.Duration
	keys      map[string]KeyRecord
	inPlace   bool // NewSequentialSpec: transitions update keys itself
}

// NewSpec returns the specification of a provider that remembers completed
// keys for retention (24h in the reference dialect).
func NewSpec(retention time.Duration) Spec {
	return Spec{Retention: retention, keys: map[string]KeyRecord{}}
}

// NewSequentialSpec is NewSpec for a checker that replays one history in
// order and never keeps an earlier state: its transitions update the
// state they are given instead of copying it (O(1), not O(keys), per
// transition), so a value it returned earlier must not be used again.
func NewSequentialSpec(retention time.Duration) Spec {
	return Spec{Retention: retention, keys: map[string]KeyRecord{}, inPlace: true}
}

// Record returns the state of key at time now (expiry applied).
func (s Spec) Record(key string, now time.Time) KeyRecord {
	r, ok := s.keys[key]
	if !ok || (r.State == KeyCompleted && now.Sub(r.CompletedAt) > s.Retention) {
		return KeyRecord{}
	}
	if r.State == KeyInFlight && !r.FreeBy.IsZero() && now.After(r.FreeBy) {
		return KeyRecord{} // its dead holder's lease ran out
	}
	return r
}

func (s Spec) with(key string, r KeyRecord) Spec {
	if s.inPlace {
		if r.State == KeyAbsent {
			delete(s.keys, key)
		} else {
			s.keys[key] = r
		}
		return s
	}
	keys := make(map[string]KeyRecord, len(s.keys)+1)
	for k, v := range s.keys {
		keys[k] = v
	}
	if r.State == KeyAbsent {
		delete(keys, key)
	} else {
		keys[key] = r
	}
	return Spec{Retention: s.Retention, keys: keys}
}

// Arrive is a create request with key (hasKey false if none) and request
// fingerprint fp reaching the provider at now. It returns the next state and
// what the provider may answer.
func (s Spec) Arrive(key string, hasKey bool, fp string, now time.Time) (Spec, Expect) {
	if !hasKey {
		return s, Expect{Kind: ExpectMissingKey}
	}
	r := s.Record(key, now)
	switch {
	case r.State == KeyAbsent:
		return s.with(key, KeyRecord{State: KeyInFlight, Fingerprint: fp, StartedAt: now}), Expect{Kind: ExpectProcess}
	case r.Fingerprint != fp && r.State == KeyInFlight:
		return s, Expect{Kind: ExpectMismatch, InFlight: true}
	case r.Fingerprint != fp && r.Status == status402:
		return s, Expect{Kind: ExpectMismatch, Status: r.Status, Digest: r.Digest}
	case r.Fingerprint != fp:
		return s, Expect{Kind: ExpectMismatch}
	case r.State == KeyInFlight:
		return s, Expect{Kind: ExpectConflict}
	default:
		return s, Expect{Kind: ExpectReplay, Status: r.Status, Digest: r.Digest}
	}
}

// Complete is the processing of key finishing at now with status and a
// digest of the body. Answers below 500 are stored for replay; a 5xx
// releases the key (nothing was stored, a retry may process again).
// Completing a key that is not in flight changes nothing.
func (s Spec) Complete(key string, status int, digest string, now time.Time) Spec {
	r := s.Record(key, now)
	if r.State != KeyInFlight {
		return s
	}
	if status >= 500 {
		return s.with(key, KeyRecord{})
	}
	r.State, r.Status, r.Digest, r.CompletedAt = KeyCompleted, status, digest, now
	return s.with(key, r)
}

// Abandon is the processing of key dying with its provider process (killed
// while it held the key) at now: nothing is stored, and the key stays in
// flight (409) until freeBy at the latest — its lock's lease — and is
// absent after it, so a retry is then processed once (seed article 004's
// lock, held until the work is done, must not outlive a dead worker).
// Abandoning a key that is not in flight changes nothing.
func (s Spec) Abandon(key string, freeBy, now time.Time) Spec {
	r := s.Record(key, now)
	if r.State != KeyInFlight {
		return s
	}
	r.FreeBy = freeBy
	return s.with(key, r)
}

// Forget is a provider freeing a key whose holder died (Abandon) before
// its lease ran out: allowed, since the dead request commits nothing.
// Forgetting any other key changes nothing.
func (s Spec) Forget(key string, now time.Time) Spec {
	if r := s.Record(key, now); r.State == KeyInFlight && !r.FreeBy.IsZero() {
		return s.with(key, KeyRecord{})
	}
	return s
}
