package run

import (
	"flag"
	"fmt"
	"time"

	"github.com/idemcheck/idemcheck/conformance/internal/machine"
	"github.com/idemcheck/idemcheck/internal/stackgrow"
	"pgregory.net/rapid"
)

// StallAfter is how long, in wall-clock time, a check in its virtual-time
// bubble may go without progress — no step begun, no phase reached
// (machine.Pulse) — before the run ends it as stalled: a step of the
// embedded provider and a client takes milliseconds, and a stalled bubble
// never resumes by itself. It outlasts the longest wait a step may make
// in real time from its bubble: a PostgreSQL attempt store's statement or
// lock timeout (10 s, sut/client/pgstore), twice over.
const StallAfter = 30 * time.Second

// stallPoll is how often the stall watch reads the check's pulse.
const stallPoll = time.Second

// watched runs prop in a virtual-time bubble (rapid.SyncTest) and watches
// its pulse from outside it, in wall-clock time. A check that stops
// beating for StallAfter is abandoned (its bubble is left behind: nothing
// can end it) and the run fails on client-api, naming where it stalled
// and what to look for; every later check of the run, rapid's shrinking
// included, fails at once with the same message, from the same line, so
// rapid ends at once too (a stall is not shrunk: each try would cost
// StallAfter), and keeps no fail file (noFailFile): rapid's -rapid.seed
// replays the stalled sequence.
func (r *runState) watched(t *rapid.T, prop func(*rapid.T, *machine.Pulse)) {
	if r.stallMessage() == "" {
		r.watch(t, prop)
	}
	if msg := r.stallMessage(); msg != "" {
		t.Fatalf("%s", msg)
	}
}

// watch is watched's bubble and its watch: a panic of the check (its
// failure) is raised again here, in rapid's goroutine.
func (r *runState) watch(t *rapid.T, prop func(*rapid.T, *machine.Pulse)) {
	p := new(machine.Pulse)
	done := make(chan any, 1)
	go func() {
		ended := false
		defer func() {
			v := recover()
			if v == nil && !ended {
				v = "[rapid] SyncTest ended by runtime.Goexit" // never seen: rapid's own goroutine recovers
			}
			done <- v
		}()
		rapid.SyncTest(t, func(t *rapid.T) {
			stackgrow.To(stackgrow.Check)
			p.Beat(0, "the start of the sequence", "the world and the client under test are built")
			prop(t, p)
		})
		ended = true
	}()
	tick := time.NewTicker(stallPoll)
	defer tick.Stop()
	seen, since := p.Beats(), time.Now()
	for {
		select {
		case v := <-done:
			if v != nil {
				panic(v)
			}
			return
		case now := <-tick.C:
			if b := p.Beats(); b != seen {
				seen, since = b, now
				continue
			}
			if now.Sub(since) >= StallAfter {
				p.Abandon()
				r.noteStall(p.Where())
				return
			}
		}
	}
}

// noteStall records the run's stall at where: its message, and client-api
// as the invariant its statistics report broken.
func (r *runState) noteStall(where string) {
	msg := fmt.Sprintf("%s: the sequence stalled at %s: for %v of wall-clock time the bubble's virtual clock could not advance, "+
		"because a goroutine of the client under test is blocked outside virtual time: look for a sync.Mutex held across a provider call "+
		"(a second click then waits on it while the first waits on the provider), a channel made outside the bubble, "+
		"or real I/O (its own http.Client, a socket, a file); hold no lock across a call to Env.HTTPClient, and give every "+
		"blocking call the ctx it is handed (a stall is neither shrunk nor kept in a fail file, since rapid records no draws of the check "+
		"that found it and running it again costs another %v: rapid's -rapid.seed below replays the sequence, stalling at the same step)",
		machine.ClientAPI, where, StallAfter, StallAfter)
	r.noFailFile() // before the stall is noted: every check that fails on it sees the flag set
	r.mu.Lock()
	if r.stalled == "" {
		r.stalled = msg
	}
	r.mu.Unlock()
	r.stats.mu.Lock()
	r.stats.violated, r.stats.violation = machine.ClientAPI, msg
	r.stats.mu.Unlock()
}

// stallMessage is the run's stall, "" while none.
func (r *runState) stallMessage() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stalled
}

// noFailFile sets rapid's -rapid.nofailfile for the rest of the run, and
// t's cleanup (keepFailFiles) puts it back. A stall ends the search, and
// every later check of the run, rapid's reproduction and shrink included,
// fails at once with no draw: the last of them is what rapid would save
// as the fail file, which replays nothing (rapid finds it invalid and
// searches anew from another seed, stalling at another step or not at
// all). rapid records no draws of a search check (its fail file holds a
// shrunk reproduction's), and reproducing a stall costs StallAfter, so
// there are no draws to save; without a fail file rapid's failure names
// -rapid.seed, which replays the stalled check. rapid reads the flag once
// its check has failed: a rapid.Check of another test of the process
// failing before the cleanup keeps no fail file either (it still names
// its seed).
func (r *runState) noFailFile() {
	f := flag.Lookup("rapid.nofailfile")
	if f == nil {
		return
	}
	rapidFlagsMu.Lock()
	defer rapidFlagsMu.Unlock()
	old := f.Value.String()
	if old == "true" || f.Value.Set("true") != nil {
		return
	}
	r.mu.Lock()
	r.undoNoFailFile = func() { _ = f.Value.Set(old) }
	r.mu.Unlock()
}

// keepFailFiles puts back the -rapid.nofailfile a stall set (noFailFile).
func (r *runState) keepFailFiles() {
	r.mu.Lock()
	undo := r.undoNoFailFile
	r.undoNoFailFile = nil
	r.mu.Unlock()
	if undo != nil {
		rapidFlagsMu.Lock()
		undo()
		rapidFlagsMu.Unlock()
	}
}
