// Package service drives a checkout running as its own process, in any
// language, through the small HTTP contract of docs/client-api.md: Dial
// returns a checkout.Client whose calls are requests to the service, so
// that conformance.CheckService certifies it like a Go client. Every call
// is bounded in time (CallTimeout) and in the bytes it reads (MaxBody); a
// service that hangs, drops the connection or answers outside the
// contract is reported in checkout.Result.Err (or Reconcile's error) with
// a fixed message, which the harness judges as client-api.
package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
)

// The headers of docs/client-api.md.
const (
	// NowHeader carries the run's clock (RFC 3339 with nanoseconds) on
	// every request to the service: the ages it judges use it.
	NowHeader = "Idemcheck-Now"
	// OpHeader carries the harness's operation id; the service sends it on
	// each provider request the call makes (faults.OpHeader).
	OpHeader = faults.OpHeader
)

// Defaults of Config.
const (
	DefaultCallTimeout = 5 * time.Second
	DefaultMaxBody     = 64 << 10
)

// Config says where the service is and how long to wait for it.
type Config struct {
	// BaseURL is the service's base URL (loopback).
	BaseURL string
	// Now is the run's clock, sent as NowHeader.
	Now func() time.Time
	// CallTimeout bounds each request to the service, answer included;
	// default DefaultCallTimeout (5 s).
	CallTimeout time.Duration
	// MaxBody bounds each answer's body, in bytes; default 64 KiB.
	MaxBody int64
}

// Dial asks the service for its capabilities (GET /) and returns it as a
// checkout.Client with those of checkout.Restarter ("restart") and
// checkout.Viewer ("state") it offers; it is also a checkout.Placer and
// reads orders (Order). Close does nothing: the process is the Launcher's.
func Dial(ctx context.Context, cfg Config) (checkout.Client, error) {
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	s := &Service{cfg: cfg, http: &http.Client{
		Transport: &http.Transport{DisableKeepAlives: true, ForceAttemptHTTP2: false},
		Timeout:   cfg.CallTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}}
	var caps struct {
		Capabilities []string `json:"capabilities"`
	}
	status, err := s.call(ctx, "GET", "/", nil, &caps)
	switch {
	case err != nil:
		return nil, fmt.Errorf("service: GET / %w", err)
	case status == http.StatusNotFound:
	case status != http.StatusOK:
		return nil, fmt.Errorf("service: GET / answered %d, want 200 or 404", status)
	}
	has := map[string]bool{}
	for _, c := range caps.Capabilities {
		has[c] = true
	}
	switch {
	case has["restart"] && has["state"]:
		return full{s}, nil
	case has["restart"]:
		return restarting{s}, nil
	case has["state"]:
		return viewing{s}, nil
	}
	return s, nil
}

// Service is a checkout service as a checkout.Client. It is safe for
// concurrent use.
type Service struct {
	cfg  Config
	http *http.Client
}

type (
	full       struct{ *Service }
	restarting struct{ *Service }
	viewing    struct{ *Service }
)

func (f full) Restart(ctx context.Context) error                  { return f.restart(ctx) }
func (f full) View(ctx context.Context) (checkout.View, error)    { return f.view(ctx) }
func (r restarting) Restart(ctx context.Context) error            { return r.restart(ctx) }
func (v viewing) View(ctx context.Context) (checkout.View, error) { return v.view(ctx) }

// checkoutStatuses maps the checkout endpoint's statuses to outcomes.
var checkoutStatuses = map[int]checkout.Outcome{
	http.StatusOK: checkout.Paid, http.StatusAccepted: checkout.Pending, http.StatusConflict: checkout.Pending,
	http.StatusPaymentRequired: checkout.Declined, http.StatusServiceUnavailable: checkout.Failed,
}

// Checkout implements checkout.Client: POST /orders/{id}/checkout.
func (s *Service) Checkout(ctx context.Context, o checkout.Order, token string) checkout.Result {
	var body struct {
		ChargeID string `json:"charge_id"`
	}
	status, err := s.call(ctx, "POST", fmt.Sprintf("/orders/%d/checkout", o.ID), map[string]string{"card_token": token}, &body)
	if err != nil {
		return checkout.Result{Outcome: checkout.Failed, Err: fmt.Errorf("a checkout %w", err)}
	}
	out, ok := checkoutStatuses[status]
	if !ok {
		return checkout.Result{Outcome: checkout.Failed, Status: status,
			Err: fmt.Errorf("a checkout answered HTTP %d, not 200, 202, 402, 409 or 503", status)}
	}
	return checkout.Result{Outcome: out, Status: status, ChargeID: body.ChargeID}
}

// Reconcile implements checkout.Client: POST /reconcile.
func (s *Service) Reconcile(ctx context.Context) (string, error) {
	var body struct {
		Summary string `json:"summary"`
	}
	status, err := s.call(ctx, "POST", "/reconcile", nil, &body)
	switch {
	case err != nil:
		return "", fmt.Errorf("a reconciliation %w", err)
	case status != http.StatusOK:
		return "", fmt.Errorf("a reconciliation answered HTTP %d, not 200", status)
	}
	return body.Summary, nil
}

// PlaceOrder implements checkout.Placer: POST /orders.
func (s *Service) PlaceOrder(ctx context.Context, amount int64, currency string) (int64, error) {
	var body struct {
		ID int64 `json:"id"`
	}
	status, err := s.call(ctx, "POST", "/orders", map[string]any{"amount": amount, "currency": currency}, &body)
	switch {
	case err != nil:
		return 0, fmt.Errorf("placing an order %w", err)
	case status != http.StatusCreated || body.ID <= 0:
		return 0, fmt.Errorf("placing an order answered HTTP %d without an id, want 201 {\"id\": n}", status)
	}
	return body.ID, nil
}

// Order reads order id: GET /orders/{id}.
func (s *Service) Order(ctx context.Context, id int64) (models.Order, error) {
	var o models.Order
	status, err := s.call(ctx, "GET", fmt.Sprintf("/orders/%d", id), nil, &o)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("answered HTTP %d, not 200", status)
	}
	return o, err
}

func (s *Service) restart(ctx context.Context) error {
	status, err := s.call(ctx, "POST", "/restart", nil, nil)
	if err == nil && status/100 != 2 {
		err = fmt.Errorf("answered HTTP %d, not 2xx", status)
	}
	if err != nil {
		return fmt.Errorf("a restart %w", err)
	}
	return nil
}

func (s *Service) view(ctx context.Context) (checkout.View, error) {
	var v struct {
		Orders   []models.Order          `json:"orders"`
		Attempts []models.PaymentAttempt `json:"attempts"`
	}
	status, err := s.call(ctx, "GET", "/state", nil, &v)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("answered HTTP %d, not 200", status)
	}
	if err != nil {
		return checkout.View{}, fmt.Errorf("the state %w", err)
	}
	return checkout.View{Orders: v.Orders, Attempts: v.Attempts}, nil
}

// call sends one request with the run's clock and operation, and decodes a
// JSON answer into out (when out is set and the body is not empty). Its
// errors are fixed sentences ("got no answer within 5s"), so that a
// failure message is the same on every run.
func (s *Service) call(ctx context.Context, method, path string, in, out any) (int, error) {
	var body io.Reader
	if in != nil {
		raw, _ := json.Marshal(in) // maps of strings and numbers always marshal
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(s.cfg.BaseURL, "/")+path, body)
	if err != nil {
		return 0, errors.New("could not be sent: the service URL is not valid")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(NowHeader, s.cfg.Now().UTC().Format(time.RFC3339Nano))
	if op := models.OpFrom(ctx); op != 0 {
		req.Header.Set(OpHeader, strconv.Itoa(op))
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return 0, transportError(err, s.cfg.CallTimeout)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, s.cfg.MaxBody+1))
	switch {
	case err != nil:
		return 0, transportError(err, s.cfg.CallTimeout)
	case int64(len(raw)) > s.cfg.MaxBody:
		return 0, fmt.Errorf("answered more than %d bytes", s.cfg.MaxBody)
	}
	if out != nil && len(bytes.TrimSpace(raw)) > 0 && resp.StatusCode/100 == 2 {
		if err := json.Unmarshal(raw, out); err != nil {
			return 0, fmt.Errorf("answered HTTP %d with a body that is not the JSON of docs/client-api.md", resp.StatusCode)
		}
	}
	return resp.StatusCode, nil
}

// transportError names what went wrong on the way in a fixed sentence.
func transportError(err error, timeout time.Duration) error {
	var ne interface{ Timeout() bool }
	switch {
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("got no answer within %v", timeout)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), strings.Contains(err.Error(), "connection reset"):
		return errors.New("lost the connection before a whole answer (the service crashed or panicked)")
	case strings.Contains(err.Error(), "connection refused"):
		return errors.New("could not connect: the service is not running")
	case strings.Contains(err.Error(), "malformed HTTP"):
		return errors.New("got an answer that is not HTTP")
	}
	return errors.New("failed on the way to the service")
}
