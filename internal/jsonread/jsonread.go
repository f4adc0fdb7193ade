// Package jsonread is how the harness reads the JSON it records: the
// bodies on the wire as the fault layer sees them (faults) and the
// digests and dialect checks of models. It decodes as encoding/json does
// (segmentio/encoding/json, a drop-in tested against the standard
// library's own suite) at a fifth of its cost: an exchange's record
// decoded its request and answer three times through encoding/json,
// 6 % of BenchmarkProperty's CPU (issue 29). jsonread_test.go holds both
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
// value after it. Where segmentio fails, encoding/json decodes again from
// a zero value: on invalid JSON it fills nothing (segmentio fills what
// came before the fault), on a member of the wrong type it goes on with
// the others (segmentio stops). A body with any byte outside ASCII goes
// to encoding/json alone: it matches a member to a field under Unicode's
// case folding ("ſtatus" is "status"), segmentio under ASCII's, and it
// reads invalid UTF-8 its own way. Only such bodies pay for both.
func Unmarshal(data []byte, v any) error {
	if ascii(data) && seg.Valid(data) && seg.Unmarshal(data, v) == nil {
		return nil
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv.Elem().SetZero()
	}
	return json.Unmarshal(data, v)
}

// Valid reports whether data is one valid JSON value, as encoding/json.Valid
// (which, as segmentio's, does not judge the UTF-8 inside strings; a body
// outside ASCII is judged by encoding/json all the same).
func Valid(data []byte) bool {
	if !ascii(data) {
		return json.Valid(data)
	}
	return seg.Valid(data)
}

// ascii reports whether every byte of b is below 0x80.
func ascii(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
