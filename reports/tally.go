package reports

import (
	"fmt"
	"sort"
	"strings"
)

// Tally is counts as a phrase, "429×3, no answer (timeout)×1", in name
// order; "" when nothing was counted.
func Tally(counts map[string]int) string {
	var out []string
	for k, n := range counts {
		if n > 0 {
			out = append(out, fmt.Sprintf("%s×%d", k, n))
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
