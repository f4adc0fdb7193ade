package run

import (
	"bufio"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// rapid's fail files: the ones a round wrote, kept or replayed.

// removeFailFile removes a fail file of this run's process, one a round
// no longer reports.
func removeFailFile(ff string) {
	if ff != "" && strings.HasSuffix(ff, "-"+strconv.Itoa(os.Getpid())+".fail") {
		_ = os.Remove(ff)
	}
}

// failFileRE finds the fail file in rapid's failure message.
var failFileRE = regexp.MustCompile(`-rapid\.failfile="([^"]+)"`)

// failFileIn is the fail file rapid's failure message names, or "".
func failFileIn(text string) string {
	if m := failFileRE.FindStringSubmatch(text); m != nil {
		return m[1]
	}
	return ""
}

// keepFailFile gives a fail file rapid wrote in this round its deviation's
// number ("…-<pid>-2.fail"), since rapid names files by the second and the
// process id, and two rounds may end within one second; a kept file it
// replayed (another process's, or renamed already) keeps its name.
func (r *runState) keepFailFile(ff string, rd round) string {
	if !strings.HasSuffix(ff, "-"+strconv.Itoa(os.Getpid())+".fail") {
		return ff
	}
	to := strings.TrimSuffix(ff, ".fail") + "-" + strconv.Itoa(rd.n) + ".fail"
	if os.Rename(ff, to) != nil {
		return ff
	}
	return to
}

// keptFailFiles is how many fail files rapid replays before it searches
// under the test name: -rapid.failfile, then those kept under
// testdata/rapid/<name>/ (as rapid names them); only files with data count.
func keptFailFiles(name string) int {
	n := 0
	if f := flag.Lookup("rapid.failfile"); f != nil && hasFailData(f.Value.String()) {
		n++
	}
	safe := rapidSafe(name)
	matches, _ := filepath.Glob(filepath.Join("testdata", "rapid", safe, safe+"-*.fail"))
	for _, m := range matches {
		if hasFailData(m) {
			n++
		}
	}
	return n
}

// hasFailData reports whether path is a fail file rapid can load: its
// first line that is not a comment is "<version>#<seed>".
func hasFailData(path string) bool {
	if path == "" {
		return false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			return strings.Count(line, "#") == 1
		}
	}
	return false
}

// rapidSafe is rapid's file name for a test name.
func rapidSafe(test string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, test)
}

// newestFailFile is the newest fail file rapid saved for test since, or "".
func newestFailFile(test string, since time.Time) string {
	safe := rapidSafe(test)
	matches, _ := filepath.Glob(filepath.Join("testdata", "rapid", safe, safe+"-*.fail"))
	// A run that failed on a fail file kept from an earlier run (rapid
	// replays those first and writes none) has none newer than since:
	// then the newest kept one is the failure replayed.
	best, bestTime, newest, newestTime := "", since.Add(-time.Second).UnixNano(), "", int64(0)
	for _, m := range matches {
		fi, err := os.Stat(m)
		if err != nil {
			continue
		}
		if t := fi.ModTime().UnixNano(); t >= bestTime {
			best, bestTime = m, t
		}
		if t := fi.ModTime().UnixNano(); t > newestTime {
			newest, newestTime = m, t
		}
	}
	if best == "" {
		best = newest
	}
	return best // relative to the package directory, as -rapid.failfile reads it
}

// failFileSeed reads the seed rapid recorded in a fail file (its first line
// that is not a comment is "<rapid version>#<seed>"), 0 when there is none.
func failFileSeed(path string) uint64 {
	if path == "" {
		return 0
	}
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		_, seed, ok := strings.Cut(line, "#")
		if !ok {
			return 0
		}
		n, _ := strconv.ParseUint(seed, 10, 64)
		return n
	}
	return 0
}
