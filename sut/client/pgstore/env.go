package pgstore

import (
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"regexp"
)

// EnvURL names the variable that holds the PostgreSQL connection URL the
// tests and the conformance run use.
const EnvURL = "IDEMCHECK_POSTGRES_URL"

// DefaultURL is the URL when EnvURL is unset: this project's machines run
// PostgreSQL on loopback with trust authentication and a database "test".
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test"

// URLFromEnv returns $IDEMCHECK_POSTGRES_URL, or DefaultURL.
func URLFromEnv() string {
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	return DefaultURL
}

// redacted is u with any password replaced by "xxxxx", for messages.
func redacted(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(an unparsable URL)"
	}
	return p.Redacted()
}

// schemaName is what a schema may be called: Open puts it in SQL as an
// identifier, so it is checked, not quoted.
var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// NewSchemaName returns a fresh schema name "idemcheck_<prefix>_<16 hex>"
// for one check (prefix lower-case letters, digits and _; cut to fit).
func NewSchemaName(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	name := "idemcheck_" + prefix
	if len(name) > 45 {
		name = name[:45]
	}
	return name + "_" + hex.EncodeToString(b[:])
}
