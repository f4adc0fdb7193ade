package wiremock

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	gowiremock "github.com/wiremock/go-wiremock"
)

// Planted are bugs the Provider can plant in its refunds endpoint, the
// reference provider's mutants of that path (sut/mutants) on WireMock.
type Planted struct {
	// RefundReplaysCharge keeps one scenario per key for both endpoints:
	// a charge's key sent to /v1/refunds continues the charge's scenario
	// and replays the charge's stored response (mutant
	// refund-replays-charge; key-scoped-per-endpoint catches it).
	RefundReplaysCharge bool
	// RefundNotIdempotent ignores the Idempotency-Key on /v1/refunds:
	// every refund request that gets through is processed anew, so a
	// retry after a lost response refunds again (mutant
	// refund-not-idempotent; at-most-one-refund-per-intent catches it).
	RefundNotIdempotent bool
}

// refundBook is the refunds side of the Provider: its own keys (a key is
// scoped to its endpoint, docs/provider-api.md: a charge's key sent to
// /v1/refunds names another key there, in another scenario), and the
// refunds decided, by merchant_reference. Guarded by Provider.mu.
type refundBook struct {
	keys    map[string]*keyState   // by key; with RefundNotIdempotent, by key and exchange id
	refs    map[string][]*keyState // merchant_reference → refund keys sent with it, in order
	decided []*keyState            // keys whose processing decided a refund, in decision order
	next    int                    // refunds decided, for re_%06d
}

// refundScenario is the WireMock scenario of one refund key: apart from
// the charge's scenario of the same key.
func refundScenario(key string) string { return "refund idempotency-key " + key }

// programRefund installs the stub that answers one POST /v1/refunds: 400
// without exactly one key or for a bad body; otherwise the next stub of
// the key's refund scenario (next): 201 with a new refund, 402 when the
// amount is more than what is left of the charge, 404 for a charge the
// provider does not hold, each stored under the key and replayed; 422 for
// another body, 409 in flight. The caller holds p.mu.
func (p *Provider) programRefund(headers []string, body []byte, f faults.Fault, id int) error {
	var rr models.RefundRequest
	err := json.Unmarshal(body, &rr)
	var bad string
	switch {
	case len(headers) != 1:
		bad = "exactly one Idempotency-Key header is required"
	case err != nil:
		bad = "the request body is not a refund request"
	case rr.Charge == "" || rr.Amount <= 0 || rr.MerchantReference == "":
		bad = "charge, a positive amount and merchant_reference are required"
	}
	if bad != "" {
		problem := answer{status: http.StatusBadRequest, body: problemBody(http.StatusBadRequest, bad)}
		return p.stub(exchangeStub(gowiremock.Post, models.RefundsPath, id), p.withFault(problem, f))
	}
	key := keyOf(headers[0])
	fp := string(mustJSON(rr)) // the fields in a fixed order (draft §2.5)
	if ks := p.keys[key]; p.planted.RefundReplaysCharge && ks != nil && ks.processAt >= 0 {
		// Planted: the charge's scenario goes on, as if the endpoint were
		// not part of the key, and its stored answer is replayed.
		a := p.next(ks, ks.fingerprint, f, func() {})
		return p.stub(scenarioRule(models.RefundsPath, scenarioName(key), ks), p.withFault(a, f))
	}
	name, slot := refundScenario(key), key
	if p.planted.RefundNotIdempotent {
		slot = key + "#" + strconv.Itoa(id) // every request a key of its own
		name = refundScenario(slot)
	}
	ks := p.rf.keys[slot]
	if ks == nil {
		ks = &keyState{key: key, ref: rr.MerchantReference, fingerprint: fp, processAt: -1}
		p.rf.keys[slot] = ks
		p.rf.refs[rr.MerchantReference] = append(p.rf.refs[rr.MerchantReference], ks)
	}
	var herr error
	a := p.next(ks, fp, f, func() { herr = p.decideRefund(ks, rr) })
	if herr != nil {
		return herr
	}
	return p.stub(scenarioRule(models.RefundsPath, name, ks), p.withFault(a, f))
}

// decideRefund decides a refund key's one outcome when its processing
// stub is programmed: 404 unless WireMock has served the charge's creating
// stub (the provider holds it), 402 when rr.Amount is more than the
// charge's amount less every refund of it decided so far (served or not:
// a decided refund holds its amount, as the reference's lock does), else
// a new refund, held once WireMock serves this stub.
func (p *Provider) decideRefund(ks *keyState, rr models.RefundRequest) error {
	held, err := p.heldLocked()
	if err != nil {
		return err
	}
	var charge *models.Charge
	for _, c := range held {
		if c.ID == rr.Charge {
			charge = &c
		}
	}
	if charge == nil {
		ks.status = http.StatusNotFound
		ks.body = mustJSON(models.Problem{Title: http.StatusText(http.StatusNotFound), Status: http.StatusNotFound, Detail: "no such charge: " + rr.Charge})
		return nil
	}
	left := charge.Amount
	for _, d := range p.rf.decided {
		if d.refund.Charge == rr.Charge {
			left -= d.refund.Amount
		}
	}
	if rr.Amount > left {
		ks.status, ks.body = http.StatusPaymentRequired, []byte(`{"error":{"type":"invalid_request_error","code":"amount_too_large"}}`)
		return nil
	}
	p.rf.next++
	re := models.Refund{ID: fmt.Sprintf("re_%06d", p.rf.next), Charge: rr.Charge, Amount: rr.Amount,
		Status: "succeeded", MerchantReference: rr.MerchantReference}
	ks.status, ks.body, ks.refund = http.StatusCreated, mustJSON(re), &re
	p.rf.decided = append(p.rf.decided, ks)
	return nil
}

// programFindRefunds installs the answer of one
// GET /v1/refunds?merchant_reference=: 200 with the refunds the provider
// holds for it (heldRefundsLocked), oldest first; 400 without the
// reference.
func (p *Provider) programFindRefunds(ref string, f faults.Fault, id int) error {
	rule := exchangeStub(gowiremock.Get, models.RefundsPath, id)
	if ref == "" {
		problem := answer{status: http.StatusBadRequest, body: problemBody(http.StatusBadRequest, "the merchant_reference query parameter is required")}
		return p.stub(rule, p.withFault(problem, f))
	}
	list := models.RefundList{Data: []models.Refund{}}
	if len(p.rf.refs[ref]) > 0 {
		held, err := p.heldRefundsLocked()
		if err != nil {
			return err
		}
		for _, re := range held {
			if re.MerchantReference == ref {
				list.Data = append(list.Data, re)
			}
		}
	}
	a := answer{status: http.StatusOK, body: mustJSON(list)}
	return p.stub(rule.WithQueryParam("merchant_reference", gowiremock.EqualTo(ref)), p.withFault(a, f))
}

// Refunds is the provider's truth for refunds: every refund whose
// processing stub WireMock has served and whose processing time has
// passed, in creation order.
func (p *Provider) Refunds() ([]models.Refund, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.heldRefundsLocked()
}

// heldRefundsLocked is Refunds, read from WireMock's scenario states; the
// caller holds p.mu.
func (p *Provider) heldRefundsLocked() ([]models.Refund, error) {
	out := []models.Refund{}
	if len(p.rf.decided) == 0 {
		return out, nil
	}
	states, err := p.srv.ScenarioStates()
	if err != nil {
		return nil, err
	}
	now := p.now()
	for slot, ks := range p.rf.keys {
		if ks.refund != nil && stateIndex(states[refundScenario(slot)]) > ks.processAt && !now.Before(ks.doneAt) {
			out = append(out, *ks.refund)
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.Compare(out[i].ID, out[j].ID) < 0 })
	return out, nil
}
