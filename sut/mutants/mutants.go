// Package mutants holds planted bugs: small, named variations of the
// reference client or provider that each break one invariant, so the
// harness can prove it sees that fault class (docs/mutants.md: the harness
// proves its own power). Select one with IDEMCHECK_MUTANT=<name>.
package mutants

import (
	"fmt"
	"sort"
	"strings"

	"github.com/idemcheck/idemcheck/sut/client"
	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/provider/redisstore"
	"github.com/idemcheck/idemcheck/sut/wiremock"
)

// Mutant is one planted bug.
type Mutant struct {
	// Name selects it: IDEMCHECK_MUTANT=<Name>.
	Name string
	// Description says what is broken, in one line.
	Description string
	// Invariant is the invariant it must break first; "" for a mutant no
	// shopper sequence can meet, which Requirement names instead.
	Invariant string
	// Consequence, if set, is an invariant the bug's own effect can break
	// before Invariant when a real store's round trips take another
	// course under load (pg-unconditional-settle: the abandoned attempt
	// was charged, so the next checkout charges again); the kill matrix
	// accepts it first on one seed at most.
	Consequence string
	// Requirement, for a mutant with no Invariant, is the certification
	// requirement (certify.Requirements' id) that must FAIL against it:
	// its bug needs a request the reference client never sends (an empty
	// or malformed key, an unknown path, an unparsable or large body, a
	// keyed lookup, a stray header), so the kill matrix leaves it to the
	// certification's tests (certify/probe_mutants_test.go,
	// TestCertify_EdgeMutantsFailTheirRequirement); docs/mutants.md lists
	// it apart.
	Requirement string
	// MinSteps is the length of the smallest shopper sequence that shows it.
	MinSteps int
	// LocalMinimum, if set, names a longer shape of the same bug that
	// rapid's shrinker cannot leave for the minimal one (it deletes steps
	// and lowers values, never trades one action for another): the kill
	// matrix then asks the documented minimum on at least one seed rather
	// than four of five, and never below it (docs/mutants.md lists why).
	LocalMinimum string
	// Class is the real-world fault class it stands for.
	Class string
	// Side is "client" or "provider": which system under test is broken.
	Side string
	// Client, if set, changes the reference client's configuration.
	Client func(cfg *client.Config)
	// Provider, if set, changes the embedded provider's configuration.
	Provider func(cfg *provider.Config)
	// WireMock, if set, plants the same bug in the WireMock provider
	// (sut/wiremock): the mutant then also runs with
	// IDEMCHECK_PROVIDER=wiremock.
	WireMock func(cfg *wiremock.Config)
	// ClientStore, if set, is the client's attempt store the mutant needs
	// (IDEMCHECK_CLIENT_STORE's values: "postgres"); the harness selects it.
	ClientStore string
	// Instances, if above 1, is how many client instances the mutant needs
	// at least (IDEMCHECK_CLIENT_INSTANCES); the harness runs that many.
	Instances int
	// RedisStore, if set, plants the bug in the provider's Redis store
	// (sut/provider/redisstore): the mutant runs only with the provider on
	// Redis (IDEMCHECK_PROVIDER_STORE=redis).
	RedisStore func(cfg *redisstore.Config)
}

var registry = map[string]Mutant{}

func register(m Mutant) {
	if m.Side == "" {
		m.Side = "client"
		if m.Provider != nil || m.RedisStore != nil {
			m.Side = "provider"
		}
	}
	if _, dup := registry[m.Name]; dup {
		panic("mutants: registered twice: " + m.Name)
	}
	registry[m.Name] = m
}

// Lookup returns the mutant called name, or an error listing the known ones.
func Lookup(name string) (Mutant, error) {
	m, ok := registry[name]
	if !ok {
		return Mutant{}, fmt.Errorf("mutants: unknown mutant %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return m, nil
}

// Names lists the registered mutants in name order.
func Names() []string {
	ns := make([]string, 0, len(registry))
	for n := range registry {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// All returns every registered mutant in name order.
func All() []Mutant {
	var ms []Mutant
	for _, n := range Names() {
		ms = append(ms, registry[n])
	}
	return ms
}
