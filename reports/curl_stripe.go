package reports

import (
	"net/url"
	"strings"

	"github.com/idemcheck/idemcheck/models"
)

// formType is the Content-Type of a form body: Stripe's dialect.
const formType = "application/x-www-form-urlencoded"

// formBody is the shell-quoted form body of exchange ex, sent in Stripe's
// dialect, as the client sent it (models.Exchange.Form); a card that was
// not a public test card is ${IDEMCHECK_CARD_TOKEN}.
func formBody(ex models.Exchange) string {
	parts := strings.Split(ex.Form, models.CardPlaceholder)
	for i := range parts {
		parts[i] = shellQuote(parts[i])
	}
	return strings.Join(parts, `"${IDEMCHECK_CARD_TOKEN:?set IDEMCHECK_CARD_TOKEN to the card token}"`)
}

// lookup is the request that lists the charges of merchant reference ref:
// docs/provider-api.md's GET /v1/charges?merchant_reference=, or in
// Stripe's dialect its search by metadata (sut/stripewire.SearchQuery's
// query, https://docs.stripe.com/search).
func lookup(ref string, stripe bool) string {
	if stripe {
		return "/v1/charges/search?query=" + url.QueryEscape("metadata['merchant_reference']:'"+ref+"'")
	}
	return "/v1/charges?merchant_reference=" + url.QueryEscape(ref)
}
