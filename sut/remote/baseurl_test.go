package remote_test

import (
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/sut/remote"
)

// A base URL with a query or a fragment is refused before any request:
// the paths are appended to it as text, so "http://h/?token=T" sent every
// request to "/" with "token=T/v1/charges" as its query, and the query
// (a token, say) went into every report's exchanges. Regression (outside
// tester).
func TestValidateRefusesABaseURLWithAQuery(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:1/?token=sk_test_x", "http://127.0.0.1:1?a=b", "http://127.0.0.1:1/#frag", "http://127.0.0.1:1/?"} {
		_, err := remote.Config{BaseURL: u}.Validate()
		if err == nil || !strings.Contains(err.Error(), "query or fragment") {
			t.Errorf("Validate(%q) = %v, want the query or fragment refused", u, err)
		}
	}
	if _, err := (remote.Config{BaseURL: "http://127.0.0.1:1/api"}).Validate(); err != nil {
		t.Errorf("Validate(a base URL with a path) = %v", err)
	}
}
