package reports

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/idemcheck/idemcheck/models"
)

// jsonFailure is the JSON form of a Failure: step_count first, then the
// Failure's fields in their declaration order.
type jsonFailure struct {
	StepCount int `json:"step_count"`
	Failure
}

// JSON renders f as indented JSON for tools: "step_count" (the number of
// shopper steps, len(f.History.Steps)) and then every field of Failure in
// declaration order, under the json names of its tags. It unmarshals back
// into a Failure equal to f except that times come back in a fixed zone,
// nil slices come back empty, Charge.Created is not written (models keeps
// it out of JSON), and card hashes are cut to their first 8 characters, as
// everywhere in reports.
func JSON(f Failure) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(jsonFailure{StepCount: len(f.History.Steps), Failure: redact(f)}); err != nil {
		return nil, fmt.Errorf("reports: encoding %s failure as JSON: %w", f.Invariant, err)
	}
	return buf.Bytes(), nil
}

// redact returns a copy of f with card hashes cut to 8 characters and nil
// slices made empty, so that tools always see arrays. f is not changed.
func redact(f Failure) Failure {
	f.Schedule = orEmpty(f.Schedule)
	f.Orders = orEmpty(f.Orders)
	f.Charges = orEmpty(f.Charges)
	f.History.Steps = orEmpty(f.History.Steps)
	f.History.Ops = orEmpty(f.History.Ops)
	f.History.Exchanges = append(make([]models.Exchange, 0, len(f.History.Exchanges)), f.History.Exchanges...)
	for i := range f.History.Exchanges {
		f.History.Exchanges[i].CardHash = cutHash(f.History.Exchanges[i].CardHash)
	}
	f.Attempts = append(make([]models.PaymentAttempt, 0, len(f.Attempts)), f.Attempts...)
	for i := range f.Attempts {
		f.Attempts[i].CardTokenHash = cutHash(f.Attempts[i].CardTokenHash)
	}
	return f
}

// cutHash keeps the first 8 characters of a card hash: enough to tell two
// cards apart in one report, too few to look a token up.
func cutHash(h string) string {
	if r := []rune(h); len(r) > 8 {
		return string(r[:8])
	}
	return h
}

// orEmpty is s, or an empty slice if s is nil.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
