package pgstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/sut/client"
	"github.com/idemcheck/idemcheck/sut/client/pgstore"
	"github.com/idemcheck/idemcheck/sut/client/storetest"
)

// open opens a store in a fresh schema, dropped when t ends. An unreachable
// database fails the test with the message naming IDEMCHECK_POSTGRES_URL.
func open(t *testing.T) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), pgstore.URLFromEnv(), pgstore.NewSchemaName("t"))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Drop(context.Background())) })
	return s
}

func TestStore_keeps_the_attempt_store_contract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) client.AttemptStore { return open(t) })
}

func TestStore_a_crash_at_every_point_keeps_one_key_and_one_charge(t *testing.T) {
	storetest.RunCrashPoints(t, func(t *testing.T) client.AttemptStore { return open(t) })
}
