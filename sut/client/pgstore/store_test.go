package pgstore_test

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/sut/client"
	"github.com/idemcheck/idemcheck/sut/client/pgstore"
	"github.com/idemcheck/idemcheck/sut/client/storetest"
)

// open opens a store in a fresh schema, dropped when t ends. An unreachable
// database fails the test with the message naming IDEMCHECK_POSTGRES_URL.
func open(t testing.TB) *pgstore.Store {
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

func TestReset_empties_the_store_and_restarts_the_order_ids(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	e, err := s.Open(ctx, "")
	require.NoError(t, err)
	_, err = s.OpenOrder(ctx, e, 100, "TRY")
	require.NoError(t, err)
	require.NoError(t, s.Reset(ctx))

	other, err := pgstore.Connect(ctx, pgstore.URLFromEnv(), s.Schema())
	require.NoError(t, err)
	defer other.Close()
	orders, atts, err := other.Snapshot(ctx)
	require.NoError(t, err)
	require.Empty(t, orders)
	require.Empty(t, atts)
	_, err = other.OpenOrder(ctx, e, 100, "TRY")
	require.ErrorIs(t, err, client.ErrFenced, "the epochs went with the reset")
	e, err = other.Open(ctx, "")
	require.NoError(t, err)
	require.Equal(t, uint64(1), e.N)
	o, err := other.OpenOrder(ctx, e, 100, "TRY")
	require.NoError(t, err)
	require.Equal(t, int64(1), o.ID)
}

func TestOpen_names_the_variable_when_the_database_does_not_answer(t *testing.T) {
	// A port nothing listens on: a loopback listener's, closed at once.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	_, err = pgstore.Open(context.Background(), "postgres://postgres@"+addr+"/test?connect_timeout=5", pgstore.NewSchemaName("t"))
	require.Error(t, err)
	require.Contains(t, err.Error(), "IDEMCHECK_POSTGRES_URL")
	require.Contains(t, err.Error(), "does not answer")
}
