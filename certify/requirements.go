package certify

import (
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// Requirement is one fixed, documented promise a certification checks.
// The list, in order, is Requirements; docs/profiles.md describes each.
type Requirement struct {
	// ID is the stable name, as in reports.RequirementResult.ID.
	ID string
	// Title is one sentence in plain words.
	Title string
	// Source is where the rule comes from.
	Source string
	// Level is the strength of the rule tested (reports.LevelMust, …):
	// a broken MUST or SHOULD is FAIL, an absent MAY NOT OFFERED, a
	// profile claim judged as stated.
	Level string
	// against says whether the draft or the provider's profile is tested.
	against func(remote.Profile) string
	// cost is the most requests and creates it sends (checked before it
	// starts: a requirement that does not fit sends nothing).
	cost  cost
	check func(*runner) (reports.Verdict, string, error)
	// ownVerdicts: the requirement's 5xx and missing answers are its
	// evidence (a provider that answers 500 while its store is down), not
	// a transient no-verdict (lifecycle.go).
	ownVerdicts bool
}

type cost struct{ requests, posts int }

// What a requirement is tested against.
const (
	AgainstDraft   = "draft"
	AgainstProfile = "profile"
)

func draft(remote.Profile) string   { return AgainstDraft }
func profile(remote.Profile) string { return AgainstProfile }

// The requirement ids.
const (
	ReqReplay       = "replay-returns-first-response"
	ReqMismatch     = "reused-key-other-body-refused"
	ReqMissingKey   = "missing-key-refused"
	ReqConcurrent   = "concurrent-same-key-charges-once"
	ReqLostResponse = "lost-response-settled"
	ReqRetries      = "retries-after-5xx-429-no-duplicate"
	ReqQuotedKey    = "quoted-key-equals-bare-key"
	ReqRetention    = "retention-window-honoured"
	ReqCrossAccount = "key-not-replayed-across-accounts"
	ReqHangUp       = "hang-up-settled"
)

// maxTriesCost is the settle loop's bound used for costs (Options.MaxTries
// default); a larger MaxTries may be refused by the meter mid-requirement,
// which makes it INCONCLUSIVE, never over budget.
const maxTriesCost = 5

// Requirements is the fixed list a certification checks, in order.
func Requirements() []Requirement {
	return append([]Requirement{
		{ID: ReqReplay, Level: reports.LevelShould, Title: "A completed key answers the first response's status and body (same charge id), for a success and, where the profile says errors are stored, for a decline, with the first response's Location, Content-Type and Retry-After; with the replay header the profile publishes, if any.",
			Source: "draft-ietf-httpapi-idempotency-key-header §2.6; docs/provider-api.md (same key, first request finished); profile: replay_header", against: draft,
			cost: cost{4, 4}, check: checkReplay},
		{ID: ReqMismatch, Level: reports.LevelShould, Title: "The same key with another amount, currency or card is refused (422 in PROVIDER_API, the profile's status on the wire) and charges nothing.",
			Source: "draft-ietf-httpapi-idempotency-key-header §2.5, §2.6; profile: statuses.mismatch", against: draft,
			cost: cost{5, 4}, check: checkMismatch},
		{ID: ReqMissingKey, Level: reports.LevelProfile, Title: "A create without an Idempotency-Key is refused with 400 and charges nothing, when the profile says keys are required; when it does not, NOT OFFERED, with how many times a keyless create and its retry charged.",
			Source: "profile: key_required; draft-ietf-httpapi-idempotency-key-header §2.6 (400)", against: profile,
			cost: cost{3, 2}, check: checkMissingKey},
		{ID: ReqConcurrent, Level: reports.LevelMust, Title: "Concurrent requests with one key charge at most once; the others get 409 or the replay (judged by linearizability against models.Spec).",
			Source: "draft-ietf-httpapi-idempotency-key-header §2.6 (409 while in flight); seed article 004 (in-flight lock)", against: draft,
			cost: cost{-1, -1}, check: checkConcurrent},
		{ID: ReqLostResponse, Level: reports.LevelShould, Title: "A response lost after the provider processed the request is settled by a retry with the same key (the same answer) and by lookup by merchant reference (the same charge).",
			Source: "docs/provider-api.md (unknown outcome; GET /v1/charges?merchant_reference=)", against: draft,
			cost: cost{maxTriesCost + 2, maxTriesCost + 1}, check: checkLostResponse},
		{ID: ReqHangUp, Level: reports.LevelMust, Title: "A client that hangs up while the provider processes (its request context cancelled) and retries with the same key is charged once: the response was stored regardless.",
			Source: "draft-ietf-httpapi-idempotency-key-header §2.6; docs/provider-api.md (a client that hangs up)", against: draft,
			cost: cost{maxTriesCost + 2, maxTriesCost + 1}, check: checkHangUp},
		{ID: ReqRetries, Level: reports.LevelShould, Title: "Retries with the same key after 500, 429 (honouring Retry-After) and 503 never charge twice.",
			Source: "docs/provider-api.md (429 Retry-After, 5xx); RFC 9110 §9.2.2", against: draft,
			cost: cost{maxTriesCost + 2, maxTriesCost + 1}, check: checkRetries},
		{ID: ReqQuotedKey, Level: reports.LevelShould, Title: "The quoted (Structured Field String) key is accepted and is the same key as the bare token.",
			Source: "draft-ietf-httpapi-idempotency-key-header §2; RFC 9651 §3.3.3; docs/provider-api.md", against: draft,
			cost: cost{3, 2}, check: checkQuotedKey},
		{ID: ReqShapes, Level: reports.LevelShould, Title: "The same request under one key with a trailing slash, an unrelated query parameter, its JSON fields in another order or other whitespace is answered the first response or refused, never charged again nor refused as another body.",
			Source: "draft-ietf-httpapi-idempotency-key-header §2.4 (the fingerprint is over the payload's content), §2.6", against: draft,
			cost: cost{7, 5}, check: checkShapes},
		{ID: ReqRetention, Level: reports.LevelProfile, Title: "A key is honoured for the published retention window: waited out when the window is short enough; otherwise a key stored at the start of the run is re-sent after the other requirements (FAIL if forgotten, else NOT JUDGED with how long it was kept).",
			Source: "profile: retention_window; draft-ietf-httpapi-idempotency-key-header §2", against: profile,
			cost: cost{2, 2}, check: checkRetention},
		{ID: ReqCrossAccount, Level: reports.LevelShould, Title: "A key used by one account is neither replayed to another nor blocks it (409, 422): the second account gets a charge of its own (needs a second API key).",
			Source: "draft-ietf-httpapi-idempotency-key-header §2 (a key is unique per client), §5 (the cache key includes client-specific attributes)", against: draft,
			cost: cost{2, 2}, check: checkCrossAccount},
	}, append(append(append(append(refundRequirements(), keyRequirements()...), headerRequirements()...), edgeRequirements()...), lifecycleRequirements()...)...) // refunds.go, keyedges.go, checks_errors.go, edges.go, lifecycle.go
}

// costOf is req's cost under opts (the concurrency requirement's depends
// on Options.Concurrency).
func costOf(req Requirement, opts Options) cost {
	if req.cost.requests < 0 {
		return cost{opts.Concurrency + 1, opts.Concurrency}
	}
	return req.cost
}
