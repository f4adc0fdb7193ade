package provider

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// MaxBodyBytes bounds a POST /v1/charges or /v1/refunds body: 256 KiB
// (profiles/reference.json publishes it as max_body_bytes). A longer body
// is refused with 413 and charges nothing; the key is not taken.
const MaxBodyBytes = 256 << 10

// SlowCard is the reference provider's slow trigger (profiles/reference.json,
// slow_trigger): a card that approves like tok_visa, but only after
// Config.SlowProcessing (default DefaultSlowProcessing), as sandboxes
// publish test values that change processing.
const SlowCard = "tok_visa_slow"

// DefaultSlowProcessing is how long SlowCard's processing takes when
// Config.SlowProcessing is not positive: 2 s.
const DefaultSlowProcessing = 2 * time.Second

// slowDown waits out SlowCard's processing, whatever the client does (a
// request whose key is taken is processed to the end); other cards go on
// at once.
func (p *Provider) slowDown(source string) {
	if source != SlowCard {
		return
	}
	t := time.NewTimer(p.slow)
	defer t.Stop()
	<-t.C
}

// writeBodyError answers a create or refund whose body could not be
// read or validated: 413 when it is longer than MaxBodyBytes, else 400.
// Either way before the key store: nothing is stored, the key stays free.
func writeBodyError(w http.ResponseWriter, err error) {
	var big *http.MaxBytesError
	if errors.As(err, &big) {
		writeProblem(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is longer than the limit of %d bytes", MaxBodyBytes))
		return
	}
	writeProblem(w, http.StatusBadRequest, err.Error())
}
