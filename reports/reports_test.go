package reports_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.md from the current output")

func TestMarkdown(t *testing.T) {
	md := string(reports.Markdown(fixture()))

	t.Run("says what broke and how to replay it", func(t *testing.T) {
		assert.True(t, strings.HasPrefix(md, "# idemcheck: one-key-per-intent violated\n\n**In plain words:** "+fixtureExplanation+"\n\n"))
		assert.Contains(t, md, "\n> one-key-per-intent: order 1 intent 1 sent 2 distinct keys\n")
		assert.Contains(t, md, "provider `embedded` · mutant `fresh-key-per-retry` · 2 shopper steps · seed `7031`\n")
		assert.Contains(t, md, "## How to replay\n\n```sh\n"+fixtureReplay+"\n```\n")
		assert.Contains(t, md, "first found under `-rapid.seed=7031`")
		assert.Contains(t, md, "Reproducibility: **reproduced 10/10**.\n")
	})

	t.Run("lists the steps with their operations", func(t *testing.T) {
		assert.Contains(t, md, "1. open-order total=54890 TRY\n   - op 1, shopper: open-order order 1 54890 TRY → Placed\n")
		assert.Contains(t, md, "2. checkout order 1 with visa\n   - op 2, shopper: checkout order 1 (visa) → Paid 201, charge `ch_000001`\n")
		assert.Contains(t, md, "## Fault schedule\n\nEach step that sends requests draws its own schedule: entry n is what happened to that step's n-th request.\n\n1. 503\n2. pass\n3. slow-processing 12.000617s\n")
	})

	t.Run("tabulates the wire exchanges", func(t *testing.T) {
		for _, row := range []string{
			"| 1 | `\"0192f0e4…7a8b\"` | not reached | 503 |  | 2 | +1s | POST /v1/charges | `5f1d3c0b` | 503 |  |\n",
			"| 2 | `\"0192f0e4…7a8b\"` | 409 | 409 |  | 2 | +3s | POST /v1/charges | `5f1d3c0b` | pass |  |\n",
			"| 3 | `\"0192f0e4…7a8b\"` | 201 | 201 | `ch_000001` | 2 | +1m2.5s | POST /v1/charges | `5f1d3c0b` | pass | yes |\n",
		} {
			assert.Contains(t, md, row)
		}
	})

	t.Run("embeds the sequence diagram", func(t *testing.T) {
		assert.Contains(t, md, "## Sequence diagram\n\n```mermaid\nsequenceDiagram\n")
		// The report's diagram is Mermaid's, with the key stored for the
		// attempt where it is created and the violation at the end.
		assert.Contains(t, md, "    Shopper->>Client: checkout order 1 (visa)\n    Note over Client: stores attempt, key 0192f0e4…7a8b\n    Client-)Provider:")
		noKey := strings.Replace(md, "    Note over Client: stores attempt, key 0192f0e4…7a8b\n", "", 1)
		assert.Contains(t, noKey, reports.MermaidViolation(fixture().History, "one-key-per-intent", fixture().Explanation))
	})

	t.Run("shows both sides' final state", func(t *testing.T) {
		assert.Contains(t, md, "| 1 | Paid | 54890 TRY | `ch_000001` |\n")
		assert.Contains(t, md, "| 1 | `0192f0e4…7a8b` | 54890 TRY | Succeeded | `ch_000001` |\n")
		assert.Contains(t, md, "| `ch_000001` | 54890 | TRY | `bookstore-1-0192f0e45b7c7d1e9a2b3c4d5e6f7a8c` | succeeded |\n")
	})

	t.Run("never shows a full key or card hash", func(t *testing.T) {
		assert.NotContains(t, md, fixtureKey)
		assert.NotContains(t, md, cardHash[:9])
	})

	t.Run("is deterministic", func(t *testing.T) {
		assert.Equal(t, md, string(reports.Markdown(fixture())))
	})
}

func TestMarkdownFoldsIdenticalExchanges(t *testing.T) {
	f := fixture()
	exs := f.History.Exchanges
	second, third := exs[0], exs[0]
	second.SentAt, third.SentAt = second.SentAt.Add(time.Second), third.SentAt.Add(2*time.Second)
	f.History.Exchanges = []models.Exchange{exs[0], second, third, exs[1], exs[2]}
	for i := range f.History.Exchanges {
		f.History.Exchanges[i].ID, f.History.Exchanges[i].Seq = i+1, 2*i+6
	}

	md := string(reports.Markdown(f))
	assert.Contains(t, md, "| 1–3 ×3 | `\"0192f0e4…7a8b\"` | not reached | 503 |  | 2 | +1s to +3s | POST /v1/charges | `5f1d3c0b` | 503 |  |\n")
	assert.Equal(t, 1, strings.Count(md, "| not reached | 503 |  | 2 |"), "the three 503s fold into one row")
	assert.Contains(t, md, "| 409 | 409 |  | 2 | +3s | POST /v1/charges |")
	assert.Contains(t, md, "| `ch_000001` | 2 | +1m2.5s | POST /v1/charges |")

	t.Run("a different key does not fold", func(t *testing.T) {
		g := f
		g.History.Exchanges = append([]models.Exchange(nil), f.History.Exchanges...)
		g.History.Exchanges[1].KeyHeader = models.FormatKey("0192f0e4-ffff-7d1e-9a2b-3c4d5e6f7a8b")
		md := string(reports.Markdown(g))
		assert.NotContains(t, md, "×")
		assert.Equal(t, 3, strings.Count(md, "| not reached | 503 |  | 2 |"))
	})
}

func TestMarkdownEdgeCases(t *testing.T) {
	t.Run("an empty failure still renders every section", func(t *testing.T) {
		md := string(reports.Markdown(reports.Failure{Invariant: "books-balance"}))
		for _, s := range []string{
			"# idemcheck: books-balance violated", "0 shopper steps", "No replay command was recorded.",
			"## Fault schedule\n\nnone\n", "## Wire exchanges\n\nnone\n", "```mermaid\nsequenceDiagram\n",
			"No orders.", "No payment attempts.", "No charges.",
		} {
			assert.Contains(t, md, s)
		}
	})

	t.Run("lost calls, lost responses and markup in free text", func(t *testing.T) {
		f := fixture()
		f.Message = "at-most-one-charge-per-order: order 1 has 2 charges\n# not a heading | *not bold*"
		f.History.Ops[1].Lost, f.History.Ops[1].Returned = true, false
		ex := &f.History.Exchanges[2]
		ex.Status, ex.Replayed, ex.ChargeID, ex.Err = 0, false, "", "connection reset (injected lose-response)"
		ex.HasKey, ex.KeyHeader = false, ""
		md := string(reports.Markdown(f))
		assert.Contains(t, md, "> at-most-one-charge-per-order: order 1 has 2 charges\n> \\# not a heading \\| \\*not bold\\*\n")
		assert.Contains(t, md, "→ lost in crash\n")
		assert.Contains(t, md, "    Client--xShopper: lost in crash\n")
		assert.Contains(t, md, "| (none) | 201 | connection reset (injected lose-response) | `ch_000001` (client never saw it) | 2 | +1m2.5s | POST /v1/charges | `5f1d3c0b` | pass |  |")
	})

	t.Run("an unquoted key is shown as sent", func(t *testing.T) {
		f := fixture()
		f.History.Exchanges[1].KeyHeader = fixtureKey
		md := string(reports.Markdown(f))
		assert.Contains(t, md, "| 2 | `0192f0e4…7a8b` | 409 | 409 |  | 2 | +3s | POST /v1/charges | `5f1d3c0b` | pass |")
		assert.Contains(t, md, "Client->>Provider: POST /v1/charges key 0192f0e4…7a8b\n")
	})

	t.Run("a real-time provider's replay is not promised, and notes are shown", func(t *testing.T) {
		f := fixture()
		f.Provider = "http://127.0.0.1:4010"
		f.Notes = []string{"The run's budget ran out while rapid was shrinking."}
		md := string(reports.Markdown(f))
		assert.Contains(t, md, "Against this provider time is real, so a replay draws the same steps and faults but their timing, and the provider's state, differ")
		assert.Contains(t, md, "may run fewer steps than the sequence below")
		assert.Contains(t, md, "(the reproducibility check below says how often it came back)", "the fixture has one")
		assert.Contains(t, md, "> **Note:** The run's budget ran out while rapid was shrinking.\n")
		f.Reproducibility = nil
		assert.Contains(t, string(reports.Markdown(f)), "(`IDEMCHECK_REPRODUCE=10` replays it 10 times and says how often it comes back)",
			"no check was run: it says how to run one, not that it says")
		f.Provider = "embedded"
		assert.NotContains(t, string(reports.Markdown(f)), "time is real")
	})

	t.Run("a key read from the provider's journal is marked", func(t *testing.T) {
		f := fixture()
		f.History.Exchanges[1].Journaled = true
		assert.Contains(t, string(reports.Markdown(f)), "| `\"0192f0e4…7a8b\"` (journaled) |")
	})

	t.Run("requests still at the provider", func(t *testing.T) {
		f := fixture()
		ex := &f.History.Exchanges[2]
		ex.ProviderDone, ex.Done = false, false
		assert.Contains(t, string(reports.Markdown(f)), "| processing | no answer yet |")
	})
}

func TestJSON(t *testing.T) {
	in := fixture()
	b, err := reports.JSON(in)
	require.NoError(t, err)

	t.Run("round-trips modulo time zone and card hash shortening", func(t *testing.T) {
		var out reports.Failure
		require.NoError(t, json.Unmarshal(b, &out))
		want := fixture()
		for i := range want.History.Exchanges {
			want.History.Exchanges[i].CardHash = cardHash[:8]
		}
		want.Attempts[0].CardTokenHash = cardHash[:8]
		assert.Equal(t, inUTC(want), inUTC(out))
	})

	t.Run("has step_count and a stable field order", func(t *testing.T) {
		var top map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(b, &top))
		assert.JSONEq(t, "2", string(top["step_count"]))
		s := string(b)
		last := -1
		for _, k := range []string{"step_count", "test", "invariant", "message", "provider", "mutant",
			"schedule", "history", "orders", "attempts", "charges", "replay"} {
			i := strings.Index(s, "\n  \""+k+"\": ")
			require.Greater(t, i, last, "field %q out of order", k)
			last = i
		}
		again, err := reports.JSON(fixture())
		require.NoError(t, err)
		assert.Equal(t, b, again)
	})

	t.Run("keeps card hashes short and does not touch the input", func(t *testing.T) {
		assert.NotContains(t, string(b), cardHash)
		assert.Equal(t, cardHash, in.History.Exchanges[0].CardHash)
		assert.Equal(t, cardHash, in.Attempts[0].CardTokenHash)
	})

	t.Run("writes empty arrays, not null", func(t *testing.T) {
		b, err := reports.JSON(reports.Failure{})
		require.NoError(t, err)
		assert.NotContains(t, string(b), "null")
		assert.Contains(t, string(b), `"step_count": 0`)
	})

	t.Run("does not escape shell characters", func(t *testing.T) {
		f := fixture()
		f.Replay = "IDEMCHECK_MUTANT=x go test ./conformance && echo <done>"
		b, err := reports.JSON(f)
		require.NoError(t, err)
		assert.Contains(t, string(b), `"replay": "IDEMCHECK_MUTANT=x go test ./conformance && echo <done>"`)
	})
}

func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idemcheck-reports", "TestConformance")
	md, js, err := reports.Write(dir, "failure", fixture())
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "failure.md"), md)
	assert.Equal(t, filepath.Join(dir, "failure.json"), js)

	got, err := os.ReadFile(md)
	require.NoError(t, err)
	assert.Equal(t, reports.Markdown(fixture()), got)
	got, err = os.ReadFile(js)
	require.NoError(t, err)
	want, err := reports.JSON(fixture())
	require.NoError(t, err)
	assert.Equal(t, want, got)

	for _, name := range []string{"", ".", "..", "../escape", "a/b", `a\b`} {
		_, _, err := reports.Write(dir, name, fixture())
		assert.Error(t, err, "name %q", name)
	}
}

func TestMarkdownGolden(t *testing.T) {
	path := filepath.Join("testdata", "failure.golden.md")
	got := reports.Markdown(fixture())
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./reports -run TestMarkdownGolden -update to create it")
	assert.Equal(t, string(want), string(got), "run go test ./reports -run TestMarkdownGolden -update after a deliberate change")
}

// inUTC returns f with every time in UTC, for comparing across a JSON
// round trip that keeps instants but not zones.
func inUTC(f reports.Failure) reports.Failure {
	utc := func(t time.Time) time.Time {
		if t.IsZero() {
			return time.Time{}
		}
		return t.UTC()
	}
	h := f.History
	h.Steps = append([]models.Step(nil), h.Steps...)
	for i := range h.Steps {
		h.Steps[i].At = utc(h.Steps[i].At)
	}
	h.Ops = append([]models.Operation(nil), h.Ops...)
	for i := range h.Ops {
		op := &h.Ops[i]
		op.InvokedAt, op.ReturnedAt = utc(op.InvokedAt), utc(op.ReturnedAt)
	}
	h.Exchanges = append([]models.Exchange(nil), h.Exchanges...)
	for i := range h.Exchanges {
		e := &h.Exchanges[i]
		e.SentAt, e.ArrivedAt, e.ProviderDoneAt, e.DoneAt = utc(e.SentAt), utc(e.ArrivedAt), utc(e.ProviderDoneAt), utc(e.DoneAt)
	}
	f.History = h
	f.Attempts = append([]models.PaymentAttempt(nil), f.Attempts...)
	for i := range f.Attempts {
		a := &f.Attempts[i]
		a.CreatedAt, a.LastCheckedAt = utc(a.CreatedAt), utc(a.LastCheckedAt)
	}
	f.Charges = append([]models.Charge(nil), f.Charges...)
	for i := range f.Charges {
		f.Charges[i].Created = utc(f.Charges[i].Created)
	}
	return f
}
