package cli

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// binaryCommands are the anylift commands that are not operations; a typo
// of one is suggested like a typo of an operation.
var binaryCommands = []string{"agent", "backup", "dev", "healthcheck", "help", "player-token", "restore", "serve", "version"}

// unknownOperation is the short error for a name that is no operation:
// the closest names, or what the name is when it is the API's name of an
// operation ("CreateGameSession") or an operation Anylift does not serve.
func unknownOperation(name string) error {
	kebab := kebabCase(name)
	if c, ok := served()[kebab]; ok && kebab != name {
		return usagef("unknown operation %q: the operation %s is %q here, as in \"aws gamelift\" (anylift %s ...)", name, c.Op, c.Name, c.Name)
	}
	for _, c := range commands {
		if c.Name == kebab {
			return usagef("unknown operation %q: %s is a GameLift operation Anylift does not serve (\"anylift help\" lists those it serves)", name, c.Op)
		}
	}
	near := closest(kebab, append(servedNames(), binaryCommands...))
	if len(near) == 0 {
		return usagef("unknown operation %q (\"anylift help\" lists the operations)", name)
	}
	return usagef("unknown operation %q; did you mean %s?", name, orList(near))
}

// kebabCase turns an API name (CreateGameSession) into the CLI's
// (create-game-session); other names are only lowered.
func kebabCase(s string) string {
	if strings.ContainsAny(s, "-_ ") {
		return strings.ToLower(strings.NewReplacer("_", "-", " ", "-").Replace(s))
	}
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// closest returns at most five of names near s: within an edit distance
// that grows with the name's length, or starting with s, nearest first.
func closest(s string, names []string) []string {
	type cand struct {
		name string
		d    int
	}
	var cands []cand
	limit := 1
	switch {
	case len(s) > 12:
		limit = 3
	case len(s) > 4:
		limit = 2
	}
	for _, n := range names {
		d := editDistance(s, n)
		switch {
		case d <= limit:
		case len(s) >= 3 && strings.HasPrefix(n, s):
			d = limit + 1 // a prefix ranks after every near miss
		case len(s) >= 6 && strings.Contains(n, s):
			d = limit + 2
		default:
			continue
		}
		cands = append(cands, cand{n, d})
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return a.d - b.d })
	var out []string
	for i := 0; i < len(cands) && i < 5; i++ {
		out = append(out, cands[i].name)
	}
	return out
}

// editDistance is the number of single-character insertions, deletions,
// substitutions and swaps of neighbours that turn a into b.
func editDistance(a, b string) int {
	if len(a) > 128 || len(b) > 128 {
		return max(len(a), len(b))
	}
	ar, br := []rune(a), []rune(b)
	rows := make([][]int, len(ar)+1)
	for i := range rows {
		rows[i] = make([]int, len(br)+1)
		rows[i][0] = i
	}
	for j := range br {
		rows[0][j+1] = j + 1
	}
	for i := 1; i <= len(ar); i++ {
		for j := 1; j <= len(br); j++ {
			cost := 1
			if ar[i-1] == br[j-1] {
				cost = 0
			}
			d := min(rows[i-1][j]+1, rows[i][j-1]+1, rows[i-1][j-1]+cost)
			if i > 1 && j > 1 && ar[i-1] == br[j-2] && ar[i-2] == br[j-1] {
				d = min(d, rows[i-2][j-2]+1)
			}
			rows[i][j] = d
		}
	}
	return rows[len(ar)][len(br)]
}

// orList is "a", "a or b", "a, b or c".
func orList(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return fmt.Sprintf("%s or %s", strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}
