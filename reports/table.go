package reports

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxTableWidth is the widest a table row of a certification page may be
// as Markdown source, in characters: it reads unwrapped in a 100-column
// terminal (and GitHub's job summary renders the same rows as a table).
const MaxTableWidth = 100

// writeTable writes a Markdown table of header and rows (cells already
// escaped for a table), each row at most MaxTableWidth characters wide: a
// row that would be wider has its longest cells replaced, longest first,
// by a note mark ("[1]", after the cell's first word when that is short:
// "GET [1]") until it fits, and the notes follow the table as a list
// ("- [1] GET /v1/charges?merchant_reference=…"), one per distinct cell.
// The first deciding columns are moved out only when the others are not
// enough; the header must fit by itself.
func writeTable(b *strings.Builder, header []string, rows [][]string, deciding int) {
	var notes []string
	mark := map[string]string{}
	b.WriteString(tableRow(header))
	b.WriteString("|" + strings.Repeat("---|", len(header)) + "\n")
	for _, row := range rows {
		row = append([]string(nil), row...)
		moved := map[int]bool{}
		for width(tableRow(row)) > MaxTableWidth+1 { // +1: the newline
			longest := -1
			for _, from := range []int{deciding, 0} {
				for i := from; i < len(row); i++ {
					if !moved[i] && width(row[i]) > len("[99]") && (longest < 0 || width(row[i]) > width(row[longest])) {
						longest = i
					}
				}
				if longest >= 0 {
					break
				}
			}
			if longest < 0 {
				break // nothing left to move: the header's own width
			}
			c := row[longest]
			if mark[c] == "" {
				notes = append(notes, c)
				mark[c] = "[" + strconv.Itoa(len(notes)) + "]"
			}
			row[longest], moved[longest] = mark[c], true
			if first, _, ok := strings.Cut(c, " "); ok && width(first) <= 6 && width(first)+1+width(mark[c]) < width(c) {
				row[longest] = first + " " + mark[c]
			}
		}
		b.WriteString(tableRow(row))
	}
	b.WriteString("\n")
	for i, n := range notes {
		fmt.Fprintf(b, "- [%d] %s\n", i+1, n)
	}
	if len(notes) > 0 {
		b.WriteString("\n")
	}
}

// tableRow is cells as one table row, with its newline.
func tableRow(cells []string) string {
	return "| " + strings.Join(cells, " | ") + " |\n"
}

// width is s's width in characters (a terminal column each).
func width(s string) int { return utf8.RuneCountInString(s) }
