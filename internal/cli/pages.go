package cli

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// paging holds the aws CLI's pagination options of one command line.
type paging struct {
	startingToken string
	pageSize      int32
	maxItems      int
	off           bool // --no-paginate
}

// pageFlags are the flags a paginated operation takes instead of its own
// NextToken (or beside its Limit).
var pageFlags = []string{"starting-token", "page-size", "max-items"}

// setPaging reads the pagination flags kept as text by the parser.
func (g *globals) setPaging(c *command) error {
	if c.Pages == "" {
		for _, f := range pageFlags {
			if g.pageText[f] != "" {
				return usagef("Unknown options: --%s", f)
			}
		}
		return nil
	}
	g.paging.startingToken = g.pageText["starting-token"]
	for _, f := range []string{"page-size", "max-items"} {
		if v := g.pageText[f]; v != "" {
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil || n < 1 {
				return usagef("argument --%s: invalid int value: %q", f, v)
			}
			if f == "page-size" {
				g.paging.pageSize = int32(n)
			} else {
				g.paging.maxItems = int(n)
			}
		}
	}
	return nil
}

// paginates reports whether the call pages through every result: the
// operation pages, and neither --no-paginate nor the operation's own
// --next-token or --limit was given (either turns the paging off, as in
// the aws CLI, and then the paging flags are refused).
func (g *globals) paginates(c *command, in any) (bool, error) {
	if c.Pages == "" {
		return false, nil
	}
	off := g.paging.off
	rv := reflect.ValueOf(in).Elem()
	for _, own := range []string{"NextToken", "Limit"} {
		if f := rv.FieldByName(own); f.IsValid() && !f.IsNil() {
			off = true
		}
	}
	if !off {
		return true, nil
	}
	var used []string
	for _, f := range pageFlags {
		if g.pageText[f] != "" {
			used = append(used, "--"+f)
		}
	}
	if len(used) > 0 {
		return false, &usageError{plain: true, msg: "Error during pagination: Cannot specify --no-paginate along with pagination arguments: " + strings.Join(used, ", ")}
	}
	return false, nil
}

// pages is the outcome of paging: every page as read (the first page's
// results after the --starting-token's skip, the last one's cut at
// --max-items), and the resume token when --max-items stopped early.
type pages struct {
	list   []*object
	key    string // the result member
	resume string
}

// callPages calls c's operation page after page, as the aws CLI pages.
func (t *target) callPages(ctx context.Context, c *command, in any, pg paging) (*pages, error) {
	rv := reflect.ValueOf(in).Elem()
	if pg.pageSize > 0 {
		rv.FieldByName("Limit").Set(reflect.ValueOf(&pg.pageSize))
	}
	token, skip, err := decodeStartingToken(pg.startingToken)
	if err != nil {
		return nil, err
	}
	out := reflect.TypeOf(c.Output())
	res := &pages{key: c.Pages}
	total := 0
	for prev := ""; ; {
		setToken(rv, token)
		page, err := t.callOnce(ctx, c.Op, in, out)
		if err != nil {
			return nil, err
		}
		res.list = append(res.list, page)
		items, _ := page.get(c.Pages).([]any)
		items = items[min(skip, len(items)):]
		if pg.maxItems > 0 && total+len(items) > pg.maxItems {
			keep := pg.maxItems - total
			page.vals[c.Pages] = items[:keep]
			res.resume = encodeResumeToken(tokenOrNil(token), keep+skip)
			return res, nil
		}
		if _, ok := page.vals[c.Pages]; ok {
			page.vals[c.Pages] = items
		}
		total += len(items)
		skip = 0
		next, _ := page.get("NextToken").(string)
		if next == "" {
			return res, nil
		}
		if pg.maxItems > 0 && total == pg.maxItems {
			res.resume = encodeResumeToken(next, -1)
			return res, nil
		}
		if next == prev {
			return nil, fmt.Errorf("Error during pagination: The same next token was received twice: %s", next)
		}
		prev, token = next, next
	}
}

// merged is the pages as one answer, as the aws CLI prints it in JSON and
// tables: the result lists joined (the result member first), the first
// page's other members, and the resume token as NextToken.
func (p *pages) merged() *object {
	m := &object{vals: map[string]any{}}
	var results []any
	has := false
	for _, page := range p.list {
		if items, ok := page.get(p.key).([]any); ok {
			has = true
			results = append(results, items...)
		}
	}
	if has {
		m.keys = append(m.keys, p.key)
		m.vals[p.key] = append([]any{}, results...)
	}
	for _, k := range p.list[0].keys {
		if k != p.key && k != "NextToken" {
			m.keys = append(m.keys, k)
			m.vals[k] = p.list[0].vals[k]
		}
	}
	if p.resume != "" {
		m.keys = append(m.keys, "NextToken")
		m.vals["NextToken"] = p.resume
	}
	return m
}

// writeText prints the pages as the aws CLI's text output prints them:
// page by page, then the resume token on a NEXTTOKEN line; each of them
// through filter (the --query), when there is one.
func (p *pages) writeText(w io.Writer, filter func(any) (any, error)) error {
	write := func(v any) error {
		if filter != nil {
			var err error
			if v, err = filter(v); err != nil {
				return err
			}
		}
		return writeText(w, v)
	}
	for i, page := range p.list {
		cur := &object{vals: map[string]any{}}
		if i == 0 {
			for _, k := range page.keys {
				if k != p.key && k != "NextToken" {
					cur.keys = append(cur.keys, k)
					cur.vals[k] = page.vals[k]
				}
			}
		}
		if items, ok := page.vals[p.key]; ok {
			cur.keys = append(cur.keys, p.key)
			cur.vals[p.key] = items
		}
		if err := write(cur); err != nil {
			return err
		}
	}
	if p.resume != "" {
		inner := &object{keys: []string{"NextToken"}, vals: map[string]any{"NextToken": p.resume}}
		return write(&object{keys: []string{"NextToken"}, vals: map[string]any{"NextToken": inner}})
	}
	return nil
}

func setToken(rv reflect.Value, token string) {
	f := rv.FieldByName("NextToken")
	if token == "" {
		f.Set(reflect.Zero(f.Type()))
		return
	}
	f.Set(reflect.ValueOf(&token))
}

func tokenOrNil(t string) any {
	if t == "" {
		return nil
	}
	return t
}

// encodeResumeToken writes a resume token as botocore does: base64 of
// Python's json.dumps of {"NextToken": …, "boto_truncate_amount": …}.
// A truncate amount below 0 is left out.
func encodeResumeToken(token any, truncate int) string {
	var b strings.Builder
	b.WriteString(`{"NextToken": `)
	if s, ok := token.(string); ok {
		q, _ := json.Marshal(s)
		b.Write(q)
	} else {
		b.WriteString("null")
	}
	if truncate >= 0 {
		fmt.Fprintf(&b, `, "boto_truncate_amount": %d`, truncate)
	}
	b.WriteString("}")
	return base64.StdEncoding.EncodeToString([]byte(b.String()))
}

// decodeStartingToken reads a --starting-token: a resume token as printed
// (base64 JSON with NextToken and how many results of that page were
// already printed), or a bare NextToken from an answer.
func decodeStartingToken(s string) (token string, skip int, err error) {
	if s == "" {
		return "", 0, nil
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return s, 0, nil
	}
	var t struct {
		NextToken *string `json:"NextToken"`
		Truncate  int     `json:"boto_truncate_amount"`
	}
	if json.Unmarshal(raw, &t) != nil || t.Truncate < 0 {
		return s, 0, nil
	}
	if t.NextToken != nil {
		token = *t.NextToken
	}
	return token, t.Truncate, nil
}
