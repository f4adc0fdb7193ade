package remote_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/sut/remote"
)

func TestAPIKey_NeverPrints(t *testing.T) {
	k := remote.APIKey("sk_test_SECRETvalue")
	for _, s := range []string{k.String(), k.GoString(), fmt.Sprint(k), fmt.Sprintf("%s %v %+v %#v %q %x %X %d", k, k, k, k, k, k, k, k), fmt.Sprintf("%+v", remote.Config{APIKey: k})} {
		assert.NotContains(t, s, "SECRET")
	}
	b, err := json.Marshal(struct{ K remote.APIKey }{k})
	require.NoError(t, err)
	assert.JSONEq(t, `{"K":"[redacted]"}`, string(b))
	assert.Equal(t, "sk_test_SECRETvalue", k.Reveal())
}

func TestAPIKey_LooksLive(t *testing.T) {
	// Regression (issue 11): the check was a case-sensitive substring test
	// of sk_live_ and rk_live_, so SK_LIVE_… and pk_live_… passed.
	for k, live := range map[remote.APIKey]bool{"sk_live_x": true, " rk_live_x": true, "Bearer sk_live_x": true, "sk_test_x": false, "": false,
		"pk_live_x": true, "SK_LIVE_x": true, "Rk_Live_x": true, "rzp_live_x": true, "live_x": true, "LIVE_x": true, "test_live_x": false, "pk_test_x": false, "rzp_test_x": false} {
		assert.Equal(t, live, k.LooksLive(), "%q", string(k))
	}
}

// The shipped profiles say what the built-in ones say.
func TestShippedProfiles(t *testing.T) {
	for path, want := range map[string]remote.Profile{
		"../../profiles/reference.json":   remote.ReferenceProfile(),
		"../../profiles/stripe-mock.json": remote.StripeMockProfile(),
	} {
		p, err := remote.LoadProfile(path)
		require.NoError(t, err, path)
		assert.Equal(t, want, p, path)
	}
}

func TestParseProfile_RefusesUnknownFieldsAndBadValues(t *testing.T) {
	for _, s := range []string{`{"name":"x","retention":"1h"}`, `{"dialect":"soap"}`, `{"environment":"prod"}`, `{"retention_window":"a day"}`} {
		_, err := remote.ParseProfile([]byte(s))
		assert.Error(t, err, s)
	}
}

func TestValidate_SafetyRails(t *testing.T) {
	_, err := remote.Config{BaseURL: "http://payments.example.com", APIKey: "sk_test_x"}.Validate()
	assert.ErrorIs(t, err, remote.ErrInsecure)
	_, err = remote.Config{BaseURL: "http://127.0.0.1:1", APIKey: "sk_test_x"}.Validate()
	assert.NoError(t, err)
	_, err = remote.Config{BaseURL: "https://x.example", APIKey: "rk_live_x"}.Validate()
	assert.ErrorIs(t, err, remote.ErrLiveCredential)
	_, err = remote.Config{BaseURL: "https://x.example", Dialect: "stripe", Profile: remote.ReferenceProfile()}.Validate()
	assert.Error(t, err, "dialect differs from the profile's")
	c, err := remote.Config{BaseURL: "https://x.example", Dialect: "stripe"}.Validate()
	require.NoError(t, err)
	assert.Equal(t, remote.DraftProfile("stripe"), c.Profile, "without a profile: the draft alone")
	assert.Equal(t, remote.DefaultMaxRequests, c.Limits.MaxRequests)
}

func TestFromEnv(t *testing.T) {
	t.Setenv("IDEMCHECK_PROVIDER", "embedded")
	t.Setenv("IDEMCHECK_MAX_REQUESTS", "7")
	t.Setenv("IDEMCHECK_MAX_DURATION", "90s")
	t.Setenv("IDEMCHECK_API_KEY", "sk_test_abc")
	c, err := remote.FromEnv()
	require.NoError(t, err)
	assert.Empty(t, c.BaseURL, "embedded is not a URL")
	assert.Equal(t, 7, c.Limits.MaxRequests)
	assert.Equal(t, "1m30s", c.Limits.MaxDuration.String())
	t.Setenv("IDEMCHECK_MAX_CHARGES", "-1")
	_, err = remote.FromEnv()
	assert.ErrorContains(t, err, "IDEMCHECK_MAX_CHARGES")
}

func TestMeter_NeverExceedsItsLimits(t *testing.T) {
	m := remote.NewMeter(remote.Limits{MaxRequests: 3, MaxCharges: 2})
	assert.NoError(t, m.Take("POST"))
	assert.NoError(t, m.Take("POST"))
	assert.ErrorIs(t, m.Take("POST"), remote.ErrBudget)
	assert.NoError(t, m.Take("GET"))
	assert.ErrorIs(t, m.Take("GET"), remote.ErrBudget)
	r, p := m.Used()
	assert.Equal(t, [2]int{3, 2}, [2]int{r, p})
}

// TestValidate_RefusesTheSameKeyTwice: a second API key equal to the first
// is one account, not two; the cross-account requirement then FAILed a
// correct provider (exit 1). It is refused before any request.
func TestValidate_RefusesTheSameKeyTwice(t *testing.T) {
	_, err := remote.Config{BaseURL: "http://127.0.0.1:1", APIKey: "sk_test_a", SecondAPIKey: "sk_test_a"}.Validate()
	require.ErrorIs(t, err, remote.ErrInvalidKey)
	_, err = remote.Config{BaseURL: "http://127.0.0.1:1", APIKey: "sk_test_a", SecondAPIKey: "sk_test_b"}.Validate()
	require.NoError(t, err)
}

// TestParseProfile_RefusesAZeroRetentionWindow: "0s" is refused, naming
// the field, not read as the field left out (24 h). Regression (issue 11,
// breaker): it silently became 24 h.
func TestParseProfile_RefusesAZeroRetentionWindow(t *testing.T) {
	_, err := remote.ParseProfile([]byte(`{"retention_window":"0s"}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "retention_window")
	assert.Contains(t, err.Error(), "zero duration is refused")
	p, err := remote.ParseProfile([]byte(`{"name":"x"}`))
	require.NoError(t, err)
	assert.Equal(t, remote.DefaultRetentionWindow, time.Duration(p.RetentionWindow), "left out: the default")
}

// TestParseProfile_RefusesASubSecondRetentionWindow: a window below
// remote.MinRetentionWindow (1 s) is refused, naming the field and the
// minimum; 1 s itself is read. Regression (outside tester): "1ns" was
// accepted.
func TestParseProfile_RefusesASubSecondRetentionWindow(t *testing.T) {
	for _, s := range []string{"1ns", "999ms"} {
		_, err := remote.ParseProfile([]byte(`{"retention_window":"` + s + `"}`))
		require.Error(t, err, s)
		assert.Contains(t, err.Error(), "retention_window")
		assert.Contains(t, err.Error(), "minimum of 1s")
	}
	p, err := remote.ParseProfile([]byte(`{"retention_window":"1s"}`))
	require.NoError(t, err)
	assert.Equal(t, remote.MinRetentionWindow, time.Duration(p.RetentionWindow))
}
