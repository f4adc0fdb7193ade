package certify

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/models"
)

// ex is a forwarded POST under key k, at the provider from ms a to ms b,
// answered status with body digest d.
func ex(id int, a, b int, status int, d string) models.Exchange {
	t0 := time.Unix(0, 0)
	return models.Exchange{ID: id, Method: "POST", HasKey: true, Key: "k", Fingerprint: "fp", Forwarded: true,
		ArrivedAt: t0.Add(time.Duration(a) * time.Millisecond), ProviderDone: true,
		ProviderDoneAt: t0.Add(time.Duration(b) * time.Millisecond), ProviderStatus: status, ProviderBodyDigest: d}
}

// A golden corpus of provider histories and what porcupine must say.
func TestLinearizable_Corpus(t *testing.T) {
	cases := []struct {
		name string
		exs  []models.Exchange
		want porcupine.CheckResult
	}{
		{"one process then a replay", []models.Exchange{ex(1, 0, 10, 201, "a"), ex(2, 20, 30, 201, "a")}, porcupine.Ok},
		{"concurrent: one processes, one 409", []models.Exchange{ex(1, 0, 100, 201, "a"), ex(2, 10, 20, 409, "")}, porcupine.Ok},
		{"concurrent: the later finishes first as a replay", []models.Exchange{ex(1, 0, 100, 201, "a"), ex(2, 10, 110, 201, "a")}, porcupine.Ok},
		{"two charges for one key", []models.Exchange{ex(1, 0, 100, 201, "a"), ex(2, 10, 110, 201, "b")}, porcupine.Illegal},
		{"replay with another body", []models.Exchange{ex(1, 0, 10, 201, "a"), ex(2, 20, 30, 201, "b")}, porcupine.Illegal},
		{"409 after completion", []models.Exchange{ex(1, 0, 10, 201, "a"), ex(2, 20, 30, 409, "")}, porcupine.Illegal},
		{"409 after a 500 released the key", []models.Exchange{ex(1, 0, 10, 500, "x"), ex(2, 20, 30, 409, "")}, porcupine.Illegal},
		{"a 500 then a fresh charge", []models.Exchange{ex(1, 0, 10, 500, "x"), ex(2, 20, 30, 201, "a")}, porcupine.Ok},
		{"409 with nothing in flight", []models.Exchange{ex(1, 0, 10, 409, "")}, porcupine.Illegal},
		{"decline replayed", []models.Exchange{ex(1, 0, 10, 402, "d1"), ex(2, 20, 30, 402, "d1")}, porcupine.Ok},
		{"decline run again", []models.Exchange{ex(1, 0, 10, 402, "d1"), ex(2, 20, 30, 402, "d2")}, porcupine.Illegal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, linearizable(c.exs, 5*time.Second))
		})
	}
}

func TestLinearizable_MismatchNeedsAnotherFingerprint(t *testing.T) {
	first := ex(1, 0, 10, 201, "a")
	same := ex(2, 20, 30, 422, "")
	assert.Equal(t, porcupine.Illegal, linearizable([]models.Exchange{first, same}, 5*time.Second), "422 for the same body")
	other := same
	other.Fingerprint = "fp2"
	assert.Equal(t, porcupine.Ok, linearizable([]models.Exchange{first, other}, 5*time.Second))
}

// An illegal history comes with porcupine's own visualisation (an HTML
// page for the run folder); a legal one with none.
func TestLinearizableShownVisualisesAnIllegalHistory(t *testing.T) {
	first, same := ex(1, 0, 10, 201, "a"), ex(2, 20, 30, 422, "")
	res, page := linearizableShown([]models.Exchange{first, same}, 5*time.Second)
	assert.Equal(t, porcupine.Illegal, res)
	assert.Contains(t, string(page), "<html")
	assert.Contains(t, string(page), "exchange 2")
	other := same
	other.Fingerprint = "fp2"
	res, page = linearizableShown([]models.Exchange{first, other}, 5*time.Second)
	assert.Equal(t, porcupine.Ok, res)
	assert.Nil(t, page)
}
