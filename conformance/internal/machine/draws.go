package machine

import (
	"sync"

	"pgregory.net/rapid"
)

// The generators the actions draw from, built once: rapid's generators
// are immutable, and building one at every draw was about 5 % of a
// sequence's allocations (issue 29). Labels, so draws, are unchanged.
var (
	cardGen         = rapid.SampledFrom(cardLabels)
	approvedCardGen = rapid.SampledFrom(cardLabels[:2])
	currencyGen     = rapid.SampledFrom([]string{"TRY", "EUR", "USD"})
	advanceGen      = rapid.SampledFrom(advanceSteps)
	refundKindGen   = rapid.SampledFrom(refundKinds)
	secondClickGen  = rapid.SampledFrom(secondClicks)
	refundLostGen   = rapid.Bool()
)

// intGens holds ints' generators by their bounds.
var intGens sync.Map // [2]int → *rapid.Generator[int]

// ints is rapid.IntRange(lo, hi), built once per bounds.
func ints(lo, hi int) *rapid.Generator[int] {
	k := [2]int{lo, hi}
	if g, ok := intGens.Load(k); ok {
		return g.(*rapid.Generator[int])
	}
	g, _ := intGens.LoadOrStore(k, rapid.IntRange(lo, hi))
	return g.(*rapid.Generator[int])
}
