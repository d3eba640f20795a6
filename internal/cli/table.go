package cli

import (
	"io"
	"math"
	"slices"
	"strings"

	"golang.org/x/text/width"
)

// The table output draws the answer as the aws CLI's --output table does:
// a section per structure and per list of structures, titled by its key
// (the whole answer by the operation name), nested sections indented by
// a bar on each side; scalar members as a header row and a value row, or
// as name/value rows when a section has one value row and the table is
// wider than the terminal (taken as 80 columns, as for a pipe).

const tableWidth = 80

type section struct {
	title   string
	indent  int
	headers []string
	rows    [][]string
	widths  []int // widest cell per column
}

func (s *section) note(cells []string) {
	for i, c := range cells {
		if i >= len(s.widths) {
			s.widths = append(s.widths, 0)
		}
		s.widths[i] = max(s.widths[i], textWidth(c))
	}
}

func (s *section) addHeader(h []string) { s.note(h); s.headers = h }
func (s *section) addRow(r []string)    { s.note(r); s.rows = append(s.rows, r) }

// textWidth counts East Asian wide, full-width and ambiguous characters
// as two columns, as the aws CLI does.
func textWidth(s string) int {
	n := 0
	for _, r := range s {
		switch width.LookupRune(r).Kind() {
		case width.EastAsianWide, width.EastAsianFullwidth, width.EastAsianAmbiguous:
			n += 2
		default:
			n++
		}
	}
	return n
}

type tableBuilder struct{ sections []*section }

func (t *tableBuilder) add(title string, indent int) *section {
	s := &section{title: title, indent: indent}
	t.sections = append(t.sections, s)
	return s
}

// build adds v's sections; it reports false when v is empty (nothing drawn).
func (t *tableBuilder) build(title string, v any, indent int, cur *section) bool {
	if isEmpty(v) {
		return false
	}
	if title != "" || cur == nil {
		cur = t.add(title, indent)
	}
	switch x := v.(type) {
	case []any:
		if _, ok := x[0].(*object); ok {
			t.fromList(x, indent, title, cur)
			return true
		}
		for _, el := range x {
			if l, ok := el.([]any); ok && allScalar(l) {
				cur.addRow(strs(l))
			} else if !isContainer(el) {
				cur.addRow([]string{scalarText(el, false)})
			} else {
				t.build("", el, indent, cur)
			}
		}
	case *object:
		t.fromObject(x, indent, cur)
	}
	return true
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case *object:
		return len(x.keys) == 0
	case []any:
		return len(x) == 0
	case string:
		return x == ""
	case nil:
		return true
	case bool:
		return !x
	}
	return false
}

func allScalar(l []any) bool {
	for _, el := range l {
		if isContainer(el) {
			return false
		}
	}
	return true
}

func strs(l []any) []string {
	out := make([]string, len(l))
	for i, el := range l {
		out[i] = scalarText(el, false)
	}
	return out
}

func (t *tableBuilder) fromObject(o *object, indent int, cur *section) {
	headers, more := splitKeys(o)
	if len(headers) == 1 {
		cur.addRow([]string{headers[0], scalarText(o.get(headers[0]), false)})
	} else if len(headers) > 0 {
		cur.addHeader(headers)
		row := make([]string, len(headers))
		for i, h := range headers {
			row[i] = scalarText(o.get(h), false)
		}
		cur.addRow(row)
	}
	for _, k := range more {
		t.build(k, o.get(k), indent+1, nil)
	}
}

func (t *tableBuilder) fromList(list []any, indent int, title string, cur *section) {
	hs, ms := map[string]bool{}, map[string]bool{}
	for _, el := range list {
		if o, ok := el.(*object); ok {
			h, m := splitKeys(o)
			for _, k := range h {
				hs[k] = true
			}
			for _, k := range m {
				ms[k] = true
			}
		}
	}
	headers, more := setKeys(hs), setKeys(ms)
	cur.addHeader(headers)
	for i, el := range list {
		o, _ := el.(*object)
		if o == nil {
			o = &object{vals: map[string]any{}}
		}
		if i > 0 && len(more) > 0 {
			cur = t.add(title, indent)
			cur.addHeader(headers)
		}
		row := make([]string, len(headers))
		for j, h := range headers {
			if x, ok := o.vals[h]; ok {
				row[j] = scalarText(x, false)
			}
		}
		cur.addRow(row)
		for _, k := range more {
			if x, ok := o.vals[k]; ok {
				t.build(k, x, indent+1, nil)
			}
		}
	}
}

func setKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// splitKeys sorts o's keys into scalar ones and the rest.
func splitKeys(o *object) (scalars, more []string) {
	for _, k := range sortedKeys(o) {
		if isContainer(o.vals[k]) {
			more = append(more, k)
		} else {
			scalars = append(scalars, k)
		}
	}
	return scalars, more
}

// writeTable draws v titled by the operation name; nothing for an empty
// answer.
func writeTable(w io.Writer, op string, v any) error {
	t := &tableBuilder{}
	if !t.build(op, v, 0, nil) {
		return nil
	}
	maxW := t.maxWidth()
	if maxW > tableWidth {
		t.verticalize()
		maxW = t.maxWidth()
	}
	var b strings.Builder
	b.WriteString(strings.Repeat("-", maxW) + "\n")
	for _, s := range t.sections {
		s.render(&b, maxW)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (t *tableBuilder) maxWidth() int {
	m := 0
	for _, s := range t.sections {
		m = max(m, s.totalWidth())
	}
	return m
}

// totalWidth is the width the section needs: its columns with padding 4,
// the border and the indentation bars, or its title.
func (s *section) totalWidth() int {
	total := 0
	for _, w := range s.widths {
		total += w + 4
	}
	total += 2 + 2*s.indent
	return max(textWidth(s.title)+2+2*s.indent, total)
}

// verticalize turns each section of one value row into name/value rows.
func (t *tableBuilder) verticalize() {
	for i, s := range t.sections {
		if len(s.rows) != 1 || len(s.headers) == 0 {
			continue
		}
		n := &section{title: s.title, indent: s.indent}
		for j, h := range s.headers {
			if j < len(s.rows[0]) {
				n.addRow([]string{h, s.rows[0][j]})
			}
		}
		t.sections[i] = n
	}
}

// columnWidths scales the columns (padded by 4) to fill width exactly.
func (s *section) columnWidths(width int) []int {
	if len(s.widths) == 0 {
		return nil
	}
	sum := 0
	for _, w := range s.widths {
		sum += w + 4
	}
	scale := float64(width) / float64(sum)
	out := make([]int, len(s.widths))
	total := 0
	for i, w := range s.widths {
		out[i] = int(pyRound(scale * float64(w+4)))
		total += out[i]
	}
	for off := total - width; off != 0; {
		for k := range out {
			i := k
			if off < 0 {
				i = len(out) - 1 - k
			}
			if off > 0 {
				out[i]--
				off--
			} else {
				out[i]++
				off++
			}
			if off == 0 {
				break
			}
		}
	}
	return out
}

// pyRound rounds half to even, as Python's round does.
func pyRound(f float64) float64 { return math.RoundToEven(f) }

func (s *section) render(b *strings.Builder, maxW int) {
	bar := strings.Repeat("|", s.indent)
	line := func(text string) { b.WriteString(bar + text + bar + "\n") }
	width := maxW - 2*s.indent
	if s.title != "" {
		line(center(s.title, width, "|", "|"))
		if len(s.headers) == 0 && len(s.rows) == 0 {
			line("+" + strings.Repeat("-", width-2) + "+")
		}
	}
	widths := s.columnWidths(width)
	if len(s.headers) > 0 {
		line(rule(widths))
		var h strings.Builder
		for i, w := range widths {
			left := ""
			if i == 0 {
				left = "|"
			}
			h.WriteString(center(cell(s.headers, i), w, left, "|"))
		}
		line(h.String())
	}
	if len(s.rows) == 0 || len(widths) == 0 {
		return
	}
	line(rule(widths))
	for _, r := range s.rows {
		var row strings.Builder
		for i, w := range widths {
			left := ""
			if i == 0 {
				left = "|"
			}
			row.WriteString(alignLeft(cell(r, i), w, left, "|"))
		}
		line(row.String())
	}
	line(rule(widths))
}

func cell(cells []string, i int) string {
	if i < len(cells) {
		return cells[i]
	}
	return ""
}

func rule(widths []int) string {
	var b strings.Builder
	for i, w := range widths {
		if i == 0 {
			b.WriteString("+" + strings.Repeat("-", max(w-2, 0)) + "+")
		} else {
			b.WriteString(strings.Repeat("-", max(w-1, 0)) + "+")
		}
	}
	return b.String()
}

func center(text string, length int, left, right string) string {
	n := textWidth(text)
	start := length/2 - n/2 - 1
	done := len(left) + start + n
	return left + strings.Repeat(" ", max(start, 0)) + text + strings.Repeat(" ", max(length-len(right)-done, 0)) + right
}

func alignLeft(text string, length int, left, right string) string {
	n := textWidth(text)
	pad := 2
	if length-(n+2+len(left)+len(right)) < 0 {
		pad = 0
	}
	done := len(left) + pad + n
	return left + strings.Repeat(" ", pad) + text + strings.Repeat(" ", max(length-done-len(right), 0)) + right
}
