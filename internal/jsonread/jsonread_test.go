package jsonread_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/idemcheck/idemcheck/internal/jsonread"
	"github.com/idemcheck/idemcheck/models"
	"pgregory.net/rapid"
)

// chargeAnswer is faults' reading of a 2xx answer: one charge, or a list.
type chargeAnswer struct {
	models.Charge
	Data []models.Charge `json:"data"`
}

// targets are the shapes the harness reads bodies into, each a fresh value.
var targets = map[string]func() any{
	"ChargeRequest": func() any { return new(models.ChargeRequest) },
	"RefundRequest": func() any { return new(models.RefundRequest) },
	"Charge":        func() any { return new(models.Charge) },
	"Refund":        func() any { return new(models.Refund) },
	"chargeAnswer":  func() any { return new(chargeAnswer) },
	"any":           func() any { return new(any) },
}

// agree fails t when encoding/json and jsonread read body differently:
// validity, whether decoding failed, and what it decoded (also after a
// failure: encoding/json keeps what it could decode of a type mismatch).
func agree(t interface{ Fatalf(string, ...any) }, body []byte) {
	if s, f := json.Valid(body), jsonread.Valid(body); s != f {
		t.Fatalf("Valid(%q): encoding/json %v, jsonread %v", body, s, f)
	}
	for name, mk := range targets {
		s, f := mk(), mk()
		es, ef := json.Unmarshal(body, s), jsonread.Unmarshal(body, f)
		if (es == nil) != (ef == nil) {
			t.Fatalf("Unmarshal(%q) into %s: encoding/json error %v, jsonread error %v", body, name, es, ef)
		}
		if !reflect.DeepEqual(s, f) {
			t.Fatalf("Unmarshal(%q) into %s: encoding/json %+v, jsonread %+v (errors %v, %v)", body, name, s, f, es, ef)
		}
	}
}

// TestReadsAsEncodingJSON holds jsonread to encoding/json on bodies a
// provider or client we did not write may send: members in any case,
// repeated, of the wrong type, null, escaped, invalid UTF-8, deep, cut
// short, with garbage after.
func TestReadsAsEncodingJSON(t *testing.T) {
	for _, body := range []string{
		``, ` `, `{}`, `[]`, `null`, `"x"`, `{"id":"ch_1"}`, `{"ID":"ch_1"}`, `{"Id":"a","id":"b"}`,
		`{"id":"a","id":"b"}`, `{"amount":"12"}`, `{"amount":1.5}`, `{"amount":1e3}`, `{"amount":-0}`,
		`{"amount":99999999999999999999}`, `{"amount":null,"currency":null}`, `{"currency":"\u00e9\ud800"}`,
		"{\"currency\":\"\xff\xfe\"}", `{"data":[{"id":"a"},{"id":"b"}]}`, `{"data":null}`, `{"data":{}}`,
		`{"id":"a"} trailing`, `{"id":"a"`, `{"id":"a",}`, `{"id":1}`, `{"amount":12,"amount":"x","id":"z"}`,
		`{"merchant_reference":"o-1","MERCHANT_REFERENCE":"o-2"}`, `{"source":"tok_visa","extra":{"a":[1,2,{"b":null}]}}`,
		`{"id":"\"quoted\""}`, `{"id":"a\u0000b"}`, `  {"id" : "a" }  `, `{"created":"2026-01-01T00:00:00Z"}`,
		`{"k":` + strings.Repeat(`[`, 200) + strings.Repeat(`]`, 200) + `}`, `{"id":true}`, `{"data":[1,2]}`,
		`{"ſtatus":"x"}`, "{\"\u212aey\":1}", `{"ıd":"x"}`, `{"İD":"x"}`, `{"K":1,"k":2}`, `{"amount":12}{"amount":13}`,
		// ASCII bodies whose escapes name non-ASCII letters that fold to
		// a field's (a breaker's): "ſtatus", "ſource", "Kelvin" K.
		`{"id":"ch_1","\u017ftatus":"Succeeded"}`, `{"\u017fource":"tok_visa"}`, `{"\u212a":1}`, `{"\u0069d":"x"}`,
		`{"id":"ch_1","\u017ftatus":7}`, `{"\u0130D":"x"}`,
		// Deeper than encoding/json's 10 000 levels: it refuses the body,
		// segmentio took it (and overflowed its stack on 2 MB of "[").
		`{"id":"ch_1","x":` + strings.Repeat(`[`, 10001) + strings.Repeat(`]`, 10001) + `}`,
		`{"id":"ch_1","x":` + strings.Repeat(`{"a":`, 10001) + `1` + strings.Repeat(`}`, 10001) + `}`,
		`{"id":"ch_1","x":` + strings.Repeat(`[`, 65) + strings.Repeat(`]`, 65) + `}`,
		strings.Repeat(`[`, 1<<20),
	} {
		agree(t, []byte(body))
	}
}

// TestReadsAsEncodingJSONDrawn draws bodies from the members the harness
// reads and mutations of them.
func TestReadsAsEncodingJSONDrawn(t *testing.T) {
	keys := rapid.OneOf(rapid.Map(rapid.SampledFrom([]string{"id", "ID", "Id", "amount", "Amount", "currency", "source", "status",
		"merchant_reference", "Merchant_Reference", "charge", "data", "description", "x", "ſource", "K"}), strconv.Quote), escapedKey())
	var value *rapid.Generator[string]
	value = rapid.Deferred(func() *rapid.Generator[string] {
		return rapid.OneOf(
			rapid.SampledFrom([]string{`null`, `true`, `false`, `0`, `-1`, `12345`, `1.5`, `1e2`, `-0.0`,
				`18446744073709551616`, `"EUR"`, `"ch_000001"`, `""`, `"\u00e9"`, `"\ud800"`, "\"\xff\"", `"a\"b"`, `[]`, `{}`}),
			rapid.Custom(func(t *rapid.T) string { return fmt.Sprintf("%q", rapid.String().Draw(t, "s")) }),
			rapid.Custom(func(t *rapid.T) string {
				n := rapid.IntRange(0, 3).Draw(t, "n")
				parts := make([]string, n)
				for i := range parts {
					parts[i] = value.Draw(t, "elem")
				}
				return "[" + strings.Join(parts, ",") + "]"
			}),
			rapid.Custom(func(t *rapid.T) string { return object(t, keys, value) }),
		)
	})
	rapid.Check(t, func(t *rapid.T) {
		body := object(t, keys, value)
		switch rapid.IntRange(0, 4).Draw(t, "mutation") {
		case 1: // cut short
			body = body[:rapid.IntRange(0, len(body)).Draw(t, "cut")]
		case 2: // garbage after
			body += rapid.SampledFrom([]string{" ", "x", "{}", ",", "\x00"}).Draw(t, "after")
		case 3: // one byte changed
			if len(body) > 0 {
				i := rapid.IntRange(0, len(body)-1).Draw(t, "at")
				body = body[:i] + string(rune(rapid.IntRange(0, 127).Draw(t, "byte"))) + body[i+1:]
			}
		}
		agree(t, []byte(body))
	})
}

func object(t *rapid.T, keys, value *rapid.Generator[string]) string {
	n := rapid.IntRange(0, 5).Draw(t, "members")
	parts := make([]string, n)
	for i := range parts {
		parts[i] = keys.Draw(t, "key") + ":" + value.Draw(t, "value")
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// escapedKey draws a field's name, quoted as a JSON string, with some
// letters written as \u escapes: of the letter, of its other case, or of
// a Unicode letter that folds to it (ſ for s, K for k, İ and ı for i).
func escapedKey() *rapid.Generator[string] {
	names := []string{"id", "amount", "currency", "status", "source", "description", "merchant_reference", "charge", "data"}
	folds := map[rune][]rune{'s': {'S', 0x17f}, 'k': {'K', 0x212a}, 'i': {'I', 0x130, 0x131}}
	return rapid.Custom(func(t *rapid.T) string {
		var b strings.Builder
		for _, r := range rapid.SampledFrom(names).Draw(t, "name") {
			switch rapid.IntRange(0, 3).Draw(t, "how") {
			case 0:
				b.WriteRune(r)
			case 1:
				fmt.Fprintf(&b, `\u%04x`, r)
			case 2:
				fmt.Fprintf(&b, `\u%04X`, unicode.ToUpper(r))
			default:
				if f, ok := folds[r]; ok {
					fmt.Fprintf(&b, `\u%04x`, rapid.SampledFrom(f).Draw(t, "fold"))
				} else {
					b.WriteRune(unicode.ToUpper(r))
				}
			}
		}
		return `"` + b.String() + `"`
	})
}
