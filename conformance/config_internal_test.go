package conformance

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
				c.parallelAuto = true
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
	var started, sequenced bool
	c.OnStart = func(*Stats) { started = true }
	c.OnSequence = func() { sequenced = true }

	rc := c.settings()
	back := fromRun(rc)
	want := c
	want.OnStart, want.OnSequence = nil, nil // funcs do not compare; FromEnv's have none
	assert.Equal(t, want, back, "a field was lost on its way to the run's settings or back")
	rc.OnStart(nil)
	rc.OnSequence()
	assert.True(t, started && sequenced, "the callbacks reach the run")
}
