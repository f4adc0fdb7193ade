// Package jsonread is how the harness reads the JSON it records: the
// bodies on the wire as the fault layer sees them (faults) and the
// digests and dialect checks of models. It decodes as encoding/json does
// (segmentio/encoding/json, a drop-in tested against the standard
// library's own suite) at a fifth of its cost: an exchange's record
// decoded its request and answer three times through encoding/json,
// 6 % of BenchmarkProperty's CPU (issue 29). Only a plain body (ASCII, no
// \u escape, shallow: what clients and providers send) goes to
// segmentio; encoding/json reads every other. jsonread_test.go holds both
// to the same answers on hostile bodies. The systems under test
// (sut/client, sut/provider) keep encoding/json: a client or provider of
// our own reads JSON as a real one written against the standard library.
//
// Only reading goes through here. Bytes the harness writes (a probe's
// body, a fingerprint's plain form) stay encoding/json's, whose output a
// client compares byte for byte.
package jsonread

import (
	"encoding/json"
	"reflect"
	"unicode/utf8"

	seg "github.com/segmentio/encoding/json"
)

// Unmarshal decodes data into v, a non-nil pointer to a zero value, as
// encoding/json.Unmarshal does: the same nil-or-error result and the same
// value after it. Only a plain body (plain) goes to segmentio; where it
// fails, encoding/json decodes again from a zero value: on invalid JSON it
// fills nothing (segmentio fills what came before the fault), on a member
// of the wrong type it goes on with the others (segmentio stops). Any
// other body goes to encoding/json alone.
func Unmarshal(data []byte, v any) error {
	if plain(data) && seg.Valid(data) && seg.Unmarshal(data, v) == nil {
		return nil
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv.Elem().SetZero()
	}
	return json.Unmarshal(data, v)
}

// Valid reports whether data is one valid JSON value, as encoding/json.Valid
// does; a body that is not plain is judged by encoding/json.
func Valid(data []byte) bool {
	if !plain(data) {
		return json.Valid(data)
	}
	return seg.Valid(data)
}

// maxPlainDepth is the deepest nesting of a plain body: far more than a
// payment body has, far less than encoding/json's limit of 10 000.
const maxPlainDepth = 64

// plain reports whether b is a body segmentio reads as encoding/json does,
// in one pass: every byte below 0x80, no \u escape, nesting at most
// maxPlainDepth deep. encoding/json matches a member to a field under
// Unicode's case folding ("ſtatus", written as is or as \u017ftatus, is
// "status"), segmentio under ASCII's; encoding/json refuses a body nested
// deeper than 10 000, segmentio has no limit and recurses for each level
// (a megabyte of "[" took it 4.5 s and 512 MB of stack, two megabytes
// overflowed the stack). A breaker found both over a hostile provider.
func plain(b []byte) bool {
	depth, inString := 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c >= utf8.RuneSelf:
			return false
		case inString && c == '\\':
			if i+1 < len(b) && b[i+1] == 'u' {
				return false
			}
			i++ // the escaped byte
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			if depth++; depth > maxPlainDepth {
				return false
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return true
}
