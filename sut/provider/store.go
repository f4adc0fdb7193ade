package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"

	"github.com/idemcheck/idemcheck/models"
)

// Store is a durable idempotency store and ledger for the reference
// provider (Config.Store), as seed article 004 builds one on Redis: the key
// is taken with an in-flight marker that has a lease of its own, the full
// response (status, Content-Type, body) replaces it for the retention
// window, and the charges live beside it so that they outlive a provider
// restart. sut/provider/redisstore is the implementation. Keys reach it
// already scoped per account (AccountScope); a Store never sees request
// credentials. Implementations must be safe for concurrent use by several
// Provider values (instances of one provider) at once.
type Store interface {
	// Take decides what to do with a request under key whose body has
	// fingerprint: TakeProcess (the key is now held by the returned Taken
	// until its lease ends), TakeMismatch, TakeInFlight or TakeReplay
	// (Taken.Stored is the stored response). An error means the store
	// could not be asked: the provider processes nothing (503).
	Take(ctx context.Context, key, fingerprint string) (Taken, error)
	// Finish stores r as key's response for the retention window,
	// replacing t's in-flight marker.
	Finish(ctx context.Context, t Taken, r Stored) error
	// Release frees t's in-flight marker when nothing was stored (the
	// request failed before its result), if t still holds it.
	Release(ctx context.Context, t Taken) error
	// AddCharge records ch, made by account (AccountScope), in the ledger
	// and returns it with its id (ch_%06d, in creation order across every
	// provider over the store); the whole charge is refundable.
	AddCharge(ctx context.Context, account string, ch models.Charge) (models.Charge, error)
	// CommitCharge records ch, made by account, in the ledger and stores
	// its 201 (the charge's JSON, numbered by the store) as t's key's
	// response for the retention window, in one atomic step fenced by t's
	// in-flight marker. Seed article 004 runs these as two steps
	// ("operasyonu işle, sonucu key ile birlikte kaydet"): a provider
	// killed, or a store reply lost, between them left a charge whose key
	// was processed again once the lease ended. It answers CommitStored
	// with the response; CommitStored with the stored response when the
	// key already holds this request's answer (a commit run again after
	// its reply was lost) or another request's answer to the same body (a
	// replay); CommitFenced, charging nothing, when another request holds
	// the key or answered another body under it (t's lease ran out);
	// CommitUnstored when t holds no marker (Token ""): the charge is in
	// the ledger and Finish stores the response.
	CommitCharge(ctx context.Context, t Taken, account string, ch models.Charge) (Stored, CommitVerdict, error)
	// CommitDecline numbers a processed decline and stores d, its 402, as
	// t's key's response in one step, fenced as CommitCharge is; d's body
	// names the decline as dc_000000, which becomes its number (dc_%06d):
	// a decline whose answer was lost is replayed, never declined again
	// under another id.
	CommitDecline(ctx context.Context, t Taken, d Stored) (Stored, CommitVerdict, error)
	// CommitRefund is AddRefund of re and its answer stored under t's key
	// in one step, fenced as CommitCharge is: 201 with the refund (re_%06d)
	// when it is made, else noCharge (the account made no such charge) or
	// tooLarge (more than is left of it), stored as given.
	CommitRefund(ctx context.Context, t Taken, account string, re models.Refund, noCharge, tooLarge Stored) (Stored, CommitVerdict, error)
	// NextDecline numbers a processed decline (1, 2, …).
	NextDecline(ctx context.Context) (int, error)
	// Charges is the whole ledger in creation order.
	Charges(ctx context.Context) ([]models.Charge, error)
	// AccountCharges is the charges account made, in creation order (draft
	// §5: a lookup answers the asking account only).
	AccountCharges(ctx context.Context, account string) ([]models.Charge, error)
	// AddRefund refunds re.Amount of charge re.Charge for account, in one
	// atomic step across every provider over the store: RefundNoCharge when
	// account made no such charge, RefundTooLarge when the amount is more
	// than what is left of it (both refund nothing), else RefundMade and re
	// with its id (re_%06d, in creation order).
	AddRefund(ctx context.Context, account string, re models.Refund) (models.Refund, RefundVerdict, error)
	// Refunds is every refund in creation order; AccountRefunds those
	// account made.
	Refunds(ctx context.Context) ([]models.Refund, error)
	AccountRefunds(ctx context.Context, account string) ([]models.Refund, error)
}

// TakeVerdict is what a Store decides for an incoming keyed request.
type TakeVerdict int

// The verdicts of Store.Take.
const (
	TakeProcess  TakeVerdict = iota // the key was free and is now held: process the request
	TakeMismatch                    // 422: the key belongs to another request body
	TakeInFlight                    // 409: another request holds the key
	TakeReplay                      // the key completed: answer Taken.Stored
)

// CommitVerdict is what Store.CommitCharge did.
type CommitVerdict int

// The verdicts of Store.CommitCharge.
const (
	CommitUnstored CommitVerdict = iota // in the ledger; the key's response is not stored yet (Finish)
	CommitStored                        // in the ledger and the key's response stored, in one step
	CommitFenced                        // nothing charged: another request holds the key, or answered another body under it (409)
)

// RefundVerdict is what Store.AddRefund did.
type RefundVerdict int

// The verdicts of Store.AddRefund.
const (
	RefundMade     RefundVerdict = iota // 201: refunded
	RefundNoCharge                      // 404: the account has no such charge
	RefundTooLarge                      // 402: more than is left of the charge
)

// Taken is a Store's answer to Take.
type Taken struct {
	Verdict TakeVerdict
	// Key is the scoped key asked about, and Fingerprint the request's.
	Key, Fingerprint string
	// Token identifies the in-flight marker this request holds (for
	// Release); "" when it holds none.
	Token string
	// Stored is the stored response, for TakeReplay.
	Stored Stored
}

// Stored is a response kept for replay: the status, the headers worth
// replaying (Content-Type) and the exact body bytes. It holds nothing of
// the request: no credentials.
type Stored struct {
	Status      int    `json:"status"`
	ContentType string `json:"content_type"`
	Body        []byte `json:"body"`
}

// AccountScope is the account part of a stored key: the first 16 hex
// digits of the SHA-256 of the request's Authorization header ("anonymous"
// without one), so that two accounts' equal keys never meet (draft §2:
// keys are unique per client) while the credential itself is never stored.
func AccountScope(r *http.Request) string {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return "anonymous"
	}
	sum := sha256.Sum256([]byte(auth))
	return hex.EncodeToString(sum[:8])
}

// storeUnavailable answers 503 when the store cannot be asked: nothing was
// processed, so the client may retry with the same key.
func storeUnavailable(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	writeProblem(w, http.StatusServiceUnavailable, "the idempotency store is unavailable; nothing was processed, retry with the same key")
}

// serveStored answers a keyed request over Config.Store, for either
// endpoint: key is already scoped (account, and endpoint: storeKey), run
// makes the response once the key is held. A request whose client is gone
// before its key is taken (r's context done: the connection closed while
// it queued for the store) is not run; once the key is held, processing
// runs to the end regardless of the client, as in memory.
func (p *Provider) serveStored(w http.ResponseWriter, r *http.Request, key, fingerprint string, run storedRun) {
	ctx := r.Context()
	if ctx.Err() != nil {
		return // the client gave up while the request queued: never run it
	}
	t, err := p.store.Take(ctx, key, fingerprint)
	if err != nil {
		storeUnavailable(w)
		return
	}
	if ctx.Err() != nil && t.Verdict == TakeProcess {
		_ = p.store.Release(context.WithoutCancel(ctx), t) // its client gave up while it waited for the store
		return
	}
	p.answer(w, t.Verdict, t.Stored, func() { p.processStored(w, r, t, run) })
}

// storeKey is the key a Store is asked about: the account's (AccountScope)
// key for /v1/charges, as it always was, and under "refunds/" for
// /v1/refunds, so that one key on the two endpoints is two keys (invariant
// key-scoped-per-endpoint; an account scope never starts with "refunds/").
func storeKey(r *http.Request, endpoint, key string) string {
	scoped := AccountScope(r) + ":" + key
	if endpoint == models.RefundsPath {
		return "refunds/" + scoped
	}
	return scoped
}

// storedRun is the processing of a request whose key t holds, over a
// Store: its response and whether the Store already stored it under the
// key (CommitVerdict).
type storedRun func(ctx context.Context, t Taken) (Stored, CommitVerdict, error)

// processStored runs a request whose key t holds: BeforeCommit, then run
// (the charge, decline or refund in the ledger), then the response stored
// under the key unless run stored it (a charge, decline or refund:
// Store.CommitCharge, CommitDecline, CommitRefund: the ledger and the
// response in one step). When the ledger cannot be written
// nothing was done: the key is released and the answer is 503. A charge
// fenced out (t's lease ran out and another request took the key) charged
// nothing and is answered 409 with Retry-After.
func (p *Provider) processStored(w http.ResponseWriter, r *http.Request, t Taken, run storedRun) {
	ctx := context.WithoutCancel(r.Context())
	done := false
	defer func() {
		if !done {
			_ = p.store.Release(ctx, t)
		}
	}()
	if p.beforeCommit != nil {
		p.beforeCommit(r)
	}
	res, v, err := run(ctx, t)
	if err != nil {
		storeUnavailable(w)
		return
	}
	done = true
	switch {
	case v == CommitFenced:
		writeInFlight(w, true)
		return
	case v == CommitUnstored && t.Key != "":
		res.ContentType = mediaTypeOf(res.Status)
		_ = p.store.Finish(ctx, t, res)
	}
	writeRaw(w, res.Status, res.Body)
}

// chargeStored is the charge or decline of req in the Store's ledger, as
// account's, committed with its key's response: 201 with the charge
// (Store.CommitCharge), or 402 with a numbered decline (CommitDecline).
func (p *Provider) chargeStored(account string, req models.ChargeRequest) storedRun {
	return func(ctx context.Context, t Taken) (Stored, CommitVerdict, error) {
		p.slowDown(req.Source)
		if req.Source == tokDeclined {
			d := Stored{Status: http.StatusPaymentRequired, ContentType: mediaTypeOf(http.StatusPaymentRequired), Body: mustJSON(p.decline(0))}
			return p.store.CommitDecline(ctx, t, d)
		}
		return p.store.CommitCharge(ctx, t, account, models.Charge{
			Amount: req.Amount, Currency: req.Currency, Status: "succeeded",
			MerchantReference: req.MerchantReference, Created: p.now(),
		})
	}
}

// chargesStored is Charges over Config.Store: nil when the ledger cannot be
// read (the Store's own Charges says why).
func (p *Provider) chargesStored() []models.Charge {
	cs, err := p.store.Charges(context.Background())
	if err != nil {
		return nil
	}
	return cs
}

// ChargeID is the id the n-th charge of a ledger gets (from 1): ch_%06d,
// the in-memory provider's numbering, for Store implementations.
func ChargeID(n int64) string { return fmt.Sprintf("ch_%06d", n) }

// RefundID is the id the n-th refund of a ledger gets (from 1): re_%06d,
// the in-memory provider's numbering, for Store implementations.
func RefundID(n int64) string { return fmt.Sprintf("re_%06d", n) }
