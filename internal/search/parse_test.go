package search

import (
	"reflect"
	"strings"
	"testing"

	"github.com/anylift/anylift/internal/game"
)

func TestParseFilterAccepts(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`maximumSessions>=10 AND hasAvailablePlayerSessions=true`, `(maximumSessions >= 10 AND hasAvailablePlayerSessions = true)`},
		{`gameSessionName = 'Matt\'s Awesome Game 1'`, `gameSessionName = 'Matt\'s Awesome Game 1'`},
		{`gameSessionProperties.difficulty = "novice"`, `gameSessionProperties.difficulty = 'novice'`},
		{`gameSessionProperties.q = "a\"b\\c"`, `gameSessionProperties.q = 'a"b\\c'`},
		// A AND B OR C = (A AND B) OR C.
		{`playerSessionCount=1 AND playerSessionCount=2 OR playerSessionCount=3`,
			`((playerSessionCount = 1 AND playerSessionCount = 2) OR playerSessionCount = 3)`},
		{`playerSessionCount=1 OR playerSessionCount=2 AND playerSessionCount=3`,
			`(playerSessionCount = 1 OR (playerSessionCount = 2 AND playerSessionCount = 3))`},
		// NOT binds tighter than AND.
		{`NOT playerSessionCount=1 AND playerSessionCount=2`, `(NOT playerSessionCount = 1 AND playerSessionCount = 2)`},
		{`not (playerSessionCount=1 and playerSessionCount=2)`, `NOT (playerSessionCount = 1 AND playerSessionCount = 2)`},
		{`NOT NOT hasAvailablePlayerSessions <> FALSE`, `NOT NOT hasAvailablePlayerSessions <> false`},
		{`((creationTimeMillis<-5))`, `creationTimeMillis < -5`},
		{`maximumSessions<>3 or maximumSessions<3 Or maximumSessions>3`, `((maximumSessions <> 3 OR maximumSessions < 3) OR maximumSessions > 3)`},
		{"gameSessionId='arn:aws:gamelift:us-west-2::gamesession/fleet-1/gsess-1'\n", `gameSessionId = 'arn:aws:gamelift:us-west-2::gamesession/fleet-1/gsess-1'`},
		{`gameSessionProperties.level = '10'`, `gameSessionProperties.level = '10'`},
		{`gameSessionName=''`, `gameSessionName = ''`},
	} {
		e, err := ParseFilter(tc.in)
		if err != nil {
			t.Errorf("ParseFilter(%q): %v", tc.in, err)
			continue
		}
		if got := e.String(); got != tc.want {
			t.Errorf("ParseFilter(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestParseFilterRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, "empty expression"},
		{`   `, "empty expression"},
		{`foo = 1`, `unknown operand "foo" (operands: gameSessionId`},
		{`GameSessionName = 'x'`, `unknown operand "GameSessionName"`},
		{`maximumSessions = 'x'`, `type mismatch: maximumSessions compares number values but string 'x' is a string at position 19`},
		{`hasAvailablePlayerSessions > true`, `hasAvailablePlayerSessions compares boolean values, which allow only = and <>, not > at position 28`},
		{`gameSessionName < 'b'`, `only = and <>`},
		{`gameSessionProperties.level = 10`, `property values are strings: quote it, as '10'`},
		{`hasAvailablePlayerSessions = 1`, `type mismatch`},
		{`playerSessionCount = true`, `type mismatch`},
		{`(maximumSessions = 1`, `unbalanced parentheses: '(' never closed, opened at position 1`},
		{`maximumSessions = 1)`, `unbalanced parentheses: ')' without '(' at position 20`},
		{`()`, `empty parentheses at position 2`},
		{`maximumSessions = 1 maximumSessions = 2`, `unexpected "maximumSessions" after the end of the expression at position 21`},
		{`maximumSessions = 1 AND`, `expected a condition but found the end of the expression at position 24`},
		{`maximumSessions`, `expected a comparator`},
		{`maximumSessions != 1`, `unknown comparator '!' (use <> for not equal) at position 17`},
		{`maximumSessions =`, `expected a value but found the end of the expression`},
		{`maximumSessions = 1.5`, `must be a whole number`},
		{`maximumSessions = 99999999999999999999`, `out of range`},
		{`gameSessionName = 'abc`, `unterminated string starting at position 19`},
		{`gameSessionProperties. = 'a'`, `missing property key`},
		{`gameSessionName = abc`, `expected a value (a number, true, false or a quoted string) but found "abc"`},
		{`(maximumSessions = 1 maximumSessions = 2)`, `expected AND, OR or ')' but found "maximumSessions" at position 22`},
		{`gameSessionName = 'é' x`, `at position 23`},
	} {
		_, err := ParseFilter(tc.in)
		if !game.IsKind(err, game.InvalidRequest) {
			t.Errorf("ParseFilter(%q) = %v, want InvalidRequest", tc.in, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), "FilterExpression: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseFilter(%q) error %q, want it to contain %q", tc.in, err, tc.want)
		}
	}
}

func TestParseSort(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Sort
	}{
		{`creationTimeMillis ASC`, Sort{Operand: Operand{Field: CreationTimeMillis}}},
		{` playerSessionCount   desc `, Sort{Operand: Operand{Field: PlayerSessionCount}, Desc: true}},
		{`gameSessionProperties.difficulty Asc`, Sort{Operand: Operand{Field: Property, Key: "difficulty"}}},
	} {
		got, err := ParseSort(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseSort(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{`creationTimeMillis`, "missing sort order after creationTimeMillis: expected ASC or DESC at position 19"},
		{`creationTimeMillis UP`, `bad sort order "UP": expected ASC or DESC at position 20`},
		{`creationTimeMillis ASC, playerSessionCount DESC`, `unexpected ","`},
		{`nothing ASC`, `unknown operand "nothing"`},
		{`ASC`, `unknown operand "ASC"`},
		{` `, `empty expression`},
		{`(creationTimeMillis ASC)`, `expected an operand but found "("`},
	} {
		_, err := ParseSort(tc.in)
		if !game.IsKind(err, game.InvalidRequest) || !strings.Contains(err.Error(), tc.want) ||
			!strings.HasPrefix(err.Error(), "SortExpression: ") {
			t.Errorf("ParseSort(%q) = %v, want an InvalidRequest containing %q", tc.in, err, tc.want)
		}
	}
}
