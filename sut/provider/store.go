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
	// AddCharge records ch in the ledger and returns it with its id
	// (ch_%06d, in creation order across every provider over the store).
	AddCharge(ctx context.Context, ch models.Charge) (models.Charge, error)
	// NextDecline numbers a processed decline (1, 2, …).
	NextDecline(ctx context.Context) (int, error)
	// Charges is the whole ledger in creation order.
	Charges(ctx context.Context) ([]models.Charge, error)
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

// createStored is create over Config.Store. A request whose client is gone
// before its key is taken (r's context done: the connection closed while
// it queued for the store) is not run; once the key is held, processing
// runs to the end regardless of the client, as in memory.
func (p *Provider) createStored(w http.ResponseWriter, r *http.Request, key, fingerprint string, req models.ChargeRequest) {
	ctx := r.Context()
	if ctx.Err() != nil {
		return // the client gave up while the request queued: never run it
	}
	t, err := p.store.Take(ctx, AccountScope(r)+":"+key, fingerprint)
	if err != nil {
		storeUnavailable(w)
		return
	}
	if ctx.Err() != nil && t.Verdict == TakeProcess {
		_ = p.store.Release(context.WithoutCancel(ctx), t) // its client gave up while it waited for the store
		return
	}
	switch t.Verdict {
	case TakeMismatch:
		writeMismatch(w)
	case TakeInFlight:
		writeInFlight(w)
	case TakeReplay:
		p.writeReplay(w, t.Stored.Status, t.Stored.ContentType, t.Stored.Body)
	default:
		p.processStored(w, r, t, req)
	}
}

// processStored runs a request whose key t holds: BeforeCommit, then the
// charge or decline in the ledger, then the response stored under the key.
// When the ledger cannot be written nothing was charged: the key is
// released and the answer is 503. When the response cannot be stored the
// charge stands and is answered; the in-flight marker then ends with its
// lease (the window article 004's design leaves open).
func (p *Provider) processStored(w http.ResponseWriter, r *http.Request, t Taken, req models.ChargeRequest) {
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
	var res Stored
	if req.Source == tokDeclined {
		n, err := p.store.NextDecline(ctx)
		if err != nil {
			storeUnavailable(w)
			return
		}
		res = Stored{Status: http.StatusPaymentRequired, Body: mustJSON(p.decline(n))}
	} else {
		ch, err := p.store.AddCharge(ctx, models.Charge{
			Amount: req.Amount, Currency: req.Currency, Status: "succeeded",
			MerchantReference: req.MerchantReference, Created: p.now(),
		})
		if err != nil {
			storeUnavailable(w)
			return
		}
		res = Stored{Status: http.StatusCreated, Body: mustJSON(ch)}
	}
	res.ContentType = "application/json"
	done = true
	if t.Key != "" {
		_ = p.store.Finish(ctx, t, res)
	}
	writeRaw(w, res.Status, res.Body)
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

// findStored is find over Config.Store: 503 when the ledger cannot be read.
func (p *Provider) findStored(w http.ResponseWriter, ref string) {
	cs, err := p.store.Charges(context.Background())
	if err != nil {
		storeUnavailable(w)
		return
	}
	list := models.ChargeList{Data: []models.Charge{}}
	for _, ch := range cs {
		if ch.MerchantReference == ref {
			list.Data = append(list.Data, ch)
		}
	}
	writeRaw(w, http.StatusOK, mustJSON(list))
}

// ChargeID is the id the n-th charge of a ledger gets (from 1): ch_%06d,
// the in-memory provider's numbering, for Store implementations.
func ChargeID(n int64) string { return fmt.Sprintf("ch_%06d", n) }
