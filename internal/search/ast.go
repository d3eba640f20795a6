// Package search parses SearchGameSessions expressions: a
// FilterExpression into an Expr tree and a SortExpression into a
// Sort. Parsing checks everything the grammar and the operand types can
// tell; it never looks at data. Errors are *game.Error of kind
// InvalidRequest, naming the expression, what was wrong and where (a
// 1-based character position).
//
// The tree is plain data: the store compiles it to SQL. Every value a
// user wrote stays a value in the tree (Cond.Str, Cond.Num, Cond.Bool),
// never a fragment of SQL.
package search

import (
	"strconv"
)

// Field is a searchable attribute of a game session.
type Field int

// The operands SearchGameSessions knows.
const (
	GameSessionID Field = iota + 1
	GameSessionName
	Property // gameSessionProperties.<key>
	MaximumSessions
	CreationTimeMillis
	PlayerSessionCount
	HasAvailablePlayerSessions
)

// Kind is the type of values an operand compares with.
type Kind int

// Value kinds.
const (
	String Kind = iota + 1
	Number
	Bool
)

var fieldNames = map[string]Field{
	"gameSessionId":              GameSessionID,
	"gameSessionName":            GameSessionName,
	"maximumSessions":            MaximumSessions,
	"creationTimeMillis":         CreationTimeMillis,
	"playerSessionCount":         PlayerSessionCount,
	"hasAvailablePlayerSessions": HasAvailablePlayerSessions,
}

// PropertyPrefix starts an operand naming a game property.
const PropertyPrefix = "gameSessionProperties."

// operandList is the list of operands, for error messages.
const operandList = "gameSessionId, gameSessionName, gameSessionProperties.<key>, maximumSessions, " +
	"creationTimeMillis, playerSessionCount, hasAvailablePlayerSessions"

// Kind returns the kind of values f compares with.
func (f Field) Kind() Kind {
	switch f {
	case MaximumSessions, CreationTimeMillis, PlayerSessionCount:
		return Number
	case HasAvailablePlayerSessions:
		return Bool
	}
	return String
}

// Operand is a field, with the property key when the field is Property.
type Operand struct {
	Field Field
	Key   string
}

// String returns the operand as written in an expression.
func (o Operand) String() string { return string(o.Append(nil)) }

// Append appends the operand as written in an expression to dst.
func (o Operand) Append(dst []byte) []byte {
	if o.Field == Property {
		return append(append(dst, PropertyPrefix...), o.Key...)
	}
	if o.Field > 0 && int(o.Field) < len(fieldSpelling) && fieldSpelling[o.Field] != "" {
		return append(dst, fieldSpelling[o.Field]...)
	}
	return append(dst, '?')
}

// fieldSpelling is fieldNames by field.
var fieldSpelling = func() []string {
	s := make([]string, HasAvailablePlayerSessions+1)
	for name, f := range fieldNames {
		s[f] = name
	}
	return s
}()

// Comparator is one of = <> < > <= >=.
type Comparator string

// The comparators.
const (
	Eq Comparator = "="
	Ne Comparator = "<>"
	Lt Comparator = "<"
	Gt Comparator = ">"
	Le Comparator = "<="
	Ge Comparator = ">="
)

// Expr is a node of a filter: *Cond, *Not, *And or *Or.
type Expr interface {
	// String returns the node as a filter expression that parses back to
	// an equal tree; And and Or are always parenthesized.
	String() string
}

// Cond compares an operand with a value. Exactly one of Str, Num, Bool is
// meaningful, as Operand.Field.Kind() says.
type Cond struct {
	Operand Operand
	Op      Comparator
	Str     string
	Num     int64
	Bool    bool
}

// Not inverts X.
type Not struct{ X Expr }

// And holds when both L and R hold.
type And struct{ L, R Expr }

// Or holds when L or R holds.
type Or struct{ L, R Expr }

// AppendExpr appends e as a filter expression, as e.String() spells it,
// to dst.
func AppendExpr(dst []byte, e Expr) []byte {
	switch e := e.(type) {
	case *Cond:
		dst = append(e.Operand.Append(dst), ' ')
		dst = append(append(dst, e.Op...), ' ')
		switch e.Operand.Field.Kind() {
		case Number:
			return strconv.AppendInt(dst, e.Num, 10)
		case Bool:
			return strconv.AppendBool(dst, e.Bool)
		}
		return AppendQuote(dst, e.Str)
	case *Not:
		return AppendExpr(append(dst, "NOT "...), e.X)
	case *And:
		dst = AppendExpr(append(dst, '('), e.L)
		return append(AppendExpr(append(dst, " AND "...), e.R), ')')
	case *Or:
		dst = AppendExpr(append(dst, '('), e.L)
		return append(AppendExpr(append(dst, " OR "...), e.R), ')')
	case nil:
		return dst
	}
	return append(dst, e.String()...)
}

func (c *Cond) String() string { return string(AppendExpr(nil, c)) }
func (n *Not) String() string  { return string(AppendExpr(nil, n)) }
func (a *And) String() string  { return string(AppendExpr(nil, a)) }
func (o *Or) String() string   { return string(AppendExpr(nil, o)) }

// Quote returns s as a single-quoted string literal, escaping quotes and
// backslashes with a backslash.
func Quote(s string) string { return string(AppendQuote(nil, s)) }

// AppendQuote appends Quote(s) to dst.
func AppendQuote(dst []byte, s string) []byte {
	dst = append(dst, '\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' || s[i] == '\\' {
			dst = append(dst, '\\')
		}
		dst = append(dst, s[i])
	}
	return append(dst, '\'')
}

// Sort orders results by one operand.
type Sort struct {
	Operand Operand
	Desc    bool
}

// String returns the sort as a SortExpression.
func (s Sort) String() string { return string(s.Append(nil)) }

// Append appends the sort as a SortExpression to dst.
func (s Sort) Append(dst []byte) []byte {
	dst = s.Operand.Append(dst)
	if s.Desc {
		return append(dst, " DESC"...)
	}
	return append(dst, " ASC"...)
}
