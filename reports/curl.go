package reports

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/idemcheck/idemcheck/models"
)

// DefaultCurlBase is the provider URL a curl script falls back to when
// IDEMCHECK_PROVIDER_URL is unset and the failure's provider is not a URL
// (the embedded provider): where `idemcheck serve --addr 127.0.0.1:8080`
// listens.
const DefaultCurlBase = "http://127.0.0.1:8080"

// CurlScript renders the wire exchanges of f as a bash script that replays
// them with curl against ${IDEMCHECK_PROVIDER_URL}: every request that
// reached the provider, in the order it reached it, one at a time, with its
// exact Idempotency-Key header and its body rebuilt from the history
// (models.ChargeRequest's JSON, which is what the reference client sends);
// requests the fault layer kept from the provider are listed as comments.
// It ends by asking the provider for the charges of every merchant
// reference it sent, which is where a double charge shows.
//
// The secret is only referenced (${IDEMCHECK_API_KEY}, sent as a bearer
// token when set); card tokens appear only for the public test cards
// (tok_visa, tok_mastercard, tok_chargeDeclined), any other card is
// ${IDEMCHECK_CARD_TOKEN}. Requests that overlapped at the provider in the
// run (one arrived while the one before was still being processed) are
// sent together, in the background, and waited for, so a failure that
// needs concurrency (no in-flight lock) can reproduce; how they interleave
// at the provider is then up to the network, as the script says.
func CurlScript(f Failure) []byte {
	var b strings.Builder
	b.WriteString("#!/usr/bin/env bash\n")
	fmt.Fprintf(&b, "# idemcheck: replays the wire exchanges of a %s failure with curl.\n", shellComment(f.Invariant))
	if f.Explanation != "" {
		fmt.Fprintf(&b, "# %s\n", shellComment(f.Explanation))
	}
	var about []string
	for _, kv := range [][2]string{{"test", f.Test}, {"mutant", f.Mutant}, {"provider", RedactURL(f.Provider)}} {
		if kv[1] != "" {
			about = append(about, kv[0]+" "+kv[1])
		}
	}
	if f.Seed != 0 {
		about = append(about, "seed "+strconv.FormatUint(f.Seed, 10))
	}
	fmt.Fprintf(&b, "# %s\n", shellComment(strings.Join(about, " · ")))
	b.WriteString("#\n# Usage: IDEMCHECK_PROVIDER_URL=http://127.0.0.1:PORT [IDEMCHECK_API_KEY=...] bash failure.curl.sh\n")
	switch {
	case f.Mutant != "" && f.MutantSide == "provider":
		store := ""
		if strings.HasPrefix(f.Mutant, "redis-") { // a Redis store mutant (sut/mutants/redis_mutants.go)
			store = " --store redis"
		}
		fmt.Fprintf(&b, "# A provider with the same bug: idemcheck serve --addr 127.0.0.1:0%s --mutant %s\n", store, shellComment(f.Mutant))
	case f.Mutant != "":
		b.WriteString("# The bug is the client's (the requests below are what it sent): replay them against the\n")
		b.WriteString("# reference provider, idemcheck serve --addr 127.0.0.1:0\n")
	}
	b.WriteString("# Requests are sent in the order they reached the provider in the run, one at a time, except\n")
	b.WriteString("# those that overlapped there: they are sent together (&, then waited for), and how they interleave\n")
	b.WriteString("# now is up to the network. Faults are not replayed (a lost response is simply read here).\n")
	b.WriteString("set -euo pipefail\n\n")
	fmt.Fprintf(&b, "base=\"${IDEMCHECK_PROVIDER_URL:-%s}\"\n", defaultBase(f.Provider))
	b.WriteString("auth=()\nif [ -n \"${IDEMCHECK_API_KEY:-}\" ]; then auth=(-H \"Authorization: Bearer ${IDEMCHECK_API_KEY}\"); fi\n\n")
	b.WriteString("# send METHOD PATH_AND_QUERY [KEY_HEADER [BODY [CONTENT_TYPE]]]: one request (a JSON body unless\n")
	b.WriteString("# CONTENT_TYPE says otherwise); prints the status line, the Idempotent-Replayed header and the body.\n")
	b.WriteString("send() {\n")
	b.WriteString("  local args=(-sS -i -X \"$1\" \"${auth[@]}\")\n")
	b.WriteString("  if [ \"$#\" -ge 3 ] && [ -n \"$3\" ]; then args+=(-H \"Idempotency-Key: $3\"); fi\n")
	b.WriteString("  if [ \"$#\" -ge 4 ]; then args+=(-H \"Content-Type: ${5:-application/json}\" --data-binary \"$4\"); fi\n")
	b.WriteString("  local out\n")
	b.WriteString("  out=\"$(curl \"${args[@]}\" \"${base}$2\")\"\n")
	b.WriteString("  printf '%s\\n\\n' \"$out\" | tr -d '\\r' | grep -aiE '^(HTTP/|Idempotent-Replayed:|\\{|$)' || true\n")
	b.WriteString("}\n\n")
	b.WriteString("# together: waits for the requests sent in the background, each by its pid, so that one\n")
	b.WriteString("# that fails (connection refused) stops the script as a request sent alone does.\n")
	b.WriteString("pids=()\ntogether() {\n  local pid\n  for pid in \"${pids[@]}\"; do wait \"$pid\"; done\n  pids=()\n}\n\n")

	exs := sortedExchanges(f.History)
	sort.SliceStable(exs, func(i, j int) bool { return arrival(exs[i]) < arrival(exs[j]) })
	base := origin(f.History)
	// In process the provider finishes every request it got, so one it had
	// not answered when the history ended was still there; elsewhere an
	// answer the harness never saw (the client gave up) is unknown.
	inProcess := f.Provider == "" || f.Provider == "embedded"
	together := groupOverlaps(exs, inProcess)
	refs := map[string]bool{}
	var order []string
	stripe := false           // a create was sent in Stripe's dialect: look its charges up as Stripe does
	var prev *models.Exchange // the last exchange that reached the provider
	for i, ex := range exs {
		head := fmt.Sprintf("# exchange %d, %s, fault %s", ex.ID, orDash(offset(base, ex.SentAt)), orDash(ex.Fault))
		if !ex.Forwarded {
			fmt.Fprintf(&b, "%s: never reached the provider, not sent\n\n", shellComment(head))
			continue
		}
		if prev != nil && overlaps(*prev, ex, inProcess) {
			head += ", sent while exchange " + strconv.Itoa(prev.ID) + " was still at the provider"
		}
		prev = &exs[i]
		g := together[ex.ID]
		if g.first {
			fmt.Fprintf(&b, "# exchanges %s overlapped at the provider: sent together\n", joinIDs(g.ids))
		}
		fmt.Fprintf(&b, "%s; the provider answered %s\n", shellComment(head), shellComment(strings.TrimSpace(providerSaw(ex)+" "+ex.ProviderChargeID)))
		key := ""
		if ex.HasKey {
			key = ex.KeyHeader
		}
		target := ex.Path
		if ex.Query != "" {
			target += "?" + ex.Query
		}
		end := "\n\n"
		switch {
		case g.last:
			end = " &\npids+=($!)\ntogether\n\n"
		case len(g.ids) > 0:
			end = " &\npids+=($!)\n"
		}
		switch {
		case ex.Dialect == models.DialectStripe && ex.Method == "POST": // the form the client sent (curl_stripe.go)
			fmt.Fprintf(&b, "send POST %s %s %s %s%s", shellQuote(target), shellQuote(key), formBody(ex), shellQuote(formType), end)
		case ex.IsRefund(): // curl_refund.go
			fmt.Fprintf(&b, "send POST %s %s %s%s", shellQuote(target), shellQuote(key), refundBody(ex), end)
			continue
		case !ex.IsPost():
			fmt.Fprintf(&b, "send %s %s %s%s", ex.Method, shellQuote(target), shellQuote(key), end)
			continue
		default:
			body, exact := chargeBody(ex)
			if !exact {
				b.WriteString("# the body is rebuilt from the history and its fingerprint differs from the one sent\n")
			}
			fmt.Fprintf(&b, "send POST %s %s %s%s", shellQuote(target), shellQuote(key), body, end)
		}
		if ex.IsPost() && ex.MerchantReference != "" && !refs[ex.MerchantReference] {
			refs[ex.MerchantReference] = true
			order = append(order, ex.MerchantReference)
			stripe = stripe || ex.Dialect == models.DialectStripe
		}
	}
	if len(order) > 0 {
		b.WriteString("# The provider's charges for each merchant reference sent: more than one succeeded charge\n")
		b.WriteString("# for one reference is a double charge.\n")
		for _, ref := range order {
			fmt.Fprintf(&b, "send GET %s\n", shellQuote(lookup(ref, stripe)))
		}
	}
	return []byte(b.String())
}

// chargeBody is the shell-quoted JSON body of the create-charge request
// ex, rebuilt from its recorded fields, and whether its fingerprint is the
// one recorded (true when nothing was recorded to compare with).
func chargeBody(ex models.Exchange) (quoted string, exact bool) {
	cr := models.ChargeRequest{Amount: ex.Amount, Currency: ex.Currency, Source: models.TestCardToken(ex.Card),
		Description: ex.Description, MerchantReference: ex.MerchantReference}
	exact = ex.Fingerprint == "" || models.Fingerprint(cr) == ex.Fingerprint
	if cr.Source == "" && ex.CardHash != "" {
		// Not a public test card: the token comes from the environment.
		const placeholder = "@@idemcheck-card@@"
		cr.Source = placeholder
		raw, _ := json.Marshal(cr) // plain fields: cannot fail
		parts := strings.SplitN(string(raw), placeholder, 2)
		return shellQuote(parts[0]) + `"${IDEMCHECK_CARD_TOKEN:?set IDEMCHECK_CARD_TOKEN to the card token}"` + shellQuote(parts[1]), exact
	}
	raw, _ := json.Marshal(cr) // plain fields: cannot fail
	return shellQuote(string(raw)), exact
}

// arrival is where ex reached the provider in the history's order; one
// that never did sorts where it was sent.
func arrival(ex models.Exchange) int {
	if ex.Forwarded && ex.ArrivalSeq != 0 {
		return ex.ArrivalSeq
	}
	return ex.Seq
}

// overlaps reports whether next reached the provider while prev was still
// being processed there. When the provider's answer to prev was never
// seen outside the in-process provider (the client gave up, as on a
// timeout against a URL), prev is known to be unanswered only until the
// client gave up, so only a next that arrived before then overlaps it.
func overlaps(prev, next models.Exchange, inProcess bool) bool {
	switch {
	case !prev.Forwarded:
		return false
	case prev.ProviderDone:
		return prev.ProviderSeq > arrival(next)
	case inProcess || !prev.Done || prev.DoneAt.IsZero() || next.ArrivedAt.IsZero():
		return true
	}
	return next.ArrivedAt.Before(prev.DoneAt)
}

// overlapGroup is an exchange's place in a run of exchanges that
// overlapped at the provider (the zero value: it overlapped none).
type overlapGroup struct {
	ids         []int // the group's exchange ids, in arrival order
	first, last bool
}

// groupOverlaps finds, among exs in arrival order, the runs of forwarded
// exchanges each of which reached the provider while the one before was
// still there, and returns every member's group by exchange id.
func groupOverlaps(exs []models.Exchange, inProcess bool) map[int]overlapGroup {
	out := map[int]overlapGroup{}
	var run []int
	var prev *models.Exchange
	flush := func() {
		for i, id := range run {
			if len(run) > 1 {
				out[id] = overlapGroup{ids: run, first: i == 0, last: i == len(run)-1}
			}
		}
		run = nil
	}
	for i, ex := range exs {
		if !ex.Forwarded {
			continue
		}
		if prev == nil || !overlaps(*prev, ex, inProcess) {
			flush()
		}
		run = append(run, ex.ID)
		prev = &exs[i]
	}
	flush()
	return out
}

// joinIDs is ids as "3, 4 and 5".
func joinIDs(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// shellQuote quotes s for bash as one word: '…' with ' written as '\”.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellComment keeps s on one comment line.
func shellComment(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// defaultBase is the URL the script uses without IDEMCHECK_PROVIDER_URL:
// the failure's provider when it is an http(s) URL (without credentials or
// query), else DefaultCurlBase. It is written inside double quotes, so
// characters bash would expand are refused.
func defaultBase(provider string) string {
	u, err := url.Parse(provider)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return DefaultCurlBase
	}
	s := RedactURL(provider)
	if strings.ContainsAny(s, "\"$`\\!") {
		return DefaultCurlBase
	}
	return strings.TrimRight(s, "/")
}

// RedactURL drops the credentials, query and fragment of a URL; anything
// that does not parse as a URL with a host is returned unchanged.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return s
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// orDash is s, or "-" when s is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
