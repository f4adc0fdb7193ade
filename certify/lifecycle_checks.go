package certify

import (
	"fmt"
	"strings"
	"time"
)

// checkSlowCreate sends a create, then retries with the same key while it
// is in flight (20 ms after it, then each gap doubled, at most
// slowRetries): each must be 409 (or, once the create has answered, its
// replay), and the reference must list one charge. A lock whose lease is
// shorter than the handler (redis-lease-too-short), or no lock at all
// (redis-get-then-set), lets a retry charge again.
func checkSlowCreate(r *runner) (verdict, string, error) {
	if r.lease() == 0 {
		return nj, "the profile publishes no lifecycle.lease (how long a key's in-flight lock lasts)", nil
	}
	var overtaken string
	for try := 1; ; try++ {
		v, why, err := slowCreateOnce(r, try)
		if v != nj || !strings.HasPrefix(why, overtakenWhy) || try == slowOvertakenTries {
			if overtaken != "" && v != nj {
				why = strings.TrimSuffix(overtaken+"; "+why, "; ")
			}
			return v, why, err
		}
		overtaken = fmt.Sprintf("%d first create(s) overtaken by their retry (409), tried again under a new key", try)
	}
}

// overtakenWhy begins the NOT JUDGED reason of a slow create whose retry
// reached the provider first, so that the create itself was answered 409
// (on a loaded machine two connections can swap): checkSlowCreate then
// tries again, at most slowOvertakenTries times in all.
const (
	overtakenWhy       = "the first create was overtaken"
	slowOvertakenTries = 3
)

// slowCreateOnce is one try of checkSlowCreate under a new key.
func slowCreateOnce(r *runner, try int) (verdict, string, error) {
	key, body := r.newKeyHeader(), r.charge(fmt.Sprintf("slow-%d", try))
	first := r.postAsync(key, body)
	var during []answer
	gap := 20 * time.Millisecond
	for i := 0; i < slowRetries && !first.within(r.ctx, gap); i++ {
		a, err := r.post(key, body)
		if err != nil {
			<-first.done
			return inc, "", err
		}
		if !first.answered() {
			during = append(during, a)
		}
		gap *= 2
	}
	<-first.done
	if first.err != nil {
		return inc, "", first.err
	}
	list, err := r.charged(body.MerchantReference)
	if err != nil {
		return inc, "", err
	}
	var processed []string
	for _, a := range during {
		if a.status >= 200 && a.status < 300 && a.chargeID() != first.a.chargeID() {
			processed = append(processed, a.short())
		}
	}
	if len(list) > 1 || len(processed) > 0 {
		how := "retries sent while it was in flight were processed too"
		if len(processed) > 0 {
			how = "a retry sent while it was in flight was processed: " + strings.Join(processed, ", ")
		}
		return fail, fmt.Sprintf("one key charged %d times (%s): the first create took %s and answered %s; %s: the in-flight lock does not outlive the handler", len(list), chargeIDs(list), spanWords(first.took), first.a.short(), how), nil
	}
	if len(during) == 0 && first.a.status == 409 {
		return nj, fmt.Sprintf("%s by its retry: it was answered 409 in %s, a retry holding its key", overtakenWhy, spanWords(first.took)), nil
	}
	if len(during) == 0 {
		return nj, fmt.Sprintf("the first create was answered (%s) in %s, before a retry could be sent while it was in flight", first.a.short(), spanWords(first.took)), nil
	}
	if first.a.status != 201 {
		return inc, fmt.Sprintf("the first create answered %s, not 201", first.a.short()), nil
	}
	return pass, "", nil
}

// checkRestartHeld sends a create, runs the restart hook while it is in
// flight (Options.RestartAfter after it was sent), waits for readiness,
// then retries the key until it is answered other than 409, at most the
// published lease and a margin after the restart; then the reference must
// list at most one charge.
func checkRestartHeld(r *runner) (verdict, string, error) {
	if why := r.needs("restart"); why != "" {
		return nj, why, nil
	}
	lease := r.lease()
	if lease == 0 {
		return nj, "the profile publishes no lifecycle.lease (how long a key stays held after its worker died)", nil
	}
	key, body := r.newKeyHeader(), r.charge("restart-held")
	first := r.postAsync(key, body)
	answeredBefore := first.within(r.ctx, r.opts.RestartAfter)
	herr := r.hook(ReqRestartHeld, "restart")
	<-first.done
	if herr != nil {
		return inc, herr.Error(), nil
	}
	restarted := time.Now()
	if err := r.ready("the restart"); err != nil {
		return inc, err.Error(), nil
	}
	if answeredBefore {
		return nj, fmt.Sprintf("the create was answered (%s) in %s, before the restart: no key was in flight when the provider restarted", first.a.short(), spanWords(first.took)), nil
	}
	margin := max(lease/2, 2*time.Second)
	gap := max((lease+margin)/heldPolls, 100*time.Millisecond)
	var a answer
	held := 0
	for i := 0; i < heldPolls; i++ {
		var err error
		if a, err = r.post(key, body); err != nil {
			return inc, "", err
		}
		if a.status != 409 && a.status != r.p.Profile().Statuses.InFlight && !a.transient() {
			break
		}
		if a.status == 409 || a.status == r.p.Profile().Statuses.InFlight {
			held++
		}
		if time.Since(restarted) > lease+margin {
			break
		}
		if err := pause(r.ctx, gap); err != nil {
			return inc, "", r.spent()
		}
	}
	list, err := r.charged(body.MerchantReference)
	if err != nil {
		return inc, "", err
	}
	switch {
	case len(list) > 1:
		return fail, fmt.Sprintf("one key charged %d times (%s) across a restart while its first create was in flight", len(list), chargeIDs(list)), nil
	case (a.status == 409 || a.status == r.p.Profile().Statuses.InFlight) && time.Since(restarted) > lease:
		return fail, fmt.Sprintf("held: the key killed in flight by the restart still answered %d %s after the restart (%d answers of %d), beyond the published lease of %s", a.status, spanWords(time.Since(restarted)), held, a.status, windowWords(lease)), nil
	case a.transient():
		return inc, fmt.Sprintf("the key's retries after the restart were answered %s: transient, nothing shown", a.short()), nil
	}
	return pass, "", nil
}

// checkRestartOnce stores a key, runs the restart hook, waits for
// readiness and sends the key again: the replay, and one charge.
func checkRestartOnce(r *runner) (verdict, string, error) {
	if why := r.needs("restart"); why != "" {
		return nj, why, nil
	}
	key, body := r.newKeyHeader(), r.charge("restart-once")
	first, why, err := r.created(key, body)
	if err != nil || why != "" {
		return inc, why, err
	}
	if err := r.hook(ReqRestartOnce, "restart"); err != nil {
		return inc, err.Error(), nil
	}
	if err := r.ready("the restart"); err != nil {
		return inc, err.Error(), nil
	}
	again, list, err := r.afterwards(key, body)
	if err != nil {
		return inc, "", err
	}
	lc := r.p.Profile().Lifecycle
	published := "the profile publishes that a restart keeps keys and charges"
	if !lc.KeepsKeys() {
		published = fmt.Sprintf("as the profile publishes (lifecycle.restart_keeps: %s), but the draft keeps a key for its retention window (%s), which a restart does not end", lc.RestartKeeps, windowWords(time.Duration(r.p.Profile().RetentionWindow)))
	}
	switch {
	case len(list) > 1 || (again.chargeID() != "" && again.chargeID() != first.chargeID()):
		return fail, fmt.Sprintf("charged twice across a restart: the key answered %s before it and %s after it; the lookup lists %d charge(s) (%s); %s", first.short(), again.short(), len(list), chargeIDs(list), published), nil
	case again.transient():
		return inc, fmt.Sprintf("after the restart the key was answered %s: transient, nothing shown", again.short()), nil
	case !same(first, again):
		return fail, fmt.Sprintf("forgotten across a restart: the key answered %s before it and %s after it, not the replay; %s", first.short(), again.short(), published), nil
	case len(list) == 0 && lc.RestartKeeps != "nothing":
		return fail, fmt.Sprintf("the ledger was forgotten across a restart: the key replays %s but the lookup lists no charge", again.short()), nil
	}
	return pass, "", nil
}

// outage runs the store_down hook, then f, then always the store_up hook
// and the readiness wait; the error is the first hook or readiness
// failure.
func (r *runner) outage(req string, during func() error, after func()) error {
	if err := r.hook(req, "store_down"); err != nil {
		_ = r.hook(req, "store_up") // a half-run hook may have taken it down
		return err
	}
	ferr := during()
	if err := r.hook(req, "store_up"); err != nil {
		return err
	}
	if after != nil {
		after()
	}
	if err := r.ready("the store came back"); err != nil {
		return err
	}
	return ferr
}

// checkOutageRefused takes the store down, sends a create and, while it
// is in flight, the same create again (a shopper's retry during the
// outage), brings the store back while they may still be processing
// (Options.OutageStep after they were sent, or once both are answered),
// and judges both answers and, after the store is back, the key's retry.
// A refusal must be 503 with Retry-After (409 for the second, its key in
// flight); no answer (the provider died with its store) or another status
// is FAIL. A provider may instead hold a create until the store is back
// and process it then, under its key: the retry then replays it, and the
// lookup lists one charge. A provider that takes the store's error for a
// cache miss processes both without a lock and charges twice.
func checkOutageRefused(r *runner) (verdict, string, error) {
	if why := r.needs("store_down", "store_up"); why != "" {
		return nj, why, nil
	}
	key, body := r.newKeyHeader(), r.charge("outage")
	var fs []*inflight
	err := r.outage(ReqOutageRefused, func() error {
		fs = append(fs, r.postAsync(key, body), r.postAsync(key, body))
		for _, f := range fs {
			f.within(r.ctx, r.opts.OutageStep-time.Since(f.sent))
		}
		return nil
	}, func() {
		for _, f := range fs {
			<-f.done
		}
	})
	for _, f := range fs {
		<-f.done
	}
	if err != nil {
		return inc, err.Error(), nil
	}
	for _, f := range fs {
		if f.err != nil {
			return inc, "", f.err
		}
	}
	again, list, err := r.afterwards(key, body)
	if err != nil {
		return inc, "", err
	}
	after := fmt.Sprintf("after the store came back the key answered %s and the lookup lists %d charge(s) (%s)", again.short(), len(list), chargeIDs(list))
	if len(list) > 1 {
		return fail, fmt.Sprintf("one key charged %d times across a store outage: the create and its retry sent while the store was down answered %s and %s; %s", len(list), fs[0].a.short(), fs[1].a.short(), after), nil
	}
	for i, f := range fs {
		what := [...]string{"a create", "its retry"}[i]
		switch {
		case f.a.status >= 200 && f.a.status < 300 && !same(f.a, again):
			return fail, fmt.Sprintf("%s sent while the store was down was processed (%s) but its key was not kept: %s", what, f.a.short(), after), nil
		case f.a.status >= 200 && f.a.status < 300, i == 1 && f.a.status == 409:
			// Held until the store came back and processed under its
			// key, or refused as in flight behind it.
		case refusedInOutage(f.a) != "":
			return fail, fmt.Sprintf("%s sent while the store was down %s; %s", what, refusedInOutage(f.a), after), nil
		}
	}
	return pass, "", nil
}

// checkOutageReplayed stores a key, takes the store down (sending the key
// once while it is down: any answer but a new charge), brings it back and
// sends the key again: the replay, and one charge.
func checkOutageReplayed(r *runner) (verdict, string, error) {
	if why := r.needs("store_down", "store_up"); why != "" {
		return nj, why, nil
	}
	key, body := r.newKeyHeader(), r.charge("outage-replay")
	first, why, err := r.created(key, body)
	if err != nil || why != "" {
		return inc, why, err
	}
	var down answer
	if err := r.outage(ReqOutageReplayed, func() error {
		var err error
		down, err = r.post(key, body)
		return err
	}, nil); err != nil {
		return inc, err.Error(), nil
	}
	again, list, err := r.afterwards(key, body)
	if err != nil {
		return inc, "", err
	}
	switch {
	case len(list) > 1 || (down.chargeID() != "" && down.chargeID() != first.chargeID()) || (again.chargeID() != "" && again.chargeID() != first.chargeID()):
		return fail, fmt.Sprintf("charged twice across a store outage: the key answered %s before it, %s while the store was down and %s after; the lookup lists %d charge(s) (%s)", first.short(), down.short(), again.short(), len(list), chargeIDs(list)), nil
	case again.transient():
		return inc, fmt.Sprintf("after the store came back the key was answered %s: transient, nothing shown", again.short()), nil
	case !same(first, again):
		return fail, fmt.Sprintf("not replayed after the store came back: the key answered %s before the outage and %s after it", first.short(), again.short()), nil
	}
	return pass, "", nil
}
