package faults

import (
	"errors"
	"fmt"
	"io"
)

// DefaultMaxBody is the most bytes of one body the harness reads from a
// provider (or a client of the proxy) when no cap is configured: 1 MiB.
// sut/remote's Limits.MaxBody (IDEMCHECK_MAX_BODY) sets it for a run.
const DefaultMaxBody = 1 << 20

// ErrOversize is the sentinel every *OversizeError wraps.
var ErrOversize = errors.New("oversize")

// OversizeError is a body longer than the cap: it was not read past
// Limit bytes and is not used.
type OversizeError struct {
	// Limit is the cap in bytes.
	Limit int64
}

func (e *OversizeError) Error() string {
	return fmt.Sprintf("oversize: the body is longer than the %s cap (IDEMCHECK_MAX_BODY); not read further", sizeText(e.Limit))
}

// Unwrap makes errors.Is(err, ErrOversize) hold.
func (e *OversizeError) Unwrap() error { return ErrOversize }

// ReadBody reads r to its end, but never more than limit+1 bytes (limit
// ≤ 0 means DefaultMaxBody): a longer body is an *OversizeError, so an
// endless answer costs at most the cap in memory.
func ReadBody(r io.Reader, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return b, err
	}
	if int64(len(b)) > limit {
		return nil, &OversizeError{Limit: limit}
	}
	return b, nil
}

// sizeText is n bytes in KiB or MiB when it is a whole number of them.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}
