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
	"strings"
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
func (o Operand) String() string {
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

func (c *Cond) String() string {
	var v string
	switch c.Operand.Field.Kind() {
	case Number:
		v = strconv.FormatInt(c.Num, 10)
	case Bool:
		v = strconv.FormatBool(c.Bool)
	default:
		v = Quote(c.Str)
	}
	return c.Operand.String() + " " + string(c.Op) + " " + v
}

func (n *Not) String() string { return "NOT " + n.X.String() }
func (a *And) String() string { return "(" + a.L.String() + " AND " + a.R.String() + ")" }
func (o *Or) String() string  { return "(" + o.L.String() + " OR " + o.R.String() + ")" }

// Quote returns s as a single-quoted string literal, escaping quotes and
// backslashes with a backslash.
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('\'')
	return b.String()
}

// Sort orders results by one operand.
type Sort struct {
	Operand Operand
	Desc    bool
}

// String returns the sort as a SortExpression.
func (s Sort) String() string {
	if s.Desc {
		return s.Operand.String() + " DESC"
	}
	return s.Operand.String() + " ASC"
}
