package models_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/idemcheck/idemcheck/models"
)

const retention = 24 * time.Hour

var (
	t0  = time.Date(2026, 10, 22, 12, 0, 0, 0, time.UTC)
	fp1 = models.Fingerprint(visa)
	fp2 = func() string { r := visa; r.Amount++; return models.Fingerprint(r) }()
)

// completed returns a spec in which key completed with status and digest.
func completed(t *testing.T, key string, status int, digest string, at time.Time) models.Spec {
	t.Helper()
	s, x := models.NewSpec(retention).Arrive(key, true, fp1, at)
	require.Equal(t, models.ExpectProcess, x.Kind)
	s = s.Complete(key, status, digest, at)
	require.Equal(t, models.KeyCompleted, s.Record(key, at).State)
	return s
}

func TestSpec_AbsentKeyIsProcessedAndMarkedInFlight(t *testing.T) {
	s, x := models.NewSpec(retention).Arrive("k", true, fp1, t0)
	assert.Equal(t, models.Expect{Kind: models.ExpectProcess}, x)
	assert.Equal(t, models.KeyRecord{State: models.KeyInFlight, Fingerprint: fp1, StartedAt: t0}, s.Record("k", t0))
	assert.Equal(t, models.KeyAbsent, s.Record("other", t0).State)
}

func TestSpec_InFlightKeyIsConflict(t *testing.T) {
	s, _ := models.NewSpec(retention).Arrive("k", true, fp1, t0)
	s2, x := s.Arrive("k", true, fp1, t0.Add(time.Second))
	assert.Equal(t, models.ExpectConflict, x.Kind)
	assert.Equal(t, s.Record("k", t0), s2.Record("k", t0), "a conflict changes nothing")
	assert.Equal(t, t0, s2.Record("k", t0).StartedAt)
}

func TestSpec_CompletedKeyReplaysStoredAnswer(t *testing.T) {
	for _, status := range []int{201, 402, 400, 422} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			s := completed(t, "k", status, "digest-1", t0)
			r := s.Record("k", t0)
			assert.Equal(t, status, r.Status)
			assert.Equal(t, "digest-1", r.Digest)
			assert.Equal(t, t0, r.CompletedAt)

			s2, x := s.Arrive("k", true, fp1, t0.Add(time.Minute))
			assert.Equal(t, models.Expect{Kind: models.ExpectReplay, Status: status, Digest: "digest-1"}, x)
			assert.Equal(t, r, s2.Record("k", t0.Add(time.Minute)), "a replay changes nothing")
		})
	}
}

func TestSpec_DifferentFingerprintIsMismatch(t *testing.T) {
	inFlight, _ := models.NewSpec(retention).Arrive("k", true, fp1, t0)
	_, x := inFlight.Arrive("k", true, fp2, t0)
	assert.Equal(t, models.ExpectMismatch, x.Kind, "while in flight")

	done := completed(t, "k", 201, "d", t0)
	s, x := done.Arrive("k", true, fp2, t0.Add(time.Hour))
	assert.Equal(t, models.ExpectMismatch, x.Kind, "once completed")
	assert.Equal(t, done.Record("k", t0), s.Record("k", t0))
}

func TestSpec_MissingKeyIs400AndChangesNothing(t *testing.T) {
	s0, _ := models.NewSpec(retention).Arrive("k", true, fp1, t0)
	s, x := s0.Arrive("", false, fp1, t0)
	assert.Equal(t, models.Expect{Kind: models.ExpectMissingKey}, x)
	assert.Equal(t, models.KeyInFlight, s.Record("k", t0).State)
	assert.Equal(t, models.KeyAbsent, s.Record("", t0).State)
	// hasKey decides, not the key's value.
	_, x = s0.Arrive("k", false, fp1, t0)
	assert.Equal(t, models.ExpectMissingKey, x.Kind)
}

func TestSpec_5xxCompletionReleasesTheKey(t *testing.T) {
	for _, status := range []int{500, 502, 503, 504} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			s, _ := models.NewSpec(retention).Arrive("k", true, fp1, t0)
			s = s.Complete("k", status, "d", t0.Add(time.Second))
			assert.Equal(t, models.KeyRecord{}, s.Record("k", t0.Add(time.Second)))
			_, x := s.Arrive("k", true, fp2, t0.Add(2*time.Second))
			assert.Equal(t, models.ExpectProcess, x.Kind, "a retry, even with another body, is processed afresh")
		})
	}
	s, _ := models.NewSpec(retention).Arrive("k", true, fp1, t0)
	s = s.Complete("k", 499, "d", t0)
	assert.Equal(t, models.KeyCompleted, s.Record("k", t0).State, "499 is stored")
}

func TestSpec_CompletingKeyNotInFlightChangesNothing(t *testing.T) {
	absent := models.NewSpec(retention)
	s := absent.Complete("k", 201, "d", t0)
	assert.Equal(t, models.KeyAbsent, s.Record("k", t0).State)

	done := completed(t, "k", 201, "first", t0)
	s = done.Complete("k", 402, "second", t0.Add(time.Second))
	assert.Equal(t, done.Record("k", t0.Add(time.Second)), s.Record("k", t0.Add(time.Second)))
	s = done.Complete("k", 500, "boom", t0.Add(time.Second))
	assert.Equal(t, models.KeyCompleted, s.Record("k", t0.Add(time.Second)).State, "a 5xx cannot release a completed key")
}

func TestSpec_RetentionWindow(t *testing.T) {
	s := completed(t, "k", 201, "d", t0)

	_, x := s.Arrive("k", true, fp1, t0.Add(retention))
	assert.Equal(t, models.ExpectReplay, x.Kind, "still remembered at exactly Retention")
	assert.Equal(t, models.KeyCompleted, s.Record("k", t0.Add(retention)).State)

	after := t0.Add(retention + time.Nanosecond)
	assert.Equal(t, models.KeyRecord{}, s.Record("k", after))
	s2, x := s.Arrive("k", true, fp1, after)
	assert.Equal(t, models.ExpectProcess, x.Kind, "forgotten at Retention+1ns")
	assert.Equal(t, models.KeyInFlight, s2.Record("k", after).State)
	_, x = s.Arrive("k", true, fp2, after)
	assert.Equal(t, models.ExpectProcess, x.Kind, "an expired key is no mismatch either")
}

func TestSpec_InFlightKeyNeverExpires(t *testing.T) {
	s, _ := models.NewSpec(retention).Arrive("k", true, fp1, t0)
	_, x := s.Arrive("k", true, fp1, t0.Add(10*retention))
	assert.Equal(t, models.ExpectConflict, x.Kind)
}

func TestSpec_ZeroValueIsUsable(t *testing.T) {
	var s models.Spec
	s, x := s.Arrive("k", true, fp1, t0)
	assert.Equal(t, models.ExpectProcess, x.Kind)
	s = s.Complete("k", 201, "d", t0)
	_, x = s.Arrive("k", true, fp1, t0)
	assert.Equal(t, models.ExpectReplay, x.Kind, "zero Retention: remembered at the instant it completed")
	_, x = s.Arrive("k", true, fp1, t0.Add(time.Nanosecond))
	assert.Equal(t, models.ExpectProcess, x.Kind)
}

func TestSpec_ArriveAndCompleteNeverMutateTheReceiver(t *testing.T) {
	s0 := models.NewSpec(retention)
	s1, _ := s0.Arrive("k", true, fp1, t0)
	s2 := s1.Complete("k", 201, "d", t0.Add(time.Second))
	s3, _ := s2.Arrive("j", true, fp2, t0.Add(2*time.Second))
	s4 := s3.Complete("j", 500, "x", t0.Add(3*time.Second))
	later := t0.Add(time.Minute)
	expired := t0.Add(retention + 2*time.Second)
	s5, _ := s4.Arrive("k", true, fp1, expired)

	// Every earlier state still says what it said.
	_, x := s0.Arrive("k", true, fp1, later)
	assert.Equal(t, models.ExpectProcess, x.Kind, "s0")
	_, x = s1.Arrive("k", true, fp1, later)
	assert.Equal(t, models.ExpectConflict, x.Kind, "s1")
	_, x = s2.Arrive("k", true, fp1, later)
	assert.Equal(t, models.ExpectReplay, x.Kind, "s2")
	assert.Equal(t, models.KeyAbsent, s2.Record("j", later).State, "s2")
	assert.Equal(t, models.KeyInFlight, s3.Record("j", later).State, "s3")
	assert.Equal(t, models.KeyAbsent, s4.Record("j", later).State, "s4")
	assert.Equal(t, models.KeyCompleted, s4.Record("k", later).State, "s4")
	assert.Equal(t, models.KeyInFlight, s5.Record("k", expired).State, "s5")
	assert.Equal(t, models.KeyCompleted, s4.Record("k", t0.Add(retention)).State, "s4 after s5")
	assert.Equal(t, retention, s5.Retention)
}

// specOp is one step of a random walk over the specification.
type specOp struct {
	arrive bool
	key    string
	fp     string
	status int
	at     time.Time
}

// The receiver-never-changes promise under random walks: after any
// sequence of steps, every earlier state answers Record as it did when
// it was made.
func TestSpec_EarlierStatesSurviveRandomWalks(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		keys := []string{"a", "b", "c"}
		fps := []string{fp1, fp2}
		s := models.NewSpec(time.Duration(rapid.IntRange(1, 10).Draw(t, "retention_s")) * time.Second)
		now := t0
		type saved struct {
			spec    models.Spec
			at      time.Time
			records map[string]models.KeyRecord
		}
		var history []saved
		for i, n := 0, rapid.IntRange(1, 40).Draw(t, "steps"); i < n; i++ {
			now = now.Add(time.Duration(rapid.IntRange(0, 4000).Draw(t, "dt_ms")) * time.Millisecond)
			op := specOp{
				arrive: rapid.Bool().Draw(t, "arrive"),
				key:    rapid.SampledFrom(keys).Draw(t, "key"),
				fp:     rapid.SampledFrom(fps).Draw(t, "fp"),
				status: rapid.SampledFrom([]int{201, 402, 500, 503}).Draw(t, "status"),
				at:     now,
			}
			if op.arrive {
				s, _ = s.Arrive(op.key, true, op.fp, op.at)
			} else {
				s = s.Complete(op.key, op.status, fmt.Sprint("digest-", i), op.at)
			}
			rec := map[string]models.KeyRecord{}
			for _, k := range keys {
				rec[k] = s.Record(k, now)
			}
			history = append(history, saved{spec: s, at: now, records: rec})
		}
		for i, h := range history {
			for _, k := range keys {
				require.Equal(t, h.records[k], h.spec.Record(k, h.at), "state %d key %s changed later", i, k)
			}
		}
	})
}

func TestExpect_Matches(t *testing.T) {
	replay := models.Expect{Kind: models.ExpectReplay, Status: 201, Digest: "d1"}
	cases := []struct {
		name   string
		expect models.Expect
		status int
		digest string
		want   bool
	}{
		{"process 201", models.Expect{Kind: models.ExpectProcess}, 201, "x", true},
		{"process 402", models.Expect{Kind: models.ExpectProcess}, 402, "x", true},
		{"process 409", models.Expect{Kind: models.ExpectProcess}, 409, "x", true},
		{"process 499", models.Expect{Kind: models.ExpectProcess}, 499, "x", true},
		{"process 500", models.Expect{Kind: models.ExpectProcess}, 500, "x", false},
		{"process 503", models.Expect{Kind: models.ExpectProcess}, 503, "x", false},
		{"conflict 409", models.Expect{Kind: models.ExpectConflict}, 409, "", true},
		{"conflict 201", models.Expect{Kind: models.ExpectConflict}, 201, "", false},
		{"replay same", replay, 201, "d1", true},
		{"replay other body", replay, 201, "d2", false},
		{"replay other status", replay, 200, "d1", false},
		{"mismatch 422", models.Expect{Kind: models.ExpectMismatch}, 422, "", true},
		{"mismatch 409", models.Expect{Kind: models.ExpectMismatch}, 409, "", false},
		{"mismatch 201", models.Expect{Kind: models.ExpectMismatch}, 201, "", false},
		{"missing key 400", models.Expect{Kind: models.ExpectMissingKey}, 400, "", true},
		{"missing key 201", models.Expect{Kind: models.ExpectMissingKey}, 201, "", false},
		{"missing key 422", models.Expect{Kind: models.ExpectMissingKey}, 422, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, c.expect.Matches(c.status, c.digest))
		})
	}
}

func TestSpec_Strings(t *testing.T) {
	assert.Equal(t, "absent", models.KeyAbsent.String())
	assert.Equal(t, "in-flight", models.KeyInFlight.String())
	assert.Equal(t, "completed", models.KeyCompleted.String())
	assert.Equal(t, "process", models.Expect{Kind: models.ExpectProcess}.String())
	assert.Equal(t, "409 conflict", models.Expect{Kind: models.ExpectConflict}.String())
	assert.Equal(t, "422 mismatch", models.Expect{Kind: models.ExpectMismatch}.String())
	assert.Equal(t, "400 missing key", models.Expect{Kind: models.ExpectMissingKey}.String())
	assert.Equal(t, "replay of 201 (body 0123456789ab)",
		models.Expect{Kind: models.ExpectReplay, Status: 201, Digest: "0123456789abcdef"}.String())
	assert.Equal(t, "replay of 402 (body d1)", models.Expect{Kind: models.ExpectReplay, Status: 402, Digest: "d1"}.String())
}

// A key whose holder died stays in flight until its lease ends, then a
// retry is processed; a provider may free it earlier (Forget).
func TestSpecAbandonFreesTheKeyAfterTheLease(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	s := models.NewSpec(time.Minute)
	s, x := s.Arrive("k", true, "fp", t0)
	require.Equal(t, models.ExpectProcess, x.Kind)
	s = s.Abandon("k", t0.Add(2*time.Second), t0.Add(time.Millisecond))
	_, x = s.Arrive("k", true, "fp", t0.Add(time.Second))
	assert.Equal(t, models.ExpectConflict, x.Kind, "in flight during the lease")
	_, x = s.Arrive("k", true, "fp", t0.Add(3*time.Second))
	assert.Equal(t, models.ExpectProcess, x.Kind, "free after it")
	_, x = s.Forget("k", t0.Add(time.Second)).Arrive("k", true, "fp", t0.Add(time.Second))
	assert.Equal(t, models.ExpectProcess, x.Kind, "freed early")
	done := s.Complete("k", 201, "d", t0.Add(time.Millisecond))
	assert.Equal(t, done, done.Abandon("k", t0, t0.Add(time.Millisecond)), "a completed key is not abandoned")
}
