package machine

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/backend"
)

// The probe kinds that send one logical request in another shape, as a
// client library or a proxy may produce it (issue 10, item 1), and the
// one that sends it as another merchant (item 2). Under one key each shape
// is the request the client sent: the same answer or a refusal, never a
// second charge, never a 422 (draft §2.4: the fingerprint is over the
// payload's content). The header-name case is left to the certification:
// in process there is no wire to carry a header name as it was written.
const (
	shapeTrailingSlash = check.ProbeTrailingSlash
	shapeQuery         = check.ProbeQuery
	shapeReordered     = check.ProbeReordered
	shapeWhitespace    = check.ProbeWhitespace
	kindOtherAccount   = check.ProbeOtherAccount
)

// probeShape is how a probe's request departs from the client's own: a
// path suffix and query, a raw body in place of the encoded one, and an
// Authorization header. The zero value is the client's shape.
type probeShape struct {
	suffix string // appended to /v1/charges: "/" or "?utm_source=idemcheck"
	raw    []byte // the body bytes to send, nil: json.Marshal of the body
	auth   string // the Authorization header, "": as the client's config has it
}

// shapeOf is the shape probe kind sends plain in, plain being the body's
// JSON as the client's own shape sends it (probeBody.encode).
func shapeOf(kind string, plain []byte) probeShape {
	switch kind {
	case shapeTrailingSlash:
		return probeShape{suffix: "/"}
	case shapeQuery:
		return probeShape{suffix: "?utm_source=idemcheck"}
	case shapeReordered:
		return probeShape{raw: reversedJSON(plain)}
	case shapeWhitespace:
		var b bytes.Buffer
		_ = json.Indent(&b, plain, " ", "\t") // valid JSON: what json.MarshalIndent writes
		return probeShape{raw: append(append([]byte("\n "), b.Bytes()...), " \r\n"...)}
	case kindOtherAccount:
		return probeShape{auth: backend.MerchantB}
	}
	return probeShape{}
}

// reversedJSON is the JSON object b with its members in reverse order:
// the same fields and values, other bytes.
func reversedJSON(b []byte) []byte {
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(b, &fields)
	var order []string
	dec := json.NewDecoder(strings.NewReader(string(b)))
	_, _ = dec.Token() // {
	for dec.More() {
		k, _ := dec.Token()
		var skip json.RawMessage
		_ = dec.Decode(&skip)
		order = append(order, k.(string))
	}
	var out strings.Builder
	out.WriteByte('{')
	for i := len(order) - 1; i >= 0; i-- {
		k, _ := json.Marshal(order[i])
		out.Write(k)
		out.WriteByte(':')
		out.Write(fields[order[i]])
		if i > 0 {
			out.WriteByte(',')
		}
	}
	out.WriteByte('}')
	return []byte(out.String())
}

// probeKindsFor is probeKinds without kindOtherAccount when the backend
// cannot serve a second merchant, with the near keys in process, and
// stripeProbeKinds in the stripe dialect.
func (w *World) probeKindsFor() []string {
	if w.stripe {
		return stripeProbeKinds
	}
	var out []string
	if _, ok := w.prov.(backend.Accounts); ok {
		out = probeKinds
	} else {
		for _, k := range probeKinds {
			if k != kindOtherAccount {
				out = append(out, k)
			}
		}
	}
	if !w.real { // the near keys, in process only (probe_nearkey.go)
		out = append(out[:len(out):len(out)], nearKinds...)
	}
	return out
}

// asOtherAccount reports whether exchange e was sent by a probe as
// merchant B; probe shapes are recorded as their operation's Detail.
func asOtherAccount(h models.Snapshot, e models.Exchange) bool {
	return check.ProbeKind(h, e) == kindOtherAccount
}
