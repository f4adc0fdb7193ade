package reports

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// exchangeRow is one row of the exchanges table: a run of n identical
// consecutive exchanges from first to last.
type exchangeRow struct {
	first, last models.Exchange
	n           int
	fold        string   // what must match for the next exchange to fold in
	cells       []string // key, provider, client, charge, step, request, body, fault, replayed
}

// The exchanges table's columns, deciding ones first (key, the provider's
// answer, what the client saw, the charge), so they are on screen at any
// width; the last four are the ones an evidence table leaves out when no
// row fills them (exchangeTable's narrow form).
var exchangeColumns = []string{"#", "key", "provider", "client saw", "charge", "time", "request",
	"step", "body", "fault", "Idempotent-Replayed"}

// writeExchanges writes the table of wire exchanges of a failure report:
// time is the offset from the first step, key the short key (marked
// journaled when read from the provider's journal), body the first 8 hex
// digits of the request body's fingerprint (models.Fingerprint),
// Idempotent-Replayed the response header as the client got it.
func writeExchanges(b *strings.Builder, h models.Snapshot) {
	header, rows := exchangeTable(h, false)
	if len(rows) == 0 {
		b.WriteString("none\n\n")
		return
	}
	b.WriteString(tableRow(header))
	b.WriteString("|" + strings.Repeat("---|", len(header)) + "\n")
	for _, r := range rows {
		b.WriteString(tableRow(r))
	}
	b.WriteString("\n")
}

// writeEvidenceTable writes a requirement's exchanges in the narrow form:
// the columns of writeExchanges, without step, body, fault and
// Idempotent-Replayed ("replayed") where no row fills them (a fault
// "pass" fills nothing), times to three digits, and each row within
// MaxTableWidth (writeTable moves a long cell, such as a lookup's query,
// to a note under the table).
func writeEvidenceTable(b *strings.Builder, h models.Snapshot) {
	header, rows := exchangeTable(h, true)
	if len(rows) == 0 {
		b.WriteString("none\n\n")
		return
	}
	writeTable(b, header, rows, 5) // #, key, provider, client saw, charge
}

// exchangeTable is h's exchanges as a table's header and rows, identical
// consecutive exchanges folded into one row ("5–7 ×3"); narrow leaves out
// the optional columns no row fills and rounds the times.
func exchangeTable(h models.Snapshot, narrow bool) (header []string, cells [][]string) {
	exs := sortedExchanges(h)
	ops := opIndex(h)
	var rows []exchangeRow
	for _, ex := range exs {
		step := ""
		if op, ok := ops[ex.OpID]; ok {
			step = strconv.Itoa(op.Step)
		}
		provider, client := providerSaw(ex), clientSaw(ex)
		replayed := ""
		if ex.Replayed {
			replayed = "yes"
		}
		charge := chargeCell(ex)
		fold := strings.Join([]string{strconv.Itoa(ex.OpID), ex.Method, ex.Path, ex.Query,
			strconv.FormatBool(ex.HasKey), ex.KeyHeader, ex.Fingerprint, ex.Fault, provider, client, replayed, charge}, "\x00")
		if n := len(rows); n > 0 && rows[n-1].fold == fold {
			rows[n-1].last = ex
			rows[n-1].n++
			continue
		}
		rows = append(rows, exchangeRow{first: ex, last: ex, n: 1, fold: fold, cells: []string{
			keyCell(ex), mdText(provider), mdText(client), charge,
			mdText(request(ex, false)), step, optCode(cutHash(ex.Fingerprint)), mdText(ex.Fault), replayed,
		}})
	}
	base := origin(h)
	at := func(t time.Time) string { return offset(base, t) }
	if narrow {
		at = func(t time.Time) string { return roundedOffset(base, t) }
	}
	for _, r := range rows {
		num, when := strconv.Itoa(r.first.ID), at(r.first.SentAt)
		if r.n > 1 {
			num = fmt.Sprintf("%d–%d ×%d", r.first.ID, r.last.ID, r.n)
			if last := at(r.last.SentAt); last != when {
				when += " to " + last
			}
		}
		cells = append(cells, append(append(append([]string{num}, r.cells[:4]...), when), r.cells[4:]...))
	}
	header = append([]string(nil), exchangeColumns...)
	if !narrow { // a failure report's order, as it always was: step before time
		order := []int{0, 1, 2, 3, 4, 7, 5, 6, 8, 9, 10}
		return columns([][]string{header}, order)[0], columns(cells, order)
	}
	header[len(header)-1] = "replayed"
	// Keep a column some row fills: step, body, fault (other than
	// "pass"), replayed; the first seven columns always stay.
	keep := []int{0, 1, 2, 3, 4, 5, 6}
	for i := 7; i < len(header); i++ {
		if slices.ContainsFunc(cells, func(row []string) bool { return row[i] != "" && row[i] != "pass" }) {
			keep = append(keep, i)
		}
	}
	return columns([][]string{header}, keep)[0], columns(cells, keep)
}

// columns is each row's cells at the indices cols, in that order.
func columns(rows [][]string, cols []int) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		for _, j := range cols {
			out[i] = append(out[i], r[j])
		}
	}
	return out
}

// roundedOffset is offset to three significant digits or so: "+1.3ms",
// "+10.4ms", "+1.62s".
func roundedOffset(base, t time.Time) string {
	if base.IsZero() || t.IsZero() {
		return ""
	}
	d := t.Sub(base)
	abs := d.Abs()
	switch {
	case abs >= 10*time.Second:
		d = d.Round(100 * time.Millisecond)
	case abs >= time.Second:
		d = d.Round(10 * time.Millisecond)
	case abs >= 10*time.Millisecond:
		d = d.Round(100 * time.Microsecond)
	case abs >= time.Millisecond:
		d = d.Round(10 * time.Microsecond)
	default:
		d = d.Round(time.Microsecond)
	}
	return offset(base, base.Add(d))
}
