package pgstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/sut/client/pgstore"
)

// BenchmarkOpenDrop is a schema's whole life: create, migrate, drop.
func BenchmarkOpenDrop(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		s, err := pgstore.Open(ctx, pgstore.URLFromEnv(), pgstore.NewSchemaName("bench"))
		require.NoError(b, err)
		require.NoError(b, s.Drop(ctx))
	}
}

// BenchmarkConnectReset is what a conformance sequence pays to start: a
// Store over the run's schema, emptied.
func BenchmarkConnectReset(b *testing.B) {
	ctx := context.Background()
	run := open(b)
	for b.Loop() {
		s, err := pgstore.Connect(ctx, pgstore.URLFromEnv(), run.Schema())
		require.NoError(b, err)
		require.NoError(b, s.Reset(ctx))
		s.Close()
	}
}

// BenchmarkOpenOrder is one fenced write transaction.
func BenchmarkOpenOrder(b *testing.B) {
	ctx := context.Background()
	s := open(b)
	e, err := s.Open(ctx, "")
	require.NoError(b, err)
	for b.Loop() {
		_, err := s.OpenOrder(ctx, e, 100, "TRY")
		require.NoError(b, err)
	}
}

// BenchmarkSnapshot is the read the invariants make after every step.
func BenchmarkSnapshot(b *testing.B) {
	ctx := context.Background()
	s := open(b)
	e, err := s.Open(ctx, "")
	require.NoError(b, err)
	_, err = s.OpenOrder(ctx, e, 100, "TRY")
	require.NoError(b, err)
	for b.Loop() {
		_, _, err := s.Snapshot(ctx)
		require.NoError(b, err)
	}
}
