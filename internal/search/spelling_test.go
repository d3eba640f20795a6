package search

import (
	"strconv"
	"strings"
	"testing"
)

// The spelling of a tree is part of the NextToken contract (a search's
// fingerprint hashes it), so it must not change. spelledBefore is the
// spelling as it was first written, by concatenating strings; the
// appending one must agree with it on every tree the parser makes.

func spelledBefore(e Expr) string {
	switch e := e.(type) {
	case *Cond:
		var v string
		switch e.Operand.Field.Kind() {
		case Number:
			v = strconv.FormatInt(e.Num, 10)
		case Bool:
			v = strconv.FormatBool(e.Bool)
		default:
			var b strings.Builder
			b.WriteByte('\'')
			for i := 0; i < len(e.Str); i++ {
				if e.Str[i] == '\'' || e.Str[i] == '\\' {
					b.WriteByte('\\')
				}
				b.WriteByte(e.Str[i])
			}
			b.WriteByte('\'')
			v = b.String()
		}
		return operandBefore(e.Operand) + " " + string(e.Op) + " " + v
	case *Not:
		return "NOT " + spelledBefore(e.X)
	case *And:
		return "(" + spelledBefore(e.L) + " AND " + spelledBefore(e.R) + ")"
	case *Or:
		return "(" + spelledBefore(e.L) + " OR " + spelledBefore(e.R) + ")"
	}
	panic("unknown node")
}

func operandBefore(o Operand) string {
	if o.Field == Property {
		return PropertyPrefix + o.Key
	}
	for name, f := range fieldNames {
		if f == o.Field {
			return name
		}
	}
	return "?"
}

func FuzzSpellingUnchanged(f *testing.F) {
	for _, s := range filterSeeds {
		f.Add(s, "creationTimeMillis DESC")
	}
	f.Add(`gameSessionProperties.k = 'a\\b'`, `gameSessionProperties.x asc`)
	f.Fuzz(func(t *testing.T, filter, sort string) {
		if e, err := ParseFilter(filter); err == nil {
			if got, want := e.String(), spelledBefore(e); got != want {
				t.Fatalf("%q spelled %q, was %q", filter, got, want)
			}
			if got := string(AppendExpr([]byte("x"), e)); got != "x"+spelledBefore(e) {
				t.Fatalf("%q appended as %q", filter, got)
			}
		}
		if s, err := ParseSort(sort); err == nil {
			want := operandBefore(s.Operand) + " ASC"
			if s.Desc {
				want = operandBefore(s.Operand) + " DESC"
			}
			if got := s.String(); got != want {
				t.Fatalf("%q spelled %q, was %q", sort, got, want)
			}
		}
	})
}

func TestOperandSpelling(t *testing.T) {
	for _, f := range []Field{0, GameSessionID, GameSessionName, Property, MaximumSessions, CreationTimeMillis, PlayerSessionCount, HasAvailablePlayerSessions, 99, -1} {
		o := Operand{Field: f, Key: "k"}
		if o.String() != operandBefore(o) {
			t.Errorf("field %d: %q, was %q", f, o.String(), operandBefore(o))
		}
	}
}
