package run

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/conformance/internal/machine"
	"pgregory.net/rapid"
)

// The minimal shapes first (issue 24, item 2). Every mutant of
// docs/mutants.md shows in 2 to 4 shopper steps; rapid's shrinker gets
// there by dropping one step at a time and then lowering every drawn value,
// hundreds to thousands of real-time sequences against a URL. So before
// rapid shrinks a deviation, the run tries the shortest
// shapes of its reproduction: the step where it failed alone, then with
// one earlier step (the nearest first), then with two, at most
// maxShapeTries of them, each one real sequence, within the deviation's
// cap. The first that fails with the deviation's category is its
// counterexample: rapid's shrink then ends there ("not minimal: shortest
// shape …": fewer of its steps did not fail; its values were not
// shrunk). When none fails, rapid shrinks as usual, within what is left of
// the cap; a known deviation (shrinkcap.go) gets its shapes only.
//
// A shape is rapid's draws of the reproduction with the other steps'
// draws left out, as rapid's own shrinker removes a step: the draws of
// each element of t.Repeat are a group rapid records (label
// "Repeat@repeat"), read by reflect as drawnBits reads the draws
// (pgregory.net/rapid v1.3.0). Each shape runs through rapid.Check with
// the shape as its fail file, which rapid replays (twice, then once for
// its output: the two after the first end at once, shapeCheck), under
// another name so that no kept fail file is replayed with it.

// ShapesEnv is the variable that, set to "off", turns the shapes off:
// rapid alone shrinks, as before issue 24 (the tests of a shrink the
// budget cuts use it: a shape would end the shrink first).
const ShapesEnv = "IDEMCHECK_SHRINK_SHAPES"

// maxShapeTries bounds the shapes tried for one deviation.
const maxShapeTries = 40

// shapeMaxSteps is the most steps of a shape tried.
const shapeMaxSteps = 3

// rapidVersion is the version rapid writes in its fail files and reads
// back (pgregory.net/rapid v1.3.0 writes "v0.4.8"); a fail file of another
// version is ignored by rapid, and then no shape fails.
const rapidVersion = "v0.4.8"

// shortestShape starts the cut of a shrink a shape ended (minimality).
const shortestShape = "shortest shape found"

// repeatGroup is the label of one element of t.Repeat in rapid's record.
const repeatGroup = "Repeat@repeat"

// shapeState is the shape being tried: the checks rapid began for it,
// and whether its sequence failed with the deviation's category.
type shapeState struct {
	bits   []uint64
	calls  int
	failed bool
	// stopped is why its sequence stopped (the cap), "" if it did not.
	stopped string
}

// elements are the [begin, end) ranges of the draws of each element of
// t.Repeat in rapid's record of t, the last one being the element that
// ended the repetition; nil when rapid did not record t.
func elements(t *rapid.T) [][2]int {
	v, ok := recorded(t)
	if !ok {
		return nil
	}
	g := v.FieldByName("groups")
	if !g.IsValid() || g.Kind() != reflect.Slice {
		return nil
	}
	var out [][2]int
	for i := range g.Len() {
		e := g.Index(i)
		label, begin, end, discard := e.FieldByName("label"), e.FieldByName("begin"), e.FieldByName("end"), e.FieldByName("discard")
		if !label.IsValid() || !begin.IsValid() || !end.IsValid() || !discard.IsValid() {
			return nil
		}
		if label.String() == repeatGroup && !discard.Bool() && end.Int() > begin.Int() {
			out = append(out, [2]int{int(begin.Int()), int(end.Int())})
		}
	}
	return out
}

// drawnLen is how many draws rapid recorded of t so far, -1 when none.
func drawnLen(t *rapid.T) int {
	if b := drawnBits(t); b != nil {
		return len(b)
	}
	return -1
}

// failAt wraps the step check of actions so that the returned function
// tells how many draws rapid had recorded when m first failed (-1: it did
// not fail during the steps, or rapid does not record).
func failAt(m *machine.Machine, actions map[string]func(*rapid.T)) (map[string]func(*rapid.T), func() int) {
	at := -1
	check := actions[""]
	actions[""] = func(t *rapid.T) {
		check(t)
		if v, _ := m.Failed(); v != nil && at < 0 {
			at = drawnLen(t)
		}
	}
	return actions, func() int { return at }
}

// shapesOf are the shapes of a reproduction whose draws are data, whose
// t.Repeat elements are elems (the last one ending it), failing at draw at
// (-1: after the steps): the failing step alone, then with one, then two
// earlier steps, nearest first, at most maxShapeTries.
func shapesOf(data []uint64, elems [][2]int, at int) [][]uint64 {
	if len(elems) < 2 || elems[len(elems)-1][1] > len(data) {
		return nil
	}
	steps, end := elems[:len(elems)-1], elems[len(elems)-1]
	f := len(steps) - 1
	for i, e := range steps {
		if at > e[0] && at <= e[1] {
			f = i
		}
	}
	build := func(keep ...int) []uint64 {
		out := append([]uint64(nil), data[:steps[0][0]]...)
		for _, i := range keep {
			out = append(out, data[steps[i][0]:steps[i][1]]...)
		}
		return append(out, data[end[0]:]...)
	}
	var out [][]uint64
	add := func(keep ...int) bool {
		if len(out) >= maxShapeTries || len(keep) >= len(steps) && f == len(steps)-1 {
			return false // no shorter than the reproduction itself
		}
		out = append(out, build(keep...))
		return true
	}
	add(f)
	for i := f - 1; i >= 0 && shapeMaxSteps >= 2; i-- {
		add(i, f)
	}
	for j := f - 1; j >= 1 && shapeMaxSteps >= 3; j-- {
		for i := j - 1; i >= 0; i-- {
			add(i, j, f)
		}
	}
	return out
}

// shapesOfReproduction keeps the shapes of the round's reproduction, the
// check that just failed with draws bits, t.Repeat's elements elems and
// its failure at draw at: only when its deviation is not known, against
// a URL, and rapid is about to shrink it.
func (r *runState) shapesOfReproduction(bits []uint64, elems [][2]int, at int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rd := &r.round
	if rd.shrinks != 1 || rd.cap == nil || rd.cut != "" || rd.replayed {
		return
	}
	if os.Getenv(ShapesEnv) != "off" {
		rd.shapes = shapesOf(bits, elems, at)
	}
	if len(rd.shapes) == 0 && rd.known != "" {
		rd.cut = rd.known // no shape to try: not shrunk again
	}
}

// tryShapes tries round's shapes (shapesOf), once per round, before
// rapid's first shrink candidate: the first that fails with the
// deviation's category becomes the round's smallest counterexample and
// ends its shrink (round.cut).
func (r *runState) tryShapes() {
	r.mu.Lock()
	shapes, t := r.round.shapes, r.roundT
	r.round.shapes = nil
	r.mu.Unlock()
	if len(shapes) == 0 || t == nil {
		return
	}
	dir, err := os.MkdirTemp("", "idemcheck-shapes-")
	if err != nil {
		return
	}
	defer func() { _ = os.RemoveAll(dir) }()
	defer func() {
		r.mu.Lock()
		if r.round.cut == "" {
			r.round.cut = r.round.known // a known deviation: its shapes only
		}
		r.mu.Unlock()
	}()
	for i, bits := range shapes {
		st := r.tryShape(t, filepath.Join(dir, strconv.Itoa(i)+".fail"), bits)
		r.mu.Lock()
		r.round.shapeTries++
		switch {
		case st.failed && r.round.known != "":
			r.round.cut = fmt.Sprintf("%s; its %s, %d of %d tried", r.round.known, shortestShape, i+1, len(shapes))
		case st.failed:
			r.round.cut = fmt.Sprintf("%s, %d of %d tried: fewer of its steps did not fail; its values were not shrunk", shortestShape, i+1, len(shapes))
		case st.stopped != "":
			r.round.cut = st.stopped // the cap is spent
		}
		cut := r.round.cut
		r.mu.Unlock()
		if cut != "" {
			return
		}
	}
}

// tryShape runs one shape, bits, through rapid.Check from the fail file
// ff under t.
func (r *runState) tryShape(t *testing.T, ff string, bits []uint64) shapeState {
	lines := []string{"# idemcheck: a shape of a deviation's reproduction (shapes.go)", rapidVersion + "#0"}
	for _, u := range bits {
		lines = append(lines, fmt.Sprintf("0x%x", u))
	}
	st := &shapeState{bits: bits}
	if os.WriteFile(ff, []byte(strings.Join(lines, "\n")+"\n"), 0o644) != nil {
		return *st
	}
	r.mu.Lock()
	r.shape = st
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.shape = nil
		r.mu.Unlock()
	}()
	replayFailFile(replayTB{roundTB: &roundTB{T: t}, name: t.Name() + "/shape"}, ff, r.Property())
	r.mu.Lock()
	defer r.mu.Unlock()
	return *st
}

// shapeCheck is what check t runs while a shape is tried, ok false when
// none is: rapid's first replay of the shape is its sequence, with the
// deviation's cap; the two after it end at once.
func (r *runState) shapeCheck(t *rapid.T) (ok bool) {
	r.mu.Lock()
	st, rd := r.shape, r.round
	if st != nil {
		st.calls++
	}
	r.mu.Unlock()
	if st == nil {
		return false
	}
	c := machine.Check{Phase: machine.PhaseShrink, Ack: r.acknowledged(), Cap: rd.cap, Stop: &r.stop, Report: r.check(machine.PhaseShrink).Report}
	if st.calls > 1 {
		machine.Ended(c, rd.smallestV).Conclude(t)
		return true
	}
	m := r.plainSequence(t, c)
	v, world := m.Failed()
	if v != nil && rd.smallestV != nil && v.Category == rd.smallestV.Category {
		f := failureOf(r, m, world, v)
		r.mu.Lock()
		st.failed = true
		r.round.smallest, r.round.smallestV, r.round.smallestBits = f, v, st.bits
		r.last.set(f)
		r.mu.Unlock()
	}
	r.mu.Lock()
	st.stopped = m.Stopped()
	r.mu.Unlock()
	m.Conclude(t)
	return true
}
