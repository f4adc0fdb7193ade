package mutants

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// The mutants of the generator's reach (issue 28): bugs that only a
// compound fault within one call, or a resubmit's body, shows.
func init() {
	register(Mutant{
		Name:        "timeouts-read-as-decline",
		Description: "an SDK answers the third try of a call whose first two went unanswered with a card decline (402) of its own: the attempt is closed Declined while its first try may have charged",
		Invariant:   "409-never-final", MinSteps: 2,
		Class: "no answer at all taken for \"the provider refused\" (a charge that landed after the first try timed out, then an outage: the faults.KindChargedThenUnreachable macro)",
		Client: func(cfg *client.Config) {
			seen := &unansweredTries{n: map[int]int{}}
			cfg.WrapTransport = func(next http.RoundTripper) http.RoundTripper {
				return unansweredAsDecline{next: next, seen: seen}
			}
		},
	})
	register(Mutant{
		Name:        "volatile-body-field",
		Description: "each retry of a charge stamps its try number into the description, so one key carries several bodies: the provider rightly refuses the retry with 422",
		Invariant:   "one-key-per-intent", MinSteps: 2,
		Class: "a volatile field (a timestamp, a try counter) in a resubmitted body (draft §2.5: one key, one request)",
		Client: func(cfg *client.Config) {
			seen := &triesSeen{n: map[triesKey]int{}}
			cfg.WrapTransport = func(next http.RoundTripper) http.RoundTripper {
				return stampTry{next: next, seen: seen}
			}
		},
	})
}

// unansweredTries counts, per operation, the charge tries in a row that
// got no answer.
type unansweredTries struct {
	mu sync.Mutex // guards n
	n  map[int]int
}

// unansweredAsDecline answers a charge try 402 itself, without sending
// it, when the two tries of its call before it got no answer
// (timeouts-read-as-decline).
type unansweredAsDecline struct {
	next http.RoundTripper
	seen *unansweredTries
}

func (u unansweredAsDecline) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/charges" {
		return u.next.RoundTrip(req)
	}
	op := models.OpFrom(req.Context())
	u.seen.mu.Lock()
	given := u.seen.n[op] >= 2
	u.seen.mu.Unlock()
	if given { // two tries unanswered: the SDK answers in the provider's place
		body := `{"error":{"type":"card_error","code":"card_declined","decline_code":"generic_decline","message":"declined"}}`
		return &http.Response{StatusCode: http.StatusPaymentRequired, Status: "402 Payment Required", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
	}
	resp, err := u.next.RoundTrip(req)
	u.seen.mu.Lock()
	defer u.seen.mu.Unlock()
	if err != nil {
		u.seen.n[op]++
	} else {
		u.seen.n[op] = 0
	}
	return resp, err
}

// stampTry writes the try's number into a retried charge's description
// (volatile-body-field).
type stampTry struct {
	next http.RoundTripper
	seen *triesSeen
}

func (s stampTry) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Path != "/v1/charges" || !s.seen.retry(req) || req.Body == nil {
		return s.next.RoundTrip(req)
	}
	raw, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	var cr models.ChargeRequest
	if json.Unmarshal(raw, &cr) == nil {
		s.seen.mu.Lock()
		n := s.seen.n[triesKey{models.OpFrom(req.Context()), req.Method}]
		s.seen.mu.Unlock()
		cr.Description += " (try " + strconv.Itoa(n) + ")"
		raw, _ = json.Marshal(cr) // plain fields
	}
	r := req.Clone(req.Context())
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
	return s.next.RoundTrip(r)
}

func init() {
	register(Mutant{
		Name:        "normalised-key",
		Description: "the key store folds keys to lower case and keeps their first 32 characters: a new intent under a key that differs from a used one only in case, or only in its last characters, gets 422 or the used key's answer",
		Invariant:   "replay-consistent", MinSteps: 3,
		LocalMinimum: "open an order, check it out, and probe a key near its key (3 steps) is minimal; " +
			"a busy UUIDv7 client's two orders and their checkouts (4 steps: the second intent's key differs from the first only in its last characters) is the shape some seeds find first, and the shrinker cannot turn a checkout into a probe",
		Class:    "keys normalised before they are stored (a case-insensitive column, truncation to its width)",
		Provider: func(cfg *provider.Config) { cfg.Planted.NormalisedKey = true },
	})
	register(Mutant{
		Name:        "abandon-by-creation",
		Description: "reconciliation measures an attempt's age from its creation and abandons it on an empty lookup while a resend of its key is still being processed: the resend's charge lands on an abandoned attempt",
		Invariant:   "books-balance", MinSteps: 3,
		Class:  "reconciliation overlapping a resend in flight (an attempt abandoned on its first empty lookup)",
		Client: func(cfg *client.Config) { cfg.Planted.AbandonByCreation = true },
	})
	register(Mutant{
		Name: "abandon-before-lookup-lag",
		Description: "reconciliation trusts its first empty lookup: it abandons an open attempt as soon as it is old enough to ask about (2 min after its last send), " +
			"a horizon shorter than the provider's lookup lag (up to 20 min): a charge that landed shows in the lookup only after its attempt was abandoned",
		Invariant: "books-balance", MinSteps: 2,
		Class: "an eventually consistent lookup read as final (faults.KindLookupLag: a client's abandon horizon must exceed the provider's lookup lag)",
		// AbandonAfter at MinAge: correct against a provider whose lookup
		// lists a charge once it is made (a charge lands within 26 s of
		// its last send), wrong against one that lags.
		Client: func(cfg *client.Config) { cfg.AbandonAfter = client.DefaultMinAge },
	})
}
