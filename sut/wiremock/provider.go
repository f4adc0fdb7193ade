package wiremock

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	gowiremock "github.com/wiremock/go-wiremock"
)

// ExchangeHeader carries the harness's exchange id on every request the
// Provider forwards, so the request journal can be matched to the history.
const ExchangeHeader = "X-Idemcheck-Exchange"

// WireFaults are WireMock's four native faults. A lose-response fault (the
// provider processed the request, the answer never arrives whole) takes
// them in turn, so a run meets all four.
var WireFaults = []gowiremock.Fault{
	gowiremock.FaultConnectionResetByPeer,
	gowiremock.FaultEmptyResponse,
	gowiremock.FaultMalformedResponseChunk,
	gowiremock.FaultRandomDataThenClose,
}

// Config configures a Provider.
type Config struct {
	// Transport carries requests to WireMock; default a fresh
	// http.Transport without keep-alives (loopback only: the server binds
	// 127.0.0.1). Keep-alives stay off: net/http silently resends a request
	// carrying an Idempotency-Key when a reused connection is cut, which
	// would turn WireMock's reset into a hidden second request.
	Transport http.RoundTripper
	// Now is the provider's clock, which decides when a key stops being in
	// flight; default time.Now. A harness that lets time pass without
	// waiting (faults.OffsetClock) passes its clock, so processing ends
	// when that time has passed.
	Now func() time.Time
	// WireFault, if set, picks WireMock's fault for the n-th lose-response
	// (counted from 0); default WireFaults in turn.
	WireFault func(n int) gowiremock.Fault
	// Planted, if set, plants bugs in the refunds endpoint (refunds.go):
	// the reference's provider mutants of that path, on WireMock.
	Planted Planted
}

// Provider imitates a payment provider that honours Idempotency-Key
// (docs/provider-api.md) with WireMock stubs. It is the wire between the
// harness's fault Transport and the WireMock server: before it forwards a
// request it programs the stub that answers it.
//
// Per idempotency key there is one WireMock scenario; its n-th stub answers
// the n-th request that reaches WireMock with that key, whichever it is,
// and moves the scenario on (InScenario / WhenScenarioStateIs /
// WillSetStateTo). The first request that gets through is processed: 201
// with a new charge, or 402 for tok_chargeDeclined; later ones replay that
// status and body with Idempotent-Replayed: true; another body under the
// key answers 422 and changes nothing; a POST without a key answers 400.
// The key is in flight from its processing request until that request's
// processing time has passed (a slow-processing fault; otherwise at once):
// meanwhile another request with it answers 409 (draft §2.6, "the first
// request is still being processed") and the charge is not yet held. Keys
// are never forgotten.
//
// GET /v1/charges?merchant_reference= answers what the scenarios say:
// the charge, once the stub that created it has been served.
//
// POST /v1/refunds is imitated the same way, in a scenario per refund key
// apart from the charges' (refunds.go): 201 with a refund, 402 for more
// than is left of the charge, 404 for a charge not held, replayed, 422 and
// 409 as for charges; GET /v1/refunds?merchant_reference= and Refunds
// answer the refunds whose stubs have been served.
//
// Faults (faults.NativeFaults): 400, 422, 429 (Retry-After), 500, 503 and
// reset answer without processing; lose-response processes and then fails
// with one of WireMock's four faults; slow-processing processes and
// answers after a fixed delay; delay processes and dribbles the answer in
// chunks. drop-request is left to the Transport (nothing reaches WireMock).
// Fault durations are real time as given: a harness that draws them for a
// 3 s attempt timeout scales them first (conformance does).
// It is safe for concurrent use.
type Provider struct {
	srv     *Server
	rt      http.RoundTripper
	pick    func(int) gowiremock.Fault
	now     func() time.Time
	planted Planted

	mu      sync.Mutex // guards keys, refs, charges, declines, loses, nextID and rf
	keys    map[string]*keyState
	rf      refundBook
	gates   map[string]chan struct{} // per key: a token held while a request with it is at WireMock
	refs    map[string][]string      // merchant_reference → keys sent with it, in order
	charges int
	decl    int
	loses   int
	nextID  int // exchange ids for requests that did not come through a Transport
}

// keyState is what the Provider has programmed for one key.
type keyState struct {
	key, ref    string
	fingerprint string
	n           int // stubs programmed, the scenario's next state index
	processAt   int // index of the stub that processes, -1 before
	// doneAt is when processing ends (on the provider's clock): the processing stub's
	// programming plus its slow-processing delay. Until then the key is in
	// flight: another request with it answers 409 and the charge is not
	// yet held.
	doneAt time.Time
	status int
	body   []byte
	charge *models.Charge // when status is 201
	refund *models.Refund // when status is 201 on the refunds endpoint
}

// NewProvider returns a Provider programming srv. Call Reset before use
// and between runs.
func NewProvider(srv *Server, cfg Config) *Provider {
	p := &Provider{srv: srv, rt: cfg.Transport, pick: cfg.WireFault, now: cfg.Now, planted: cfg.Planted}
	if p.now == nil {
		p.now = time.Now
	}
	if p.rt == nil {
		p.rt = &http.Transport{DisableKeepAlives: true}
	}
	if p.pick == nil {
		p.pick = func(n int) gowiremock.Fault { return WireFaults[n%len(WireFaults)] }
	}
	p.clear()
	return p
}

func (p *Provider) clear() {
	p.keys, p.refs, p.gates = map[string]*keyState{}, map[string][]string{}, map[string]chan struct{}{}
	p.charges, p.decl, p.loses, p.nextID = 0, 0, 0, 0
	p.rf = refundBook{keys: map[string]*keyState{}, refs: map[string][]*keyState{}}
}

// BaseURL is the WireMock server's URL.
func (p *Provider) BaseURL() string { return p.srv.URL }

// Server is the WireMock server this Provider programs.
func (p *Provider) Server() *Server { return p.srv }

// Reset forgets every key and charge and resets the server (stubs, journal,
// scenarios).
func (p *Provider) Reset() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	return p.srv.Reset()
}

// Native reports the kinds this Provider has WireMock apply: all but
// pass, drop-request, and the client's own hang-up and the outage, which
// the fault Transport applies in front of the socket.
func (p *Provider) Native(k faults.Kind) bool {
	switch k {
	case faults.KindPass, faults.KindDropRequest, faults.KindHangUp, faults.KindOutage:
		return false
	}
	return true
}

// RoundTrip programs the stub that answers req, then sends req to WireMock
// with ExchangeHeader set. Requests with one key pass one at a time, from
// programming until WireMock's answer starts (or fails): WireMock does not
// move a scenario atomically under concurrent requests (wiremock issue
// #456: two "first" answers, lost transitions, unmatched requests), so a
// double click reaches it in sequence. A request waiting its turn gives up
// with its context; one whose answer is delayed holds the key until the
// client gives up, after which the key, still in flight, answers 409.
func (p *Provider) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	f, _ := faults.FaultFrom(req.Context())
	id := faults.ExchangeID(req.Context())
	if raw := req.Header.Get(models.IdempotencyKeyHeader); req.Method == http.MethodPost && raw != "" {
		release, err := p.gate(req.Context(), keyOf(raw))
		if err != nil {
			return nil, err
		}
		defer release()
	}
	p.mu.Lock()
	if id == 0 {
		p.nextID++
		id = -p.nextID
	}
	err := p.program(req, body, f, id)
	p.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("wiremock: programming the stub: %w", err)
	}
	out, err := http.NewRequestWithContext(req.Context(), req.Method, p.srv.URL+req.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	out.Header = req.Header.Clone()
	out.Header.Set(ExchangeHeader, strconv.Itoa(id))
	return p.rt.RoundTrip(out)
}

// program installs the stub for req; the caller holds p.mu.
func (p *Provider) program(req *http.Request, body []byte, f faults.Fault, id int) error {
	switch {
	case req.Method == http.MethodPost && req.URL.Path == "/v1/charges":
		raw, has := req.Header[models.IdempotencyKeyHeader]
		if !has || len(raw) == 0 {
			problem := answer{status: http.StatusBadRequest, body: problemBody(http.StatusBadRequest, "Idempotency-Key is required")}
			return p.stub(exchangeStub(gowiremock.Post, "/v1/charges", id), p.withFault(problem, f))
		}
		return p.programPost(raw[0], body, f, id)
	case req.Method == http.MethodGet && req.URL.Path == "/v1/charges":
		return p.programFind(req.URL.Query().Get("merchant_reference"), f, id)
	case req.Method == http.MethodPost && req.URL.Path == models.RefundsPath:
		return p.programRefund(req.Header.Values(models.IdempotencyKeyHeader), body, f, id)
	case req.Method == http.MethodGet && req.URL.Path == models.RefundsPath:
		return p.programFindRefunds(req.URL.Query().Get("merchant_reference"), f, id)
	}
	return nil // WireMock answers 404 for what is not stubbed
}

// programPost installs the n-th stub of the key's scenario.
func (p *Provider) programPost(header string, body []byte, f faults.Fault, id int) error {
	key := keyOf(header)
	var cr models.ChargeRequest
	_ = json.Unmarshal(body, &cr)
	fp := models.PayloadFingerprint(body, cr)
	ks := p.keys[key]
	if ks == nil {
		ks = &keyState{key: key, ref: cr.MerchantReference, fingerprint: fp, processAt: -1}
		p.keys[key] = ks
		if cr.MerchantReference != "" {
			p.refs[cr.MerchantReference] = append(p.refs[cr.MerchantReference], key)
		}
	}
	a := p.next(ks, fp, f, func() { p.process(ks, cr) })
	return p.stub(scenarioRule("/v1/charges", scenarioName(key), ks), p.withFault(a, f))
}

// next decides the answer of the next request with ks's key and body
// fingerprint fp under fault f, and counts it (ks.n): 422 for another
// body; under a fault before processing, the fault's own answer; the
// first request that gets through runs process and answers its outcome;
// later ones answer 409 while it is in flight, then replay it. The caller
// holds p.mu.
func (p *Provider) next(ks *keyState, fp string, f faults.Fault, process func()) answer {
	var a answer
	processes := f.Kind == "" || f.Kind == faults.KindPass || f.Kind == faults.KindLoseResponse ||
		f.Kind == faults.KindSlowProcessing || f.Kind == faults.KindDelay
	switch {
	case ks.fingerprint != fp:
		a = answer{status: http.StatusUnprocessableEntity, body: problemBody(http.StatusUnprocessableEntity, "Idempotency-Key reused with another request body")}
	case !processes:
		// a fault before processing: the provider answers without charging
	case ks.processAt < 0:
		process()
		ks.processAt, ks.doneAt = ks.n, p.now()
		if f.Kind == faults.KindSlowProcessing {
			ks.doneAt = ks.doneAt.Add(f.Delay)
		}
		a = answer{status: ks.status, body: ks.body}
	case p.now().Before(ks.doneAt):
		a = answer{status: http.StatusConflict, body: problemBody(http.StatusConflict, "a request with this Idempotency-Key is still being processed")}
	default:
		a = answer{status: ks.status, body: ks.body, replayed: true}
	}
	ks.n++
	return a
}

// process decides the key's one outcome: a charge, or a decline.
func (p *Provider) process(ks *keyState, cr models.ChargeRequest) {
	if cr.Source == models.DeclinedCard {
		p.decl++
		ks.status, ks.body = http.StatusPaymentRequired, mustJSON(models.Decline(p.decl))
		return
	}
	p.charges++
	c := models.Charge{ID: fmt.Sprintf("ch_%06d", p.charges), Amount: cr.Amount, Currency: cr.Currency,
		Status: "succeeded", MerchantReference: cr.MerchantReference}
	ks.status, ks.body, ks.charge = http.StatusCreated, mustJSON(c), &c
}

// programFind installs the answer of one GET /v1/charges?merchant_reference=.
func (p *Provider) programFind(ref string, f faults.Fault, id int) error {
	charges := []models.Charge{}
	if keys := p.refs[ref]; len(keys) > 0 {
		held, err := p.heldLocked()
		if err != nil {
			return err
		}
		for _, key := range keys {
			if c, ok := held[key]; ok {
				charges = append(charges, c)
			}
		}
		sortCharges(charges)
	}
	a := answer{status: http.StatusOK, body: mustJSON(map[string][]models.Charge{"data": charges})}
	rule := exchangeStub(gowiremock.Get, "/v1/charges", id).WithQueryParam("merchant_reference", gowiremock.EqualTo(ref))
	return p.stub(rule, p.withFault(a, f))
}

// Charges is the provider's truth: every charge whose creating stub
// WireMock has served and whose processing time has passed, in creation
// order.
func (p *Provider) Charges() ([]models.Charge, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	held, err := p.heldLocked()
	if err != nil {
		return nil, err
	}
	out := make([]models.Charge, 0, len(held))
	for _, c := range held {
		out = append(out, c)
	}
	sortCharges(out)
	return out, nil
}

// heldLocked maps key → charge for every key whose processing stub has
// been served, read from WireMock's scenario states; the caller holds p.mu.
func (p *Provider) heldLocked() (map[string]models.Charge, error) {
	held := map[string]models.Charge{}
	var pending bool
	for _, ks := range p.keys {
		if ks.charge != nil {
			pending = true
			break
		}
	}
	if !pending {
		return held, nil
	}
	now := p.now()
	states, err := p.srv.ScenarioStates()
	if err != nil {
		return nil, err
	}
	for key, ks := range p.keys {
		if ks.charge == nil {
			continue
		}
		if stateIndex(states[scenarioName(key)]) > ks.processAt && !now.Before(ks.doneAt) {
			held[key] = *ks.charge
		}
	}
	return held, nil
}

// keyOf is the key an Idempotency-Key header names: the parsed Structured
// Field String or bare token, or the raw value when it parses as neither
// (a malformed key is still a key to WireMock).
func keyOf(header string) string {
	if key, _, ok := models.ParseKey(header); ok {
		return key
	}
	return header
}

// gate waits for key's turn at WireMock, or for ctx to end; release gives
// the turn back.
func (p *Provider) gate(ctx context.Context, key string) (release func(), err error) {
	p.mu.Lock()
	g, ok := p.gates[key]
	if !ok {
		g = make(chan struct{}, 1)
		p.gates[key] = g
	}
	p.mu.Unlock()
	select {
	case g <- struct{}{}:
		return func() { <-g }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
