package remote_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/sut/remote"
)

// TestMeterStop: after Stop (idemcheck's SIGINT) the meter refuses every
// request as the duration budget, with plenty of every budget left.
func TestMeterStop(t *testing.T) {
	m := remote.NewMeter(remote.Limits{MaxRequests: 10, MaxCharges: 10, MaxDuration: time.Hour})
	if err := m.Take(http.MethodPost); err != nil {
		t.Fatal(err)
	}
	m.Stop()
	var be *remote.BudgetError
	if err := m.Take(http.MethodGet); !errors.As(err, &be) || be.Resource != "duration" {
		t.Errorf("Take after Stop = %v, want the duration budget spent", err)
	}
	if ok, why := m.Afford(1, 0); ok || why != "duration" {
		t.Errorf("Afford after Stop = %v %q, want false \"duration\"", ok, why)
	}
	if req, posts := m.Used(); req != 1 || posts != 1 {
		t.Errorf("Used = %d, %d: a refused request was counted", req, posts)
	}
}
