package ruleset

import (
	"math"
	"sort"
)

// Kind is the kind of an expression value.
type Kind int

const (
	None Kind = iota // no value (an aggregate of nothing)
	Num
	Str
	List
)

// Val is the value of a property expression.
type Val struct {
	Kind Kind
	N    float64
	S    string
	L    []Val
}

// TeamView is one team instance of a (candidate) match, for evaluation.
type TeamView struct {
	Name    string // instance name
	Base    string // definition name
	Players []PlayerView
}

// PlayerView is one player: id and attribute values (defaults applied).
type PlayerView struct {
	ID    string
	Attrs map[string]Value
}

// Eval evaluates e over the teams of a match (spec §4.7). Aggregations
// over a list of lists apply to each sub-list; flatten removes exactly one
// level; empty aggregates are None except count and sum, which are 0.
func (e *Expr) Eval(teams []TeamView) Val {
	if e.Func == "" {
		return e.evalPath(teams)
	}
	return apply(e.Func, e.Arg.Eval(teams))
}

func (e *Expr) evalPath(teams []TeamView) Val {
	var per []Val
	for _, t := range teams {
		if !e.AllTeams && !e.names(t) {
			continue
		}
		l := make([]Val, 0, len(t.Players))
		for _, p := range t.Players {
			if e.Select == SelectAttributes {
				l = append(l, attrVal(p.Attrs[e.Attribute]))
			} else {
				l = append(l, Val{Kind: Str, S: p.ID})
			}
		}
		per = append(per, Val{Kind: List, L: l})
	}
	if e.Grouped {
		return Val{Kind: List, L: per}
	}
	if len(per) == 0 {
		return Val{Kind: List}
	}
	return per[0]
}

func (e *Expr) names(t TeamView) bool {
	for _, n := range e.Teams {
		if n == t.Name || n == t.Base {
			return true
		}
	}
	return false
}

func attrVal(v Value) Val {
	switch v.Type {
	case TypeNumber:
		return Val{Kind: Num, N: v.N}
	case TypeString:
		return Val{Kind: Str, S: v.S}
	case TypeStringList:
		l := make([]Val, len(v.SL))
		for i, s := range v.SL {
			l[i] = Val{Kind: Str, S: s}
		}
		return Val{Kind: List, L: l}
	}
	return Val{}
}

// nested reports whether v is a list whose items are lists.
func nested(v Val) bool {
	for _, x := range v.L {
		if x.Kind != None {
			return x.Kind == List
		}
	}
	return false
}

func apply(fn string, v Val) Val {
	if v.Kind != List {
		if fn == "count" {
			return Val{Kind: Num, N: float64(btoi(v.Kind != None))}
		}
		return v
	}
	switch fn {
	case "flatten":
		var out []Val
		for _, x := range v.L {
			if x.Kind == List {
				out = append(out, x.L...)
			} else if x.Kind != None {
				out = append(out, x)
			}
		}
		return Val{Kind: List, L: out}
	case "set_intersection":
		if len(v.L) > 0 && nested(v.L[0]) {
			return mapList(fn, v)
		}
		return setIntersection(v.L)
	}
	if nested(v) {
		return mapList(fn, v)
	}
	if fn == "count" {
		n := 0
		for _, x := range v.L {
			n += btoi(x.Kind != None)
		}
		return Val{Kind: Num, N: float64(n)}
	}
	return numeric(fn, Numbers(v))
}

func mapList(fn string, v Val) Val {
	out := make([]Val, len(v.L))
	for i, x := range v.L {
		out[i] = apply(fn, x)
	}
	return Val{Kind: List, L: out}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Numbers returns the numbers in v, at any depth.
func Numbers(v Val) []float64 {
	var out []float64
	eachScalar(v, func(x Val) {
		if x.Kind == Num {
			out = append(out, x.N)
		}
	})
	return out
}

// Scalars returns the non-list values in v, at any depth.
func Scalars(v Val) []Val {
	var out []Val
	eachScalar(v, func(x Val) { out = append(out, x) })
	return out
}

// eachScalar calls f with each number and string in v, at any depth, in
// order.
func eachScalar(v Val, f func(Val)) {
	switch v.Kind {
	case Num, Str:
		f(v)
	case List:
		for _, x := range v.L {
			eachScalar(x, f)
		}
	}
}

func numeric(fn string, xs []float64) Val {
	if len(xs) == 0 {
		if fn == "sum" {
			return Val{Kind: Num}
		}
		return Val{}
	}
	r := xs[0]
	switch fn {
	case "min":
		for _, x := range xs {
			r = math.Min(r, x)
		}
	case "max":
		for _, x := range xs {
			r = math.Max(r, x)
		}
	case "sum", "avg", "stddev":
		r = 0
		for _, x := range xs {
			r += x
		}
		if fn != "sum" {
			r /= float64(len(xs))
		}
		if fn == "stddev" {
			mean, ss := r, 0.0
			for _, x := range xs {
				ss += (x - mean) * (x - mean)
			}
			r = math.Sqrt(ss / float64(len(xs)))
		}
	case "median":
		s := append([]float64(nil), xs...)
		sort.Float64s(s)
		r = s[len(s)/2]
		if len(s)%2 == 0 {
			r = (s[len(s)/2-1] + r) / 2
		}
	}
	return Val{Kind: Num, N: r}
}

// setIntersection returns the strings present in every list of ls, in the
// order of the first.
func setIntersection(ls []Val) Val {
	out := Val{Kind: List}
	if len(ls) == 0 {
		return out
	}
	count := map[string]int{}
	for _, l := range ls {
		seen := map[string]bool{}
		for _, x := range Scalars(l) {
			if x.Kind == Str && !seen[x.S] {
				seen[x.S] = true
				count[x.S]++
			}
		}
	}
	done := map[string]bool{}
	for _, x := range Scalars(ls[0]) {
		if x.Kind == Str && count[x.S] == len(ls) && !done[x.S] {
			done[x.S] = true
			out.L = append(out.L, x)
		}
	}
	return out
}
