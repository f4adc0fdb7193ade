package models_test

import (
	"fmt"
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// A key travels as a Structured Field String; the bare form names the
// same key.
func ExampleFormatKey() {
	header := models.FormatKey(`order-1001 "retry"`)
	fmt.Println(header)

	key, quoted, ok := models.ParseKey(header)
	fmt.Println(key, quoted, ok)

	key, quoted, ok = models.ParseKey("8e3c5a4e-0b1f-4c55-9a2e-0d4f2b6c7a10")
	fmt.Println(key, quoted, ok)

	_, _, ok = models.ParseKey(`"unterminated`)
	fmt.Println(ok)
	// Output:
	// "order-1001 \"retry\""
	// order-1001 "retry" true true
	// 8e3c5a4e-0b1f-4c55-9a2e-0d4f2b6c7a10 false true
	// false
}

// The specification is a pure step function: each call returns the next
// state and what the provider may answer.
func ExampleSpec() {
	start := time.Date(2026, 10, 22, 12, 0, 0, 0, time.UTC)
	fp := models.Fingerprint(models.ChargeRequest{Amount: 54890, Currency: "TRY", Source: "tok_visa", MerchantReference: "bookstore-1001-a"})
	other := models.Fingerprint(models.ChargeRequest{Amount: 100, Currency: "TRY", Source: "tok_visa", MerchantReference: "bookstore-1001-a"})

	s := models.NewSpec(24 * time.Hour)
	s, first := s.Arrive("k", true, fp, start)
	_, retry := s.Arrive("k", true, fp, start.Add(time.Second))
	_, reused := s.Arrive("k", true, other, start.Add(time.Second))
	s = s.Complete("k", 201, "3f1c9a0b7d2e4f56aa", start.Add(5*time.Second))
	_, late := s.Arrive("k", true, fp, start.Add(time.Minute))
	_, expired := s.Arrive("k", true, fp, start.Add(5*time.Second+24*time.Hour+time.Nanosecond))
	_, keyless := s.Arrive("", false, fp, start)

	fmt.Println(first)
	fmt.Println(retry)
	fmt.Println(reused)
	fmt.Println(late, late.Matches(201, "3f1c9a0b7d2e4f56aa"))
	fmt.Println(expired)
	fmt.Println(keyless)
	// Output:
	// process
	// 409 conflict
	// 422 mismatch or 409 (in flight)
	// replay of 201 (body 3f1c9a0b7d2e) true
	// process
	// 400 missing key
}
