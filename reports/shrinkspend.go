package reports

import "fmt"

// ShrinkSpend is what shrinking spent (issue 24, item 2): against a URL,
// the checks rapid ran after finding a deviation (its reproduction
// included), and the requests and creates (each may charge) they sent.
// In process a shrink sends nothing over the wire: Requests and Charges
// stay 0.
type ShrinkSpend struct {
	Attempts int `json:"attempts"`
	Requests int `json:"requests"`
	Charges  int `json:"charges"`
}

// Add is s plus o.
func (s ShrinkSpend) Add(o ShrinkSpend) ShrinkSpend {
	return ShrinkSpend{Attempts: s.Attempts + o.Attempts, Requests: s.Requests + o.Requests, Charges: s.Charges + o.Charges}
}

// String is "3 attempts, 21 requests, 9 charges".
func (s ShrinkSpend) String() string {
	return fmt.Sprintf("%s, %s, %s", plural(s.Attempts, "attempt"), plural(s.Requests, "request"), plural(s.Charges, "charge"))
}
