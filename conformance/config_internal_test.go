package conformance

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/conformance/internal/machine"
	"github.com/idemcheck/idemcheck/conformance/internal/run"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// Every field of Config reaches the run's settings and comes back from
// them (FromEnv's way): a field added to one side and not the other would
// be silently ignored. Each field is set to a value that is not its zero.
func TestConfigSettingsCarryEveryField(t *testing.T) {
	p, err := remote.New(remote.Config{BaseURL: "http://127.0.0.1:1"})
	require.NoError(t, err)
	var c Config
	v := reflect.ValueOf(&c).Elem()
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		switch f.Kind() {
		case reflect.String:
			f.SetString("x-" + name)
		case reflect.Int:
			f.SetInt(int64(i + 2))
		case reflect.Int64: // time.Duration
			f.SetInt(int64(time.Duration(i+2) * time.Second))
		case reflect.Float64:
			f.SetFloat(1.0 / float64(i+2))
		case reflect.Bool:
			if !f.CanSet() {
				c.parallelAuto, c.concurrencyAuto = true, true
				continue
			}
			f.SetBool(true)
		case reflect.Slice:
			f.Set(reflect.ValueOf(Baseline{"x-" + name}))
		case reflect.Struct:
			f.Set(reflect.ValueOf(Shard{Index: 1, Count: 3}))
		case reflect.Pointer:
			f.Set(reflect.ValueOf(p))
		case reflect.Func:
			continue // callbacks: checked below
		default:
			t.Fatalf("Config.%s is a %s: teach this test its value", name, f.Kind())
		}
	}
	var sequenced bool
	c.OnStart = func(*Stats) {} // reaches the run through Config.run (TestOnStartGetsTheStatsRunReturns)
	c.OnSequence = func() { sequenced = true }
	var shrunk string
	c.OnShrink = func(inv string, steps int) { shrunk = fmt.Sprintf("%s %d", inv, steps) }

	rc := c.settings()
	back := fromRun(rc)
	want := c
	want.OnStart, want.OnSequence, want.OnShrink = nil, nil, nil // funcs do not compare; FromEnv's have none
	assert.Equal(t, want, back, "a field was lost on its way to the run's settings or back")
	rc.OnSequence()
	assert.True(t, sequenced, "OnSequence reaches the run")
	rc.OnShrink("replay-consistent", 3)
	assert.Equal(t, "replay-consistent 3", shrunk, "OnShrink reaches the run")
}

// The public constants are the values the packages beneath read: go doc
// shows a literal, so each is spelled out here and held to its source.
func TestPublicConstantsAreTheRunsOwn(t *testing.T) {
	for _, c := range []struct{ public, own any }{
		{ProviderEmbedded, machine.ProviderEmbedded}, {ProviderWireMock, machine.ProviderWireMock},
		{StoreMemory, machine.StoreMemory}, {StorePostgres, machine.StorePostgres}, {StoreRedis, machine.StoreRedis},
		{DefaultReportDir, run.DefaultReportDir}, {DefaultMaxOrders, machine.DefaultMaxOrders},
		{DefaultMaxSchedule, machine.DefaultMaxSchedule}, {DefaultMaxDeviations, run.DefaultMaxDeviations},
		{DefaultConcurrency, run.DefaultConcurrency}, {MaxConcurrency, run.MaxConcurrency},
		{DefaultProcessing, machine.DefaultProcessing}, {DefaultRetention, machine.DefaultRetention},
		{DefaultTimeScale, machine.DefaultTimeScale}, {DefaultRemoteTimeScale, machine.DefaultRemoteTimeScale},
		{ClientAPI, machine.ClientAPI},
		{OneKeyPerIntent, check.OneKeyPerIntent}, {AtMostOneChargePerOrder, check.AtMostOneChargePerOrder},
		{ConflictNeverFinal, check.ConflictNeverFinal}, {NoUnsafeRetry, check.NoUnsafeRetry},
		{KeyFormat, check.KeyFormat}, {ReplayConsistent, check.ReplayConsistent},
		{MismatchRejected, check.MismatchRejected}, {BooksBalance, check.BooksBalance},
		{ReconciliationConverges, check.ReconciliationConverges}, {EquivalentRequestsAgree, check.EquivalentRequestsAgree},
		{KeyScopedPerAccount, check.KeyScopedPerAccount}, {AtMostOneRefundPerIntent, check.AtMostOneRefundPerIntent},
		{KeyScopedPerEndpoint, check.KeyScopedPerEndpoint}, {NoStaleKey, check.NoStaleKey},
	} {
		assert.Equal(t, c.own, c.public)
	}
	var names []string
	for _, inv := range append(check.Safety(), check.Liveness()...) {
		names = append(names, inv.Name)
	}
	assert.ElementsMatch(t, names, []string{OneKeyPerIntent, AtMostOneChargePerOrder, ConflictNeverFinal, NoUnsafeRetry,
		KeyFormat, ReplayConsistent, MismatchRejected, BooksBalance, ReconciliationConverges, EquivalentRequestsAgree,
		KeyScopedPerAccount, AtMostOneRefundPerIntent, KeyScopedPerEndpoint, NoStaleKey}, "every invariant has its public name")
}
