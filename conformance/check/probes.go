package check

import "github.com/idemcheck/idemcheck/models"

// The probe kinds the invariants tell apart: a probe (an operation of kind
// models.OpProbe) that sends one logical request in another shape, as a
// client library or a proxy may produce it, or as another merchant, records
// its kind as the operation's Detail. Under one key each shape is the
// request the client sent (draft §2.4: the fingerprint is over the
// payload's content); equivalent-requests-agree judges them, and
// key-scoped-per-account judges ProbeOtherAccount. Other probes have an
// empty Detail.
const (
	ProbeTrailingSlash = "same body, trailing slash"
	ProbeQuery         = "same body, unrelated query parameter"
	ProbeReordered     = "same body, fields in another order"
	ProbeWhitespace    = "same body, other whitespace"
	ProbeOtherAccount  = "same body, another account"
)

// The fault kinds (package faults' Kind values) the provider invariants
// read from models.Exchange.Fault; kept here so that this package does not
// depend on the fault layer.
const (
	faultStoreDown     = "store-down"
	faultProviderCrash = "provider-crash"
)

// IsShape reports whether probe kind is one of the request shapes
// equivalent-requests-agree judges.
func IsShape(kind string) bool {
	switch kind {
	case ProbeTrailingSlash, ProbeQuery, ProbeReordered, ProbeWhitespace:
		return true
	}
	return false
}

// ProbeKind is the Detail of e's operation in h when it is a probe, ""
// otherwise.
func ProbeKind(h models.Snapshot, e models.Exchange) string {
	if e.OpID < 1 || e.OpID > len(h.Ops) {
		return ""
	}
	op := h.Ops[e.OpID-1]
	if op.Kind != models.OpProbe {
		return ""
	}
	return op.Detail
}

// asOtherAccount reports whether exchange e was sent by a probe as
// merchant B.
func asOtherAccount(h models.Snapshot, e models.Exchange) bool {
	return ProbeKind(h, e) == ProbeOtherAccount
}
