package reports

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/idemcheck/idemcheck/models"
)

// Comparison puts what a violation is about side by side, so a reader
// does not dig the difference out of the JSON: the first answer and the
// replay that differs from it, the answers to two bodies under one key,
// the key stored for an attempt and the one sent.
type Comparison struct {
	// Title says what is compared ("first answer and replay").
	Title string `json:"title"`
	// Left and Right head the two columns ("first answer (exchange 3)").
	Left  string          `json:"left"`
	Right string          `json:"right"`
	Rows  []ComparisonRow `json:"rows"`
}

// ComparisonRow is one field of a Comparison; Differs marks a difference.
type ComparisonRow struct {
	Field   string `json:"field"`
	Left    string `json:"left"`
	Right   string `json:"right"`
	Differs bool   `json:"differs,omitempty"`
}

// CompareExchanges compares exchanges a and b field by field: the key as
// sent (in full), the request body (fingerprint, amount, currency, card),
// the provider's status, charge and body digest, the Idempotent-Replayed
// header and what the client saw.
func CompareExchanges(title string, a, b models.Exchange) Comparison {
	c := Comparison{Title: title, Left: "exchange " + strconv.Itoa(a.ID), Right: "exchange " + strconv.Itoa(b.ID)}
	field := func(name string, f func(models.Exchange) string) {
		l, r := f(a), f(b)
		c.Rows = append(c.Rows, ComparisonRow{Field: name, Left: l, Right: r, Differs: l != r})
	}
	field("Idempotency-Key (as sent)", func(e models.Exchange) string {
		if !e.HasKey {
			return "(none)"
		}
		return e.KeyHeader
	})
	field("request body (fingerprint)", func(e models.Exchange) string { return cutHash(e.Fingerprint) })
	field("amount", func(e models.Exchange) string { return strings.TrimSpace(fmt.Sprintf("%d %s", e.Amount, e.Currency)) })
	field("card", func(e models.Exchange) string {
		if e.Card != "" {
			return e.Card
		}
		return cutHash(e.CardHash)
	})
	field("provider status", providerSaw)
	field("provider charge", func(e models.Exchange) string { return e.ProviderChargeID })
	field("provider body (digest)", func(e models.Exchange) string { return cutHash(e.ProviderBodyDigest) })
	field("Idempotent-Replayed", func(e models.Exchange) string { return strconv.FormatBool(e.Replayed) })
	field("client saw", clientSaw)
	return c
}

// writeComparison writes c as a table, the differing values in bold.
func writeComparison(b *strings.Builder, c Comparison) {
	fmt.Fprintf(b, "## What differs: %s\n\n", mdText(c.Title))
	fmt.Fprintf(b, "| | %s | %s |\n|---|---|---|\n", mdText(c.Left), mdText(c.Right))
	for _, r := range c.Rows {
		l, rt := optCode(r.Left), optCode(r.Right)
		if r.Differs {
			l, rt = orNone(l), orNone(rt)
			l, rt = "**"+l+"**", "**"+rt+"**"
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", mdText(r.Field), l, rt)
	}
	b.WriteString("\n")
}

// orNone is s, or "(none)" when empty.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
