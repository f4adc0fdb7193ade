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
// (GET /__admin/requests). It reads the journal itself rather than through
// go-wiremock's GetAllRequests, whose headers are a map of strings: WireMock
// writes a header sent twice as an array, which that type cannot hold.
func (s *Server) Journal() ([]Entry, error) {
	var all struct {
		Requests []struct {
			Request struct {
				URL        string                     `json:"url"`
				Method     string                     `json:"method"`
				Body       string                     `json:"body"`
				LoggedDate int64                      `json:"loggedDate"`
				Headers    map[string]json.RawMessage `json:"headers"`
			} `json:"request"`
			Response struct {
				Status  int                        `json:"status"`
				Headers map[string]json.RawMessage `json:"headers"`
			} `json:"response"`
		} `json:"requests"`
	}
	if err := s.getJSON("/__admin/requests", &all); err != nil {
		return nil, fmt.Errorf("wiremock: journal: %w", err)
	}
	out := make([]Entry, 0, len(all.Requests))
	// WireMock lists the newest first.
	for i := len(all.Requests) - 1; i >= 0; i-- {
		r := all.Requests[i]
		e := Entry{Method: r.Request.Method, URL: r.Request.URL, Body: r.Request.Body,
			Status: r.Response.Status, LoggedAt: time.UnixMilli(r.Request.LoggedDate)}
		for k, raw := range r.Request.Headers {
			v := headerValues(raw)
			switch {
			case strings.EqualFold(k, "Idempotency-Key"):
				e.KeyHeader, e.HasKey = strings.Join(v, ", "), true
			case strings.EqualFold(k, ExchangeHeader) && len(v) > 0:
				e.Exchange, _ = strconv.Atoi(v[0])
			}
		}
		for k, raw := range r.Response.Headers {
			if v := headerValues(raw); strings.EqualFold(k, "Idempotent-Replayed") && len(v) > 0 && v[0] == "true" {
				e.Replayed = true
			}
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].LoggedAt.Before(out[j].LoggedAt) })
	return out, nil
}

// headerValues reads a journal header: a string, or an array of them for a
// header sent more than once.
func headerValues(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(raw, &many)
	return many
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
// cut before it was sent) and is left as recorded.
//
// The two records must tell one story, or Amend fails: a key header they
// disagree on (compared as sent on the wire, where surrounding spaces are
// trimmed; several header lines are joined by ", "), one exchange received
// twice (a resend the client never made, as net/http does on a reused
// connection), or a journal entry for an exchange the history does not
// hold.
func Amend(exs []models.Exchange, journal []Entry) error {
	byID := make(map[int]Entry, len(journal))
	for _, e := range journal {
		if e.Exchange <= 0 {
			continue // sent around the harness's Transport (ids < 0 are the Provider's own)
		}
		if _, dup := byID[e.Exchange]; dup {
			return fmt.Errorf("exchange %d reached WireMock twice: a request was resent below the client", e.Exchange)
		}
		byID[e.Exchange] = e
	}
	known := make(map[int]bool, len(exs))
	for i := range exs {
		ex := &exs[i]
		known[ex.ID] = true
		e, ok := byID[ex.ID]
		if !ok {
			continue
		}
		if e.HasKey != ex.HasKey || e.KeyHeader != wireValue(ex.KeyHeader) {
			return fmt.Errorf("exchange %d: the client's record says Idempotency-Key %q (present %v), WireMock's journal says %q (present %v)",
				ex.ID, ex.KeyHeader, ex.HasKey, e.KeyHeader, e.HasKey)
		}
		ex.HasKey, ex.KeyHeader = e.HasKey, e.KeyHeader
		ex.Key, _, _ = models.ParseKey(e.KeyHeader)
		ex.Journaled = true
		ex.ProviderDone, ex.ProviderStatus = true, e.Status
	}
	for id := range byID {
		if !known[id] {
			return fmt.Errorf("WireMock's journal holds exchange %d, which the client's record does not", id)
		}
	}
	return nil
}

// wireValue is a header value as it crosses the wire: net/http trims
// surrounding spaces and tabs.
func wireValue(v string) string { return strings.Trim(v, " \t") }
