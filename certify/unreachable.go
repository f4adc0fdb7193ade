package certify

import (
	"fmt"
	"strings"
)

// unreachableError is the preflight's failure when no connection was
// made: Is ErrUnreachable, Unwraps to why.
type unreachableError struct {
	url string // without credentials
	why error
}

func (e unreachableError) Error() string {
	return fmt.Sprintf("%v at %s: %v; check the URL (idemcheck certify URL, or IDEMCHECK_PROVIDER) and that the provider is running (nothing else was sent)", ErrUnreachable, e.url, e.why)
}
func (e unreachableError) Is(target error) bool { return target == ErrUnreachable }
func (e unreachableError) Unwrap() error        { return e.why }

// unreachable reports whether a got no answer because no connection was
// made: refused, or the dial failed (no such host, no route, a connect
// timeout), as net/http words it ("dial tcp …").
func (a answer) unreachable() bool {
	if a.err == nil {
		return false
	}
	return a.cause() == "connection refused" || strings.Contains(a.err.Error(), "dial tcp")
}
