package wiremock

import (
	"encoding/json"
	"net/http"
	"regexp"
	"sort"
	"strconv"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	gowiremock "github.com/wiremock/go-wiremock"
)

// answer is one stubbed response before faults: status, JSON body, and
// whether it is a replay (Idempotent-Replayed: true).
type answer struct {
	status   int
	body     []byte
	replayed bool
	header   http.Header
}

// withFault turns a into WireMock's response under fault f. A status fault
// or a reset answers in the provider's place (nothing was processed);
// lose-response, slow-processing and delay keep the answer and break or
// slow its delivery.
func (p *Provider) withFault(a answer, f faults.Fault) gowiremock.Response {
	switch {
	case faults.IsStatus(f.Kind):
		code, h, body := faults.StatusAnswer(f)
		return response(answer{status: code, body: body, header: h})
	case f.Kind == faults.KindReset:
		return gowiremock.NewResponse().WithFault(gowiremock.FaultConnectionResetByPeer)
	case f.Kind == faults.KindLoseResponse:
		wf := p.pick(p.loses)
		p.loses++
		return response(a).WithFault(wf)
	case f.Kind == faults.KindSlowProcessing:
		return response(a).WithFixedDelay(f.Delay)
	case f.Kind == faults.KindDelay:
		return response(a).WithChunkedDribbleDelay(4, f.Delay)
	}
	return response(a)
}

// response is a as a WireMock response: JSON (problem+json for 4xx/5xx
// other than 402), with the replay header when it is one.
func response(a answer) gowiremock.Response {
	r := gowiremock.NewResponse().WithStatus(int64(a.status)).WithBody(string(a.body))
	ct := "application/json"
	if a.status >= 400 && a.status != http.StatusPaymentRequired {
		ct = "application/problem+json"
	}
	r = r.WithHeader("Content-Type", ct)
	for k, vs := range a.header {
		if k != "Content-Type" && len(vs) > 0 {
			r = r.WithHeader(k, vs[0])
		}
	}
	if a.replayed {
		r = r.WithHeader(models.ReplayedHeader, "true")
	}
	return r
}

// stub sends rule with resp to WireMock (POST /__admin/mappings).
func (p *Provider) stub(rule *gowiremock.StubRule, resp gowiremock.Response) error {
	return p.srv.Admin.StubFor(rule.WillReturnResponse(resp))
}

// exchangeStub matches only the request the harness sent to path as
// exchange id.
func exchangeStub(method func(gowiremock.URLMatcher) *gowiremock.StubRule, path string, id int) *gowiremock.StubRule {
	return method(gowiremock.URLPathEqualTo(path)).
		WithHeader(ExchangeHeader, gowiremock.EqualTo(strconv.Itoa(id)))
}

// scenarioRule matches the next POST to path with ks's key in scenario
// name: the stub of state ks.n-1 (next has counted the request), which
// moves the scenario to ks.n.
func scenarioRule(path, name string, ks *keyState) *gowiremock.StubRule {
	return gowiremock.Post(gowiremock.URLPathEqualTo(path)).
		WithHeader(models.IdempotencyKeyHeader, gowiremock.Matching(keyPattern(ks.key))).
		InScenario(name).
		WhenScenarioStateIs(stateName(ks.n - 1)).
		WillSetStateTo(stateName(ks.n))
}

// keyPattern matches the key sent quoted (a Structured Field String,
// escapes and all) or bare: one key either way (docs/provider-api.md), and no
// other key.
func keyPattern(key string) string {
	return `^(?:` + regexp.QuoteMeta(models.FormatKey(key)) + `|` + regexp.QuoteMeta(key) + `)$`
}

// scenarioName is the WireMock scenario of one key.
func scenarioName(key string) string { return "idempotency-key " + key }

// stateName is the scenario state before the n-th request with the key:
// WireMock's own "Started", then "1", "2", ….
func stateName(n int) string {
	if n == 0 {
		return "Started"
	}
	return strconv.Itoa(n)
}

// stateIndex is the number of requests a scenario in state s has served.
func stateIndex(s string) int {
	if s == "" || s == "Started" {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0
	}
	return n
}

func problemBody(status int, title string) []byte {
	return mustJSON(models.Problem{Title: title, Status: status})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("wiremock: " + err.Error())
	}
	return b
}

// sortCharges orders charges by id, which is creation order.
func sortCharges(cs []models.Charge) {
	sort.Slice(cs, func(i, j int) bool { return cs[i].ID < cs[j].ID })
}
