package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/idemcheck/idemcheck/reports"
)

// Hooks are the commands a provider team already has for its sandbox's
// lifecycle (docs/providers.md, "Lifecycle hooks": docker compose,
// systemd, toxiproxy, a plain process). Each is one command line, split
// into an argv (SplitCommand) and run without a shell: nothing the
// provider sent is ever put into it. "" means no such hook: the
// requirements that need it are NOT JUDGED.
type Hooks struct {
	// Restart stops and starts the provider (keys kept as the profile's
	// lifecycle.restart_keeps says). --hook-restart, IDEMCHECK_HOOK_RESTART,
	// else the profile's lifecycle.hooks.restart.
	Restart string `json:"restart,omitempty"`
	// StoreDown makes the provider's idempotency store unreachable (stop
	// or pause Redis, cut a toxiproxy); StoreUp brings it back with what
	// it held. --hook-store-down / --hook-store-up,
	// IDEMCHECK_HOOK_STORE_DOWN / IDEMCHECK_HOOK_STORE_UP, else the
	// profile's lifecycle.hooks.store_down / store_up.
	StoreDown string `json:"store_down,omitempty"`
	StoreUp   string `json:"store_up,omitempty"`
	// Timeout bounds each hook's run; at its end the hook's process group
	// is killed (SIGKILL) and the requirement that needed it is
	// INCONCLUSIVE; default DefaultHookTimeout (60s), at least
	// MinHookTimeout (100 ms).
	// IDEMCHECK_HOOK_TIMEOUT, else the profile's lifecycle.hooks.timeout.
	Timeout Span `json:"timeout,omitempty"`
}

// DefaultHookTimeout bounds a hook's run when Hooks.Timeout is unset: 60 s,
// room for docker compose restart or systemctl restart.
const DefaultHookTimeout = 60 * time.Second

// maxHookOutput caps what a hook's stdout and stderr keep, bytes each: a
// chatty hook costs no more memory than this.
const maxHookOutput = 64 << 10

// Any reports whether any hook is set.
func (h Hooks) Any() bool { return h.Restart != "" || h.StoreDown != "" || h.StoreUp != "" }

// Over is h with o's set fields over it.
func (h Hooks) Over(o Hooks) Hooks {
	for _, f := range []struct{ dst, src *string }{{&h.Restart, &o.Restart}, {&h.StoreDown, &o.StoreDown}, {&h.StoreUp, &o.StoreUp}} {
		if *f.src != "" {
			*f.dst = *f.src
		}
	}
	if o.Timeout > 0 {
		h.Timeout = o.Timeout
	}
	return h
}

// MinHookTimeout is the shortest Hooks.Timeout accepted: 100 ms; no hook
// command starts and ends in less.
const MinHookTimeout = 100 * time.Millisecond

// check refuses a hook that is not a command line SplitCommand can read,
// and a timeout below MinHookTimeout.
func (h Hooks) check() error {
	if h.Timeout > 0 && time.Duration(h.Timeout) < MinHookTimeout {
		return fmt.Errorf("hook timeout %s is below %s: no hook runs that fast", time.Duration(h.Timeout), MinHookTimeout)
	}
	for _, c := range []struct{ name, cmd string }{{"restart", h.Restart}, {"store_down", h.StoreDown}, {"store_up", h.StoreUp}} {
		if c.cmd == "" {
			continue
		}
		if _, err := SplitCommand(c.cmd); err != nil {
			return fmt.Errorf("hook %s: %w", c.name, err)
		}
	}
	return nil
}

// hooksFromEnv reads IDEMCHECK_HOOK_RESTART, IDEMCHECK_HOOK_STORE_DOWN,
// IDEMCHECK_HOOK_STORE_UP and IDEMCHECK_HOOK_TIMEOUT.
func hooksFromEnv() (Hooks, error) {
	h := Hooks{Restart: os.Getenv("IDEMCHECK_HOOK_RESTART"), StoreDown: os.Getenv("IDEMCHECK_HOOK_STORE_DOWN"), StoreUp: os.Getenv("IDEMCHECK_HOOK_STORE_UP")}
	if v := os.Getenv("IDEMCHECK_HOOK_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return h, fmt.Errorf("remote: IDEMCHECK_HOOK_TIMEOUT=%q is not a positive Go duration", v)
		}
		h.Timeout = Span(d)
	}
	return h, h.check()
}

// SplitCommand splits a hook's command line into an argv, as a POSIX
// shell splits words but with no expansion at all: blanks separate
// words; 'single quotes' keep everything; "double quotes" keep everything
// but \" and \\; a backslash outside quotes keeps the next byte. No $,
// glob, pipe or redirection has a meaning: a hook that wants a shell says
// so ("sh -c '…'"). An empty line or an unclosed quote is an error.
func SplitCommand(line string) ([]string, error) {
	var argv []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				argv, inWord = append(argv, cur.String()), false
				cur.Reset()
			}
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unclosed single quote")
			}
			cur.WriteString(line[i+1 : i+1+j])
			i, inWord = i+1+j, true
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && (line[i+1] == '"' || line[i+1] == '\\') {
					i++
				}
				cur.WriteByte(line[i])
			}
			if i >= len(line) {
				return nil, errors.New("unclosed double quote")
			}
			inWord = true
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		argv = append(argv, cur.String())
	}
	if len(argv) == 0 {
		return nil, errors.New("empty command")
	}
	return argv, nil
}

// HookRun is one run of a hook, as the run folder keeps it
// (reports.HookRun is its written form).
type HookRun = reports.HookRun

// RunHook runs the hook named name (restart, store_down, store_up) with
// command line cmd, in a process group of its own, for at most timeout
// (DefaultHookTimeout when 0). When it exits, at the timeout, or when ctx
// ends, the whole group is killed (SIGKILL), so nothing it started in its
// group is left running; a process the hook means to keep (a restarted
// provider) must detach (setsid, a daemon) and is its own business.
// Its stdout and stderr are kept (at most 64 KiB each) and scrubbed of the
// run's API keys (reports.Scrub). The error says why the hook failed: it
// could not start, it exited non-zero, or it timed out; the run is
// returned either way.
func RunHook(ctx context.Context, name, cmd string, timeout time.Duration) (HookRun, error) {
	if timeout <= 0 {
		timeout = DefaultHookTimeout
	}
	run := HookRun{Name: name, Started: time.Now().UTC(), ExitCode: -1}
	argv, err := SplitCommand(cmd)
	if err != nil {
		run.Error = err.Error()
		return run, fmt.Errorf("hook %s: %w", name, err)
	}
	run.Argv = scrubAll(argv)
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := exec.CommandContext(hctx, argv[0], argv[1:]...)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) } // the group: the hook and what it started
	var out, errOut capped
	c.Stdout, c.Stderr = &out, &errOut
	c.WaitDelay = time.Second // a child that keeps the output pipes open does not hold the run
	began := time.Now()
	if err := c.Start(); err != nil {
		run.Error = err.Error()
		return run, fmt.Errorf("hook %s: could not start %q: %w", name, argv[0], err)
	}
	werr := c.Wait()
	// What the hook left in its group once it exited (a child sent to the
	// background without setsid) is killed too, however the hook ended:
	// nothing of its group outlives it (docs/providers.md).
	if err := syscall.Kill(-c.Process.Pid, syscall.SIGKILL); err == nil {
		waitGroupGone(c.Process.Pid)
	}
	timedOut := errors.Is(hctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	run.Seconds = time.Since(began).Seconds()
	run.Stdout, run.Stderr = out.scrubbed(), errOut.scrubbed()
	if c.ProcessState != nil {
		run.ExitCode = c.ProcessState.ExitCode()
	}
	switch {
	case timedOut:
		run.Error = fmt.Sprintf("timed out after %s; its process group was killed", timeout)
	case ctx.Err() != nil:
		run.Error = "the run ended while it ran; its process group was killed"
	case werr != nil && !errors.Is(werr, exec.ErrWaitDelay):
		run.Error = "failed: " + werr.Error()
	}
	if run.Error != "" {
		return run, fmt.Errorf("hook %s (%s) %s", name, strings.Join(run.Argv, " "), run.Error)
	}
	return run, nil
}

// waitGroupGone waits, at most 2 s, until no process of group pgid is
// still running (gone, or a zombie its parent has not reaped): SIGKILL
// is delivered asynchronously, and the hook's children are not its
// leader, whom Wait saw exit. Without /proc it waits for the group to
// vanish from kill(2)'s sight alone.
func waitGroupGone(pgid int) {
	for i := 0; i < 100 && groupRunning(pgid); i++ {
		time.Sleep(20 * time.Millisecond) // no event says a signalled process finished dying
	}
}

// groupRunning reports whether a process of group pgid is running.
func groupRunning(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // not a process, or gone
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state, ppid, pgrp, …
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
}

func scrubAll(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = string(reports.Scrub([]byte(a)))
	}
	return out
}

// capped is an io.Writer that keeps the first maxHookOutput bytes and
// drops the rest (counting them); safe for concurrent use.
type capped struct {
	mu      sync.Mutex // guards b, dropped
	b       bytes.Buffer
	dropped int
}

func (w *capped) Write(p []byte) (int, error) {
	n := len(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	room := maxHookOutput - w.b.Len()
	if room < len(p) {
		w.dropped += len(p) - max(room, 0)
		p = p[:max(room, 0)]
	}
	w.b.Write(p)
	return n, nil
}

// scrubbed is what was kept, scrubbed of the run's API keys, with a note
// of what was dropped. When the output was cut, a key's prefix at the cut
// is dropped too (reports.ScrubCut): the cut may fall inside a key.
func (w *capped) scrubbed() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dropped == 0 {
		return string(reports.Scrub(w.b.Bytes()))
	}
	b, cut := reports.ScrubCut(w.b.Bytes())
	return string(fmt.Appendf(b, "\n[%d more bytes not kept]\n", w.dropped+cut))
}
