package machine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/sut/remote"
)

// TestRemoteSequencesDrawDistinctKeys: two sequences of one remote run
// share the provider, so their keys and attempt ids (hence merchant
// references) must differ even when their clocks read the same
// millisecond. Regression (CI, 2026-11-30): every sequence of a run drew
// from one stream seeded by the run id, so keys differed only in their
// 48-bit timestamp; two sequences that made an attempt in the same
// millisecond shared a merchant reference, and books-balance failed with
// "the provider charged 12362 TRY, the intent was 154 TRY" — another
// sequence's charge.
func TestRemoteSequencesDrawDistinctKeys(t *testing.T) {
	p, err := remote.New(remote.Config{BaseURL: "http://127.0.0.1:9", RunID: "65d8e7120255"})
	require.NoError(t, err)
	cfg := Config{Provider: "http://127.0.0.1:9", Remote: p, TimeScale: 1}
	a, err := NewWorld(cfg, nil)
	require.NoError(t, err)
	b, err := NewWorld(cfg, nil)
	require.NoError(t, err)
	for i := 0; i < 3; i++ {
		ka, kb := a.keys.UUID(), b.keys.UUID()
		// Bytes 6.. are the random part; 0..5 are the millisecond.
		require.NotEqual(t, ka[6:], kb[6:], "draw %d: two sequences of one run drew the same random bits", i)
	}
}
