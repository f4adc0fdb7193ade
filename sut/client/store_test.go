package client_test

import (
	"testing"

	"github.com/idemcheck/idemcheck/sut/client"
	"github.com/idemcheck/idemcheck/sut/client/storetest"
)

func TestStore_keeps_the_attempt_store_contract(t *testing.T) {
	storetest.Run(t, func(*testing.T) client.AttemptStore { return client.NewStore() })
}

func TestStore_a_crash_at_every_point_keeps_one_key_and_one_charge(t *testing.T) {
	storetest.RunCrashPoints(t, func(*testing.T) client.AttemptStore { return client.NewStore() })
}
