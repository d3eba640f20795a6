package agent

import (
	"fmt"
	"strings"
)

// SplitParameters splits a runtime configuration's Parameters string into
// arguments at spaces and tabs. Single or double quotes group words with
// spaces ('a b' or "a b"); a backslash outside single quotes escapes the
// next character. No other shell syntax applies: no variables, no globs.
func SplitParameters(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inArg, quote, escaped := false, rune(0), false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case r == '\\' && quote != '\'':
			escaped, inArg = true, true
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inArg = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("parameters %q: unclosed %c quote", s, quote)
	}
	if escaped {
		return nil, fmt.Errorf("parameters %q end with a backslash", s)
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args, nil
}

// JoinParameters is the inverse of SplitParameters: it quotes each
// argument that needs it.
func JoinParameters(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\") {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
