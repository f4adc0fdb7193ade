package certify

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// The requirement ids of issue 25's classes that no random sequence of
// the property meets: body edge cases (bodies.go), keyed lookups
// (lookups.go), the in-flight hint and a request slower than the lock
// (inflight.go), and headers outside the contract (stray.go).
const (
	ReqUnparsableBody = "unparsable-body-refused"
	ReqLargeBody      = "large-body-fingerprinted-whole"
	ReqBodyLimit      = "body-over-limit-refused"
	ReqKeyedLookup    = "keyed-lookup-not-cached"
	ReqInflightHint   = "inflight-conflict-retry-after"
	ReqStrayHeaders   = "stray-headers-ignored"
	ReqSlowRequest    = "slow-request-charged-once"
)

// edgeRequirements are the requirements of issue 25's classes, in their
// order. Together they send at most 29 requests (20 creates).
func edgeRequirements() []Requirement {
	return []Requirement{
		{ID: ReqUnparsableBody, Level: reports.LevelShould,
			Title:  "A create whose body does not parse, sent under a key, is refused as the client's error (400, not a 5xx) and leaves the key free: the same key with a good body then charges once.",
			Source: "docs/provider-api.md (a bad body is 400, answered before the key store); RFC 9110 §15.5.1; draft-ietf-httpapi-idempotency-key-header §2.6 (a key is held only by a request being processed)", against: draft,
			cost: cost{3, 2}, check: checkUnparsableBody},
		{ID: ReqLargeBody, Level: reports.LevelShould,
			Title:  "The fingerprint covers the whole body: two large creates under one key that differ only in their last bytes are two requests (422), never the first one's stored answer.",
			Source: "draft-ietf-httpapi-idempotency-key-header §2.4 (the fingerprint is over the payload), §2.7 (422 for another payload)", against: draft,
			cost: cost{3, 2}, check: checkLargeBody},
		{ID: ReqBodyLimit, Level: reports.LevelProfile,
			Title:  "A create body of exactly the profile's max_body_bytes is accepted; one longer is refused with 413 and charges nothing, and leaves its key free: the same key with a good body is then processed, not 409 on every try.",
			Source: "profile: max_body_bytes; RFC 9110 §15.5.14 (413 Content Too Large)", against: profile,
			cost: cost{3 + maxTriesCost, 2 + maxTriesCost}, check: checkBodyLimit},
		{ID: ReqKeyedLookup, Level: reports.LevelShould,
			Title:  "A lookup by merchant reference that carries an Idempotency-Key (as SDKs attach one to every call) is answered as one without it, never from an idempotency cache: it lists a charge made since the key's first lookup, and one carrying a create's key is not answered that create's stored response.",
			Source: "RFC 9110 §9.2.1 (GET is safe), §9.2.2; draft-ietf-httpapi-idempotency-key-header §1 (the key makes non-idempotent methods such as POST fault-tolerant); docs/provider-api.md (GET /v1/charges)", against: draft,
			cost: cost{5, 1}, check: checkKeyedLookup},
		{ID: ReqInflightHint, Level: reports.LevelShould,
			Title:  "Every 409 for a request whose key is still being processed carries Retry-After (delay-seconds or an HTTP-date): when to ask again; its own probes and every such 409 of the run before it are judged.",
			Source: "docs/provider-api.md (same key, first request still being processed); seed article 004 (the in-flight lock); RFC 9110 §10.2.3", against: draft,
			cost: cost{4, 4}, check: checkInflightHint},
		{ID: ReqStrayHeaders, Level: reports.LevelShould,
			Title:  "A create carrying client-settable headers outside the contract (X-Request-Id, X-Forwarded-For, Idempotent-Replayed) is processed as one without them: answered in time, replayed to the same request without them, charged once.",
			Source: "RFC 9110 §5.1 (recipients SHOULD ignore unrecognized header fields); docs/provider-api.md (request headers)", against: draft,
			cost: cost{3, 2}, check: checkStrayHeaders},
		{ID: ReqSlowRequest, Level: reports.LevelMust,
			Title:  "A retry that arrives while a slow create (the profile's slow trigger) is still being processed, late in its processing (after any shorter lock lease), charges nothing more: 409 or the replay, and one charge.",
			Source: "draft-ietf-httpapi-idempotency-key-header §2.6 (409 while the first request is processed); seed article 004 (the in-flight lock and its lease); profile: slow_trigger", against: slowTriggerClaim,
			cost: cost{3, 2}, check: checkSlowRequest},
	}
}

// slowTriggerClaim: the draft's rule, judged when the profile publishes
// a slow trigger to provoke it with.
func slowTriggerClaim(p remote.Profile) string {
	if p.SlowTrigger == nil {
		return AgainstProfile
	}
	return AgainstDraft
}

// notInStripe is the NOT JUDGED reason of a requirement whose probe the
// stripe dialect cannot carry: its adapter builds every request anew.
const notInStripe = "the stripe dialect's adapter builds every request anew (form-encoded, its own headers and lookup): the probe never reaches the provider as sent"

// sendWith sends one request through the proxy, asking the meter first
// (posts is 1 for a create): method to path, the Idempotency-Key header
// keyHeader ("" for none), body as it is (nil for none; JSON) and the
// extra headers.
func (r *runner) sendWith(method, path, keyHeader string, body []byte, extra http.Header, posts int) (answer, error) {
	if err := r.afford(1, posts); err != nil {
		return answer{}, err
	}
	ctx, cancel := context.WithTimeout(r.ctx, r.opts.RequestTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.proxy.URL+path, rd)
	if err != nil {
		return answer{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range extra {
		req.Header[k] = vs
	}
	req.Header.Set(faults.OpHeader, strconv.Itoa(r.nextOp()))
	if keyHeader != "" {
		req.Header.Set(models.IdempotencyKeyHeader, keyHeader)
	}
	return r.do(r.client, req)
}

// chargeList is the charges of a lookup's 200 answer; ok is false for
// any other answer, or a body that is not a charge list.
func chargeList(a answer) ([]models.Charge, bool) {
	if a.err != nil || a.status != http.StatusOK {
		return nil, false
	}
	var list models.ChargeList
	if json.Unmarshal(a.body, &list) != nil {
		return nil, false
	}
	return list.Data, true
}
