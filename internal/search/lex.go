package search

import (
	"strings"
	"unicode/utf8"

	"github.com/anylift/anylift/internal/game"
)

// tokKind is a token's class.
type tokKind int

const (
	tokEOF    tokKind = iota
	tokLParen         // (
	tokRParen         // )
	tokComp           // = <> < > <= >=
	tokString         // a quoted string; text holds the unescaped value
	tokWord           // a keyword, operand or number
	tokPunct          // a comma, which no rule takes
)

type token struct {
	kind tokKind
	text string
	pos  int // byte offset in the source
}

// lexer splits an expression into tokens. Whitespace between tokens is
// optional; a word runs until whitespace, a parenthesis, a comparator
// character or a quote.
type lexer struct {
	what string // "FilterExpression" or "SortExpression", for messages
	src  string
	off  int
}

// errorf returns an InvalidRequest error about the byte offset off.
func (l *lexer) errorf(off int, format string, args ...any) error {
	pos := utf8.RuneCountInString(l.src[:min(off, len(l.src))]) + 1
	args = append([]any{l.what}, args...)
	args = append(args, pos)
	return game.Errorf(game.InvalidRequest, "%s: "+format+" at position %d", args...)
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isWordByte(c byte) bool {
	return !isSpace(c) && !strings.ContainsRune("(),=<>!'\"", rune(c))
}

// next returns the next token, or an error for a character no token starts
// with or an unterminated string.
func (l *lexer) next() (token, error) {
	for l.off < len(l.src) && isSpace(l.src[l.off]) {
		l.off++
	}
	start := l.off
	if l.off >= len(l.src) {
		return token{kind: tokEOF, pos: start}, nil
	}
	switch c := l.src[l.off]; {
	case c == '(':
		l.off++
		return token{tokLParen, "(", start}, nil
	case c == ')':
		l.off++
		return token{tokRParen, ")", start}, nil
	case c == ',':
		l.off++
		return token{tokPunct, ",", start}, nil
	case c == '=':
		l.off++
		return token{tokComp, "=", start}, nil
	case c == '<' || c == '>':
		l.off++
		if l.off < len(l.src) && (l.src[l.off] == '=' || (c == '<' && l.src[l.off] == '>')) {
			l.off++
		}
		return token{tokComp, l.src[start:l.off], start}, nil
	case c == '!':
		return token{}, l.errorf(start, "unknown comparator '!' (use <> for not equal)")
	case c == '\'' || c == '"':
		return l.quoted(c)
	}
	for l.off < len(l.src) && isWordByte(l.src[l.off]) {
		l.off++
	}
	return token{tokWord, l.src[start:l.off], start}, nil
}

// quoted reads a string in quote q; a backslash makes the next character
// literal.
func (l *lexer) quoted(q byte) (token, error) {
	start := l.off
	l.off++
	var b strings.Builder
	for l.off < len(l.src) {
		c := l.src[l.off]
		switch {
		case c == '\\' && l.off+1 < len(l.src):
			b.WriteByte(l.src[l.off+1])
			l.off += 2
		case c == q:
			l.off++
			return token{tokString, b.String(), start}, nil
		default:
			b.WriteByte(c)
			l.off++
		}
	}
	return token{}, l.errorf(start, "unterminated string starting")
}
