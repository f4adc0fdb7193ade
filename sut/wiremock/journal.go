package wiremock

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// adminClient bounds every admin call the package makes itself.
var adminClient = &http.Client{Timeout: 30 * time.Second}

// ScenarioStates returns every scenario's current state by name
// (GET /__admin/scenarios).
func (s *Server) ScenarioStates() (map[string]string, error) {
	var body struct {
		Scenarios []struct {
			Name  string `json:"name"`
			State string `json:"state"`
		} `json:"scenarios"`
	}
	if err := s.getJSON("/__admin/scenarios", &body); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(body.Scenarios))
	for _, sc := range body.Scenarios {
		out[sc.Name] = sc.State
	}
	return out, nil
}

// Entry is one request in WireMock's journal: what actually crossed the
// network, as WireMock received it, and what WireMock answered.
type Entry struct {
	// Exchange is the harness's exchange id (ExchangeHeader), 0 if absent.
	Exchange int
	Method   string
	URL      string
	// KeyHeader is the Idempotency-Key header exactly as received; HasKey
	// says whether there was one.
	KeyHeader string
	HasKey    bool
	Body      string
	// Status is WireMock's answer (0 when a fault cut it); Replayed is its
	// Idempotent-Replayed header.
	Status   int
	Replayed bool
	// LoggedAt is when WireMock received it (millisecond resolution).
	LoggedAt time.Time
}

// Journal returns every request in WireMock's journal, oldest first
// (GET /__admin/requests, through go-wiremock's GetAllRequests).
func (s *Server) Journal() ([]Entry, error) {
	all, err := s.Admin.GetAllRequests()
	if err != nil {
		return nil, fmt.Errorf("wiremock: journal: %w", err)
	}
	out := make([]Entry, 0, len(all.Requests))
	// WireMock lists the newest first.
	for i := len(all.Requests) - 1; i >= 0; i-- {
		r := all.Requests[i]
		e := Entry{Method: r.Request.Method, URL: r.Request.URL, Body: r.Request.Body,
			Status: int(r.Response.Status), LoggedAt: time.UnixMilli(r.Request.LoggedDate)}
		for k, v := range r.Request.Headers {
			switch {
			case strings.EqualFold(k, "Idempotency-Key"):
				e.KeyHeader, e.HasKey = v, true
			case strings.EqualFold(k, ExchangeHeader):
				e.Exchange, _ = strconv.Atoi(v)
			}
		}
		for k, v := range r.Response.Headers {
			if strings.EqualFold(k, "Idempotent-Replayed") && v == "true" {
				e.Replayed = true
			}
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].LoggedAt.Before(out[j].LoggedAt) })
	return out, nil
}

func (s *Server) getJSON(path string, v any) error {
	resp, err := adminClient.Get(s.URL + path)
	if err != nil {
		return fmt.Errorf("wiremock: GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("wiremock: GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// Amend checks the harness's record of each exchange against the journal
// entry WireMock made of it (matched by ExchangeHeader) and takes from the
// journal what crossed the network: the Idempotency-Key header, whether
// there was one, and WireMock's status. It marks those exchanges
// Journaled. An exchange with no entry never reached WireMock (dropped, or
// cut before it was sent) and is left as recorded. The first exchange
// whose key header the two records disagree on is an error: the client's
// own log and the wire must tell one story.
func Amend(exs []models.Exchange, journal []Entry) error {
	byID := make(map[int]Entry, len(journal))
	for _, e := range journal {
		if e.Exchange > 0 {
			byID[e.Exchange] = e
		}
	}
	for i := range exs {
		ex := &exs[i]
		e, ok := byID[ex.ID]
		if !ok {
			continue
		}
		if e.HasKey != ex.HasKey || e.KeyHeader != ex.KeyHeader {
			return fmt.Errorf("exchange %d: the client's record says Idempotency-Key %q (present %v), WireMock's journal says %q (present %v)",
				ex.ID, ex.KeyHeader, ex.HasKey, e.KeyHeader, e.HasKey)
		}
		ex.HasKey, ex.KeyHeader = e.HasKey, e.KeyHeader
		ex.Key, _, _ = models.ParseKey(e.KeyHeader)
		ex.Journaled = true
		ex.ProviderDone, ex.ProviderStatus = true, e.Status
	}
	return nil
}
