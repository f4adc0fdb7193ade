package reports_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/reports"
)

// A Redis store mutant's script says to serve it with --store redis. The
// server is the installed binary, never go run (killing go run leaves its
// compiled child serving: issue 13).
func TestCurlScriptServesARedisMutantOnRedis(t *testing.T) {
	f := fixture()
	f.Mutant, f.MutantSide = "redis-get-then-set", "provider"
	assert.Contains(t, string(reports.CurlScript(f)), "idemcheck serve --addr 127.0.0.1:0 --store redis --mutant redis-get-then-set")
	f.Mutant = "no-inflight-lock"
	assert.Contains(t, string(reports.CurlScript(f)), "idemcheck serve --addr 127.0.0.1:0 --mutant no-inflight-lock")
	f.MutantSide = "client"
	assert.NotContains(t, string(reports.CurlScript(f)), "go run")
}
