package conformance_test

import (
	"os"
	"testing"

	"github.com/idemcheck/idemcheck/conformance"
)

// TestMain stops the WireMock server a run with IDEMCHECK_PROVIDER=wiremock
// started (and the one the WireMock tests share), so nothing is left
// running when the tests end, and removes the refprovider binary the
// curl-script tests built.
func TestMain(m *testing.M) {
	watchPeak()
	code := m.Run()
	writePeak() // a child run's own peak memory, when asked (shrink_memory_test.go)
	conformance.StopWireMock()
	sharedWireMock.Stop()
	removeRefprovider()
	os.Exit(code)
}
