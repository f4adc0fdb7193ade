package machine

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/backend"
	"github.com/idemcheck/idemcheck/sut/remote"
	"github.com/idemcheck/idemcheck/sut/stripewire"
)

// stripeServer is a backend that can speak Stripe's API (the embedded
// provider, in process or on loopback).
type stripeServer interface{ ServeStripe() }

var _ stripeServer = (*backend.Embedded)(nil)

// stripeProbeKinds are the probes of a settled key sent in the stripe
// dialect: the client's own request, and it with another amount, card or
// currency. The quoted-or-bare probe has no meaning where every key is
// opaque, and the shapes and the second account judge the provider
// alone, whose invariants are the served dialect's certification's
// (stripeLeftOut).
var stripeProbeKinds = []string{"same body", "another amount", "another card", "another currency"}

// stripeLeftOut are the invariants not judged when the embedded provider
// speaks Stripe's API to a client under test: they judge the provider
// alone, here the reference provider behind the harness's own
// translation (provider.Provider.Stripe), whose statuses and error bodies
// are Stripe's (a mismatch is 400 idempotency_error, not 422 problem
// details). `idemcheck certify --dialect stripe` against `idemcheck serve
// --dialect stripe` judges them.
var stripeLeftOut = func() map[string]string {
	const why = "judges the provider alone: in the stripe dialect the harness's own translation, certified by idemcheck certify --dialect stripe against idemcheck serve --dialect stripe"
	out := map[string]string{}
	for _, name := range check.ProviderOnly() {
		out[name] = why
	}
	return out
}()

// errStripeProvider: Stripe's API is served by the embedded provider only.
var errStripeProvider = errors.New("conformance: the stripe dialect is served by the embedded provider only (IDEMCHECK_PROVIDER unset or embedded, the memory store)")

// errDialect is a dialect the embedded provider does not serve.
func errDialect(d string) error {
	return fmt.Errorf("conformance: unknown dialect %q (want %q or %q)", d, remote.DialectReference, remote.DialectStripe)
}

// serveDialect makes the world's provider speak u's dialect: nothing for
// the reference dialect; for Stripe's, the embedded provider serves it
// and the fault layer records and answers in it.
func (w *World) serveDialect(u *UnderTest) error {
	switch u.Dialect {
	case "", remote.DialectReference:
		return nil
	case remote.DialectStripe:
	default:
		return errDialect(u.Dialect)
	}
	s, ok := w.prov.(stripeServer)
	if !ok {
		return errStripeProvider
	}
	s.ServeStripe()
	w.faults.Dialect, w.stripe = stripewire.Recorder{}, true
	return nil
}

// keyHeader is key as the dialect sends it: a Structured Field String in
// the reference dialect, bare (opaque) in Stripe's.
func (w *World) keyHeader(key string) string {
	if w.stripe {
		return key
	}
	return models.FormatKey(key)
}

// stripeCharge is the path and form of a probe of body in the stripe
// dialect: the client's first create for body's merchant reference as it
// sent it (its path, /v1/charges or /v1/payment_intents, and its form)
// with body's amount, currency and card in it; without one, body as
// stripewire.ChargeForm writes it, to /v1/charges.
func (w *World) stripeCharge(body models.ChargeRequest) (string, []byte) {
	for _, e := range w.hist.Snapshot().Exchanges {
		if !e.IsPost() || e.MerchantReference != body.MerchantReference || e.Form == "" {
			continue
		}
		form, err := url.ParseQuery(e.Form)
		if err != nil {
			break
		}
		form.Set("amount", strconv.FormatInt(body.Amount, 10))
		form.Set("currency", strings.ToLower(body.Currency))
		for _, p := range []string{"source", "payment_method"} {
			if v := form.Get(p); strings.HasPrefix(v, "pm_card_") {
				form.Set(p, "pm_card_"+strings.TrimPrefix(body.Source, "tok_")) // Stripe's test PaymentMethod of the card
			} else if v != "" {
				form.Set(p, body.Source)
			}
		}
		return strings.TrimSuffix(e.Path, "/"), []byte(form.Encode())
	}
	return "/v1/charges", []byte(stripewire.ChargeForm(body).Encode())
}

// stripeRefund is the form of a refund probe in the stripe dialect.
func stripeRefund(body models.RefundRequest) []byte {
	return []byte(stripewire.RefundForm(body).Encode())
}
