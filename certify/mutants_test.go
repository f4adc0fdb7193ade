package certify_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// Each provider mutant of sut/mutants, served by refprovider's handler on
// loopback, fails the requirement it breaks, with the exchanges that show
// it. Two are slow by nature and run only their requirement: stuck-inflight
// needs processing longer than provider.StuckAfter (1 s) on every request,
// and short-retention (keys forgotten after 1 min while the profile
// publishes 70 s) needs a wait of 65 s.
func TestCertify_ProviderMutantsFailTheirRequirement(t *testing.T) {
	cases := []struct {
		mutant     string
		want       string
		processing time.Duration
		window     time.Duration // the profile's published window; 0: 24h
		only       []string
	}{
		{mutant: "no-inflight-lock", want: certify.ReqConcurrent, processing: 200 * time.Millisecond},
		{mutant: "replay-new-charge", want: certify.ReqReplay},
		{mutant: "conflict-after-completion", want: certify.ReqReplay},
		{mutant: "no-fingerprint", want: certify.ReqMismatch},
		{mutant: "errors-not-stored", want: certify.ReqReplay},
		{mutant: "quoted-key-distinct", want: certify.ReqQuotedKey},
		{mutant: "replay-drops-location", want: certify.ReqReplay},
		{mutant: "decline-not-stored-then-charge", want: certify.ReqDeclinedKey},
		{mutant: "declined-key-recharges", want: certify.ReqDeclinedKey},
		{mutant: "inflight-mismatch-charges", want: certify.ReqInflightMismatch, processing: 200 * time.Millisecond},
		{mutant: "errors-not-problem-details", want: certify.ReqProblemDetails},
		{mutant: "free-key-on-hangup", want: certify.ReqHangUp, processing: 500 * time.Millisecond, only: []string{certify.ReqHangUp}},
		{mutant: "stuck-inflight", want: certify.ReqRetries, processing: 1200 * time.Millisecond, only: []string{certify.ReqRetries}},
		{mutant: "short-retention", want: certify.ReqRetention, window: 70 * time.Second, only: []string{certify.ReqRetention}},
	}
	for _, c := range cases {
		t.Run(c.mutant, func(t *testing.T) {
			t.Parallel()
			url := startRef(t, c.mutant, 0, c.processing)
			prof := remote.ReferenceProfile()
			if c.window > 0 {
				prof.RetentionWindow = remote.Duration(c.window)
			}
			cert := certifyURL(t, url, prof, certify.Options{Only: c.only})
			v := verdicts(t, cert)
			require.Equal(t, reports.Fail, v[c.want], "requirement %s", c.want)
			for _, r := range cert.Requirements {
				if r.ID == c.want {
					assert.NotEmpty(t, r.Reason)
					assert.NotEmpty(t, r.Evidence, "a FAIL carries its exchanges")
				}
			}
		})
	}
}
