package wiremock_test

import (
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/sut/wiremock"
)

// Regression (review of issue 3): test processes sharing one WireMock
// through IDEMCHECK_WIREMOCK_URL reset and program it under each other.
// They now take turns: a second holder waits, and gives up after LockWait
// with an error naming the server; a child of the holder shares its turn.
func TestSharedServerTakesTurns(t *testing.T) {
	// The lock file goes to the test's own temporary folder, which is
	// removed after it (regression, fresh-clone walkthrough: every run
	// left one in /tmp).
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("IDEMCHECK_WIREMOCK_URL", "http://127.0.0.1:1/turns")
	defer func(d time.Duration) { wiremock.LockWait = d }(wiremock.LockWait)
	wiremock.LockWait = 300 * time.Millisecond

	var first, second, third, child wiremock.Shared
	if _, err := first.Get(); err != nil {
		t.Fatal(err)
	}
	if _, err := second.Get(); err == nil || !strings.Contains(err.Error(), "another test process holds") {
		t.Fatalf("a second holder got the server while the first had it: %v", err)
	}
	t.Setenv("IDEMCHECK_WIREMOCK_LOCKED", "1")
	if _, err := child.Get(); err != nil {
		t.Fatalf("a child of the holder must share its turn: %v", err)
	}
	t.Setenv("IDEMCHECK_WIREMOCK_LOCKED", "")
	first.Stop()
	if _, err := third.Get(); err != nil {
		t.Fatalf("after the first holder stopped, the next must get its turn: %v", err)
	}
	third.Stop()
}
