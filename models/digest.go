package models

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"sync"

	"github.com/idemcheck/idemcheck/internal/jsonread"
)

// BodyDigest is the hex SHA-256 of a JSON body in canonical form (compact,
// object keys sorted), so that two byte-different encodings of one JSON value
// digest alike; a body that is not JSON is digested as it is.
//
// The canonical form is what encoding/json writes for the body decoded into
// an any with UseNumber. canonical writes it straight from the bytes for the
// bodies a provider answers (ASCII strings without escapes, no repeated
// object key) without building maps (issue 29: decoding into maps and
// marshalling them again cost as much as the provider's handler); any other
// body takes encoding/json's way.
func BodyDigest(body []byte) string {
	if !jsonread.Valid(body) {
		return hexSum(body)
	}
	buf := canonBufs.Get().(*[]byte)
	defer canonBufs.Put(buf)
	c, ok := canonical((*buf)[:0], body)
	if !ok {
		c = canonicalSlow(body)
	} else if cap(c) <= 64<<10 {
		*buf = c // keep a grown buffer, not a huge one
	}
	return hexSum(c)
}

// hexSum is the hex SHA-256 of b, allocating only the string.
func hexSum(b []byte) string {
	sum := sha256.Sum256(b)
	var hx [2 * sha256.Size]byte
	hex.Encode(hx[:], sum[:])
	return string(hx[:])
}

// canonBufs are canonical's output buffers.
var canonBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// canonicalSlow is the canonical form through encoding/json.
func canonicalSlow(body []byte) []byte {
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // keep integers beyond float64 precision exact
	if dec.Decode(&v) == nil {
		if b, err := json.Marshal(v); err == nil {
			return b
		}
	}
	return body
}

// canonDepth bounds canonical's nesting; deeper bodies take the slow way.
const canonDepth = 32

// canonical appends the canonical form of body, valid JSON, to dst; ok is
// false when body holds what canonical does not rewrite as encoding/json
// would (an escape, a byte outside printable ASCII, one of <>& that
// encoding/json escapes, a repeated object key, deep nesting).
func canonical(dst, body []byte) ([]byte, bool) {
	c := canon{src: body}
	dst, ok := c.value(dst, 0)
	if !ok {
		return nil, false
	}
	c.space()
	return dst, c.i == len(body)
}

type canon struct {
	src []byte
	i   int
}

// member is one object member: its key and its value, as spans of src.
type member struct{ k0, k1, v0, v1 int }

func (c *canon) space() {
	for c.i < len(c.src) {
		switch c.src[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

func (c *canon) value(dst []byte, depth int) ([]byte, bool) {
	c.space()
	if c.i >= len(c.src) || depth > canonDepth {
		return nil, false
	}
	switch b := c.src[c.i]; {
	case b == '{':
		return c.object(dst, depth)
	case b == '[':
		c.i++
		dst = append(dst, '[')
		c.space()
		if c.i < len(c.src) && c.src[c.i] == ']' {
			c.i++
			return append(dst, ']'), true
		}
		for n := 0; ; n++ {
			if n > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = c.value(dst, depth+1); !ok {
				return nil, false
			}
			c.space()
			if c.i >= len(c.src) {
				return nil, false
			}
			c.i++
			if c.src[c.i-1] == ']' {
				return append(dst, ']'), true
			}
		}
	case b == '"':
		k0, k1, ok := c.str()
		if !ok {
			return nil, false
		}
		return append(dst, c.src[k0-1:k1+1]...), true
	default: // a number, true, false or null: written as it is (UseNumber)
		s := c.i
		c.literal()
		return append(dst, c.src[s:c.i]...), true
	}
}

// literal moves past a number, true, false or null.
func (c *canon) literal() {
	for ; c.i < len(c.src); c.i++ {
		switch c.src[c.i] {
		case ',', ']', '}', ' ', '\t', '\n', '\r':
			return
		}
	}
}

// skip moves past one value; ok is false where str's would be.
func (c *canon) skip() bool {
	nest := 0
	for {
		c.space()
		if c.i >= len(c.src) {
			return false
		}
		switch c.src[c.i] {
		case '{', '[':
			nest++
			c.i++
		case '}', ']':
			nest--
			c.i++
		case ',', ':':
			c.i++
			continue
		case '"':
			if _, _, ok := c.str(); !ok {
				return false
			}
		default:
			c.literal()
		}
		if nest == 0 {
			return true
		}
		if nest > canonDepth {
			return false
		}
	}
}

// str reads a string at c.i, returning its contents' span; ok is false for
// one that encoding/json would write differently.
func (c *canon) str() (int, int, bool) {
	c.i++ // the opening quote
	s := c.i
	for c.i < len(c.src) {
		switch b := c.src[c.i]; {
		case b == '"':
			c.i++
			return s, c.i - 1, true
		case b == '\\' || b < 0x20 || b >= 0x7f || b == '<' || b == '>' || b == '&':
			return 0, 0, false
		}
		c.i++
	}
	return 0, 0, false
}

func (c *canon) object(dst []byte, depth int) ([]byte, bool) {
	c.i++ // {
	var small [16]member
	ms := small[:0]
	for {
		c.space()
		if c.i >= len(c.src) {
			return nil, false
		}
		if c.src[c.i] == '}' {
			c.i++
			break
		}
		if c.src[c.i] == ',' {
			c.i++
			continue
		}
		k0, k1, ok := c.str()
		if !ok {
			return nil, false
		}
		c.space()
		c.i++ // :
		c.space()
		v0 := c.i
		if !c.skip() { // it is written below, in key order
			return nil, false
		}
		ms = append(ms, member{k0, k1, v0, c.i})
	}
	slices.SortFunc(ms, func(a, b member) int { return bytes.Compare(c.src[a.k0:a.k1], c.src[b.k0:b.k1]) })
	dst = append(dst, '{')
	for n, m := range ms {
		if n > 0 {
			if bytes.Equal(c.src[m.k0:m.k1], c.src[ms[n-1].k0:ms[n-1].k1]) {
				return nil, false // a repeated key: encoding/json keeps the last
			}
			dst = append(dst, ',')
		}
		dst = append(dst, c.src[m.k0-1:m.k1+1]...)
		dst = append(dst, ':')
		var ok bool
		end := c.i
		c.i = m.v0
		dst, ok = c.value(dst, depth+1)
		c.i = end
		if !ok {
			return nil, false
		}
	}
	return append(dst, '}'), true
}

// PayloadFingerprint is the fingerprint of a request's whole body as
// sent, v being what body decodes to (a ChargeRequest or a
// RefundRequest; docs/provider-api.md: the fingerprint covers the whole
// payload; draft §2.4): the hex SHA-256 of v's JSON (Fingerprint for a
// charge) when body holds v's fields and nothing else, in any member
// order or whitespace, so that the fingerprints of contract-only bodies
// stay what stored histories and golden files hold; else the hex SHA-256
// of body's canonical form (as BodyDigest), which no such value equals: a
// member outside the contract (metadata), or a contract field left out,
// makes another request. Values compare as canonical JSON: a number as
// written (1500 and 1500.0 differ), a string by its characters (escapes
// do not count). A body that is not JSON is digested as it is.
func PayloadFingerprint(body []byte, v any) string {
	fp, _ := PayloadFingerprintOf(body, v)
	return fp
}

// PayloadFingerprintOf is PayloadFingerprint, and whether body holds v's
// fields and nothing else (contractOnly: then the fingerprint is v's own,
// Fingerprint for a charge), in one pass.
func PayloadFingerprintOf(body []byte, v any) (fp string, contractOnly bool) {
	plain, _ := json.Marshal(v) // a request struct; cannot fail
	if bytes.Equal(body, plain) {
		return hexSum(plain), true // the common case, without canonicalizing
	}
	if !jsonread.Valid(body) {
		return hexSum(body), false
	}
	a, b := canonBufs.Get().(*[]byte), canonBufs.Get().(*[]byte)
	defer canonBufs.Put(a)
	defer canonBufs.Put(b)
	ca, cb := canonicalOf((*a)[:0], body), canonicalOf((*b)[:0], plain)
	if bytes.Equal(ca, cb) {
		return hexSum(plain), true
	}
	return hexSum(ca), false
}

// ExtraMembers is the members of body, a JSON object, that v (what body
// decodes to: a ChargeRequest or a RefundRequest) has no field for, as one
// JSON object with its members in sorted order, their values as sent; nil
// when there are none or body is no JSON object. A repeated member counts
// once, the last, as encoding/json reads it.
func ExtraMembers(body []byte, v any) json.RawMessage {
	var members, known map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil {
		return nil
	}
	plain, _ := json.Marshal(v) // a request struct; cannot fail
	_ = json.Unmarshal(plain, &known)
	for k := range known {
		delete(members, k)
	}
	if len(members) == 0 {
		return nil
	}
	out, _ := json.Marshal(members) // raw values of a parsed object; sorted keys
	return out
}

// canonicalOf appends body's canonical form (valid JSON) to dst: canonical,
// or encoding/json's way when canonical does not rewrite it.
func canonicalOf(dst, body []byte) []byte {
	if c, ok := canonical(dst, body); ok {
		return c
	}
	return append(dst, canonicalSlow(body)...)
}
