package main_test

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCertifyInterrupted: SIGINT in the middle of a certification stops
// it as if its duration budget ran out: the page is still written, its
// path printed, and the run exits 3 (INCONCLUSIVE), not killed.
func TestCertifyInterrupted(t *testing.T) {
	url := serve(t)
	cmd := exec.Command(bin, "certify", url, "--profile", profile, "--checks", "1000", "--report-dir", t.TempDir())
	cmd.Env = append(os.Environ(), "IDEMCHECK_API_KEY=", "IDEMCHECK_API_KEY_2=", "IDEMCHECK_TIME_SCALE=0.0667", "IDEMCHECK_MAX_REQUESTS=100000", "IDEMCHECK_MAX_CHARGES=50000")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 64)
	go func() {
		s := bufio.NewScanner(stderr)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	var log []string
	timeout := time.After(2 * time.Minute)
	signalled := false
	for !signalled {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("idemcheck ended before its first sequences:\n%s", strings.Join(log, "\n"))
			}
			log = append(log, l)
			if strings.Contains(l, "sequences run; ") { // the property is under way
				if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
				signalled = true
			}
		case <-timeout:
			_ = cmd.Process.Kill()
			t.Fatalf("no sequence count within 2 minutes:\n%s", strings.Join(log, "\n"))
		}
	}
	for l := range lines {
		log = append(log, l)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("after SIGINT: %v, want exit 3; stderr:\n%s", err, strings.Join(log, "\n"))
	}
	page := strings.TrimSpace(stdout.String())
	if _, err := os.Stat(page); err != nil {
		t.Fatalf("no certification page after SIGINT (stdout %q): %v", stdout.String(), err)
	}
	if !strings.Contains(strings.Join(log, "\n"), "requests and") {
		t.Errorf("the sequence count does not say the requests and charges left:\n%s", strings.Join(log, "\n"))
	}
}
