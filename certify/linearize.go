package certify

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/idemcheck/idemcheck/models"
)

// The linearizability check: the POSTs of a requirement that reached the
// provider, each the interval from leaving the proxy to the provider's
// answer, are checked with porcupine against models.Spec — is there one
// order of the provider's decisions, each inside its request's interval,
// that the specification allows? This judges concurrent histories without
// hand-written expectations of who wins.
//
// A request the provider processed is two steps inside its interval: its
// arrival (Spec.Arrive marks the key in flight) and its completion
// (Spec.Complete stores the answer). The model cannot tell from an answer
// whether a request processed or replayed, so every 2xx / 402 / 5xx answer
// is an arrival step, which takes the key only if it is free, and a
// completion step, which either completes the key it took or must be a
// replay of the stored answer. 409, 422 and a keyless 400 are single steps
// the Spec must expect. 400 with a key, 429, 401, 403 and 404 change
// nothing and are left out; so are keyless creates (judged by the
// missing-key requirement). Retention is not modelled here (every step is
// at one instant): the retention requirement judges it.

type linKind int

const (
	linArrive linKind = iota
	linComplete
	linConflict
	linMismatch
)

// linIn is one step: which exchange, its key and request fingerprint.
type linIn struct {
	kind linKind
	ex   int
	key  string
	fp   string
}

// linOut is the provider's answer to the exchange.
type linOut struct {
	status int
	digest string
}

// linState is Spec plus which exchange holds each key in flight and which
// exchanges have arrived (a completion step comes after its arrival).
type linState struct {
	spec    models.Spec
	owner   map[string]int // key -> exchange id processing it
	arrived map[int]bool   // exchange ids whose arrival step was taken
	keys    []string       // every key of the history, for Equal
}

// at is the one instant of every step.
var at = time.Unix(0, 0).UTC()

func (s linState) withOwner(key string, ex int) linState {
	owner := make(map[string]int, len(s.owner)+1)
	for k, v := range s.owner {
		owner[k] = v
	}
	if ex == 0 {
		delete(owner, key)
	} else {
		owner[key] = ex
	}
	return linState{spec: s.spec, owner: owner, arrived: s.arrived, keys: s.keys}
}

func (s linState) withArrived(ex int) linState {
	arrived := make(map[int]bool, len(s.arrived)+1)
	for k := range s.arrived {
		arrived[k] = true
	}
	arrived[ex] = true
	s.arrived = arrived
	return s
}

func linStep(state, input, output any) (bool, any) {
	s, in, out := state.(linState), input.(linIn), output.(linOut)
	switch in.kind {
	case linArrive:
		next, x := s.spec.Arrive(in.key, true, in.fp, at)
		s = s.withArrived(in.ex)
		if x.Kind != models.ExpectProcess {
			return true, s // not the processing request: its completion step judges it
		}
		s = s.withOwner(in.key, in.ex)
		s.spec = next
		return true, s
	case linComplete:
		if !s.arrived[in.ex] {
			return false, s
		}
		if s.owner[in.key] == in.ex && s.spec.Record(in.key, at).State == models.KeyInFlight {
			s = s.withOwner(in.key, 0)
			s.spec = s.spec.Complete(in.key, out.status, out.digest, at)
			return true, s
		}
		if out.status >= 500 {
			return true, s // a transient failure that never took the key
		}
		_, x := s.spec.Arrive(in.key, true, in.fp, at)
		return (x.Kind == models.ExpectReplay || x.Kind == models.ExpectMismatch) && x.Matches(out.status, out.digest), s
	case linConflict:
		_, x := s.spec.Arrive(in.key, true, in.fp, at)
		return x.Kind == models.ExpectConflict || (x.Kind == models.ExpectMismatch && x.InFlight), s
	default: // linMismatch
		_, x := s.spec.Arrive(in.key, true, in.fp, at)
		return x.Kind == models.ExpectMismatch, s
	}
}

func linEqual(a, b any) bool {
	x, y := a.(linState), b.(linState)
	if len(x.owner) != len(y.owner) || len(x.arrived) != len(y.arrived) {
		return false
	}
	for k := range x.arrived {
		if !y.arrived[k] {
			return false
		}
	}
	for k, v := range x.owner {
		if y.owner[k] != v {
			return false
		}
	}
	for _, k := range x.keys {
		if x.spec.Record(k, at) != y.spec.Record(k, at) {
			return false
		}
	}
	return true
}

// linOps turns the forwarded, keyed POSTs of exs into porcupine operations.
// A request with no answer from the provider is an arrival that may take
// effect at any time after it left (its interval never ends).
func linOps(exs []models.Exchange) ([]porcupine.Operation, []string) {
	var ops []porcupine.Operation
	seen := map[string]bool{}
	var keys []string
	for _, e := range exs {
		if !e.IsPost() || !e.Forwarded || !e.HasKey || e.ArrivedAt.IsZero() {
			continue
		}
		if !seen[e.Key] {
			seen[e.Key] = true
			keys = append(keys, e.Key)
		}
		in := linIn{ex: e.ID, key: e.Key, fp: e.Fingerprint}
		call, ret := e.ArrivedAt.UnixNano(), int64(math.MaxInt64)
		if e.ProviderDone {
			ret = e.ProviderDoneAt.UnixNano()
		}
		out := linOut{status: e.ProviderStatus, digest: e.ProviderBodyDigest}
		add := func(k linKind) {
			in.kind = k
			ops = append(ops, porcupine.Operation{ClientId: len(ops), Input: in, Call: call, Output: out, Return: ret})
		}
		switch s := e.ProviderStatus; {
		case !e.ProviderDone:
			add(linArrive)
		case s == 409:
			add(linConflict)
		case s == 422:
			add(linMismatch)
		case s == 400 || s == 401 || s == 403 || s == 404 || s == 429:
		default:
			add(linArrive)
			add(linComplete)
		}
	}
	sort.Strings(keys)
	return ops, keys
}

// linearizable checks exs against models.Spec within timeout: porcupine.Ok,
// Illegal (no order of the provider's decisions explains the answers), or
// Unknown (the search ran out of time).
func linearizable(exs []models.Exchange, timeout time.Duration) porcupine.CheckResult {
	res, _ := linearizableShown(exs, timeout)
	return res
}

// linearizableShown is linearizable, with porcupine's own visualisation
// of the history (an HTML page, porcupine.Visualize) when it is Illegal,
// nil otherwise: the run folder keeps it beside the page.
func linearizableShown(exs []models.Exchange, timeout time.Duration) (porcupine.CheckResult, []byte) {
	ops, keys := linOps(exs)
	if len(ops) == 0 {
		return porcupine.Ok, nil
	}
	model := porcupine.Model{
		Init: func() any {
			return linState{spec: models.NewSpec(24 * time.Hour), owner: map[string]int{}, arrived: map[int]bool{}, keys: keys}
		},
		Step:  linStep,
		Equal: linEqual,
		DescribeOperation: func(input, output any) string {
			in, _ := input.(linIn)
			out, _ := output.(linOut)
			return fmt.Sprintf("exchange %d (%v): %d", in.ex, in.kind, out.status)
		},
	}
	res, info := porcupine.CheckOperationsVerbose(model, ops, timeout)
	if res != porcupine.Illegal {
		return res, nil
	}
	var page bytes.Buffer
	if porcupine.Visualize(model, info, &page) != nil {
		return res, nil
	}
	return res, page.Bytes()
}
