package remote_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/sut/remote"
)

// TestValidateNamesWhereTheKeyCameFrom: a refused key is named by where
// it came from (idemcheck certify --api-key-env OTHER: OTHER), and a
// second key equal to the first is refused for what it is, not as "a
// character not allowed in a header value". Regression (issue 22, item
// 10).
func TestValidateNamesWhereTheKeyCameFrom(t *testing.T) {
	_, err := remote.Config{BaseURL: "http://127.0.0.1:1", APIKey: "sk_live_x", APIKeyFrom: "OTHER"}.Validate()
	if !errors.Is(err, remote.ErrLiveCredential) || !strings.Contains(err.Error(), "OTHER") || strings.Contains(err.Error(), "IDEMCHECK_API_KEY") {
		t.Errorf("live key from OTHER: %v, want a refusal naming OTHER only", err)
	}
	_, err = remote.Config{BaseURL: "http://127.0.0.1:1", APIKey: "a\nb", APIKeyFrom: "OTHER"}.Validate()
	if !errors.Is(err, remote.ErrInvalidKey) || !strings.Contains(err.Error(), "OTHER") {
		t.Errorf("key with LF from OTHER: %v, want ErrInvalidKey naming OTHER", err)
	}
	_, err = remote.Config{BaseURL: "http://127.0.0.1:1", APIKey: "sk_test_a", SecondAPIKey: "sk_test_a", APIKeyFrom: "OTHER"}.Validate()
	if !errors.Is(err, remote.ErrInvalidKey) || strings.Contains(err.Error(), "character") ||
		!strings.Contains(err.Error(), "same key") || !strings.Contains(err.Error(), "OTHER") || !strings.Contains(err.Error(), "IDEMCHECK_API_KEY_2") {
		t.Errorf("the same key twice: %v, want it said as such, naming OTHER and IDEMCHECK_API_KEY_2", err)
	}
}
