package remote_test

import (
	"errors"
	"testing"

	"github.com/idemcheck/idemcheck/sut/remote"
)

// TestLiveMarkerAfterAnySchemeInAnyCase: a live marker that only counts at
// the start of a key (live_) is found after an authorization scheme name
// in any letter case ("bearer live_…", "BEARER LIVE_…", "Token live_…"),
// and Validate refuses the key before any request. Regression (issue 22,
// item 8): "Bearer " was stripped case-sensitively, so "bearer live_…"
// went out in 49 requests.
func TestLiveMarkerAfterAnySchemeInAnyCase(t *testing.T) {
	for _, k := range []remote.APIKey{"bearer live_0123", "BEARER LIVE_0123", "Bearer live_0123", "bEaReR\tLive_0123",
		"Token live_0123", "Basic  LIVE_0123", " bearer   live_0123", "bearer sk_live_0123", "BEARER RZP_LIVE_0123"} {
		if !k.LooksLive() {
			t.Errorf("%q: LooksLive false, want true", string(k))
		}
		_, err := remote.Config{BaseURL: "http://127.0.0.1:1", APIKey: k}.Validate()
		if !errors.Is(err, remote.ErrLiveCredential) {
			t.Errorf("Validate(APIKey %q) = %v, want ErrLiveCredential", string(k), err)
		}
		_, err = remote.Config{BaseURL: "http://127.0.0.1:1", APIKey: "sk_test_a", SecondAPIKey: k}.Validate()
		if !errors.Is(err, remote.ErrLiveCredential) {
			t.Errorf("Validate(SecondAPIKey %q) = %v, want ErrLiveCredential", string(k), err)
		}
	}
	for _, k := range []remote.APIKey{"bearer sk_test_0123", "Bearer test_live_0123", "bearer", "sk_test_x live"} {
		if k.LooksLive() {
			t.Errorf("%q: LooksLive true, want false", string(k))
		}
	}
}
