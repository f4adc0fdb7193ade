package certify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

// The refunds endpoint's requirement ids.
const (
	ReqRefundReplay  = "refund-replay-returns-first-response"
	ReqEndpointScope = "key-not-shared-across-endpoints"
)

// refundRequirements are the requirements of POST /v1/refunds, a second
// idempotent endpoint (seed article 004 names /charges and /refunds).
func refundRequirements() []Requirement {
	return []Requirement{
		{ID: ReqRefundReplay, Level: reports.LevelShould, Title: "A refund retried with its key answers the first refund (same refund id) and the provider holds one refund for it.",
			Source: "draft-ietf-httpapi-idempotency-key-header §2.6; docs/provider-api.md (POST /v1/refunds); seed article 004 (/refunds)", against: draft,
			cost: cost{4, 3}, check: checkRefundReplay},
		{ID: ReqEndpointScope, Level: reports.LevelShould, Title: "A charge's key sent to /v1/refunds is refused or kept apart: never the charge's stored response, never 409 (retry later) after the charge finished; a final refusal (400, 422) is allowed.",
			Source: "draft-ietf-httpapi-idempotency-key-header §2 (a key names one request to one resource); seed article 004 (/charges, /refunds)", against: draft,
			cost: cost{2, 2}, check: checkEndpointScope},
	}
}

// postRefund sends one POST /v1/refunds through the proxy under keyHeader.
func (r *runner) postRefund(keyHeader string, body models.RefundRequest) (answer, error) {
	if err := r.afford(1, 1); err != nil {
		return answer{}, err
	}
	b, _ := json.Marshal(body) // a plain struct
	ctx, cancel := context.WithTimeout(r.ctx, r.opts.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.proxy.URL+models.RefundsPath, bytes.NewReader(b))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(faults.OpHeader, strconv.Itoa(r.nextOp()))
	req.Header.Set(models.IdempotencyKeyHeader, keyHeader)
	return r.do(r.client, req)
}

// findRefunds lists the refunds with merchant reference ref through the proxy.
func (r *runner) findRefunds(ref string) ([]models.Refund, error) {
	if err := r.afford(1, 0); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(r.ctx, r.opts.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.proxy.URL+models.RefundsPath+"?merchant_reference="+ref, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set(faults.OpHeader, strconv.Itoa(r.nextOp()))
	a, err := r.do(r.client, req)
	if err != nil {
		return nil, err
	}
	var list models.RefundList
	if a.err != nil || a.status != http.StatusOK || json.Unmarshal(a.body, &list) != nil {
		return nil, lookupError{a}
	}
	return list.Data, nil
}

// noRefunds says why a is no refunds endpoint (404, 405, 501), or "".
func noRefunds(a answer) string {
	switch a.status {
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return fmt.Sprintf("POST %s answered %d: the provider serves no refunds endpoint", models.RefundsPath, a.status)
	}
	return ""
}

func checkRefundReplay(r *runner) (verdict, string, error) {
	ch, why, err := r.created(r.newKeyHeader(), r.charge("refund-replay"))
	if err != nil || why != "" {
		return inc, why, err
	}
	key := r.newKeyHeader()
	body := models.RefundRequest{Charge: ch.chargeID(), Amount: 500, MerchantReference: r.p.Reference("refund")}
	first, err := r.postRefund(key, body)
	if err != nil {
		return inc, "", err
	}
	if why := noRefunds(first); why != "" {
		return reports.NotOffered, why, nil
	}
	if first.err != nil || first.status != http.StatusCreated || !first.ofDialect() {
		return inc, fmt.Sprintf("the first refund answered %s, not 201 with a refund", first.short()), nil
	}
	again, err := r.postRefund(key, body)
	if err != nil {
		return inc, "", err
	}
	if !same(first, again) {
		return fail, fmt.Sprintf("a refund retried with its key and body answered %s, not the first refund %s", again.short(), first.short()), nil
	}
	rs, err := r.findRefunds(body.MerchantReference)
	if err != nil {
		return inc, err.Error(), nil
	}
	if len(rs) != 1 {
		ids := make([]string, len(rs))
		for i, re := range rs {
			ids[i] = re.ID
		}
		return fail, fmt.Sprintf("lookup by merchant reference found %d refunds [%s], want 1", len(rs), strings.Join(ids, " ")), nil
	}
	return pass, "", nil
}

func checkEndpointScope(r *runner) (verdict, string, error) {
	key := r.newKeyHeader()
	ch, why, err := r.created(key, r.charge("endpoint-scope"))
	if err != nil || why != "" {
		return inc, why, err
	}
	var c models.Charge
	_ = json.Unmarshal(ch.body, &c) // created: a charge of the dialect
	// One unit more than the charge: kept apart, the refund is refused
	// and refunds nothing.
	a, err := r.postRefund(key, models.RefundRequest{Charge: c.ID, Amount: c.Amount + 1, MerchantReference: r.p.Reference("scope")})
	if err != nil {
		return inc, "", err
	}
	switch {
	case noRefunds(a) != "":
		return reports.NotOffered, noRefunds(a), nil
	case a.err != nil || a.transient():
		return inc, fmt.Sprintf("the refund under the charge's key answered %s", a.short()), nil
	case same(ch, a) || a.chargeID() == c.ID:
		return fail, fmt.Sprintf("a refund under the key of charge %s was answered with the charge's stored response (%s)", c.ID, a.short()), nil
	case a.status == http.StatusConflict:
		return fail, fmt.Sprintf("a refund under the key of charge %s, which had finished, answered 409 (retry later): the charge's key blocks the refunds endpoint", c.ID), nil
	}
	return pass, "", nil
}
