package access

// match reports whether s matches pattern, where '*' stands for any run of
// characters (none included) and '?' for exactly one, as in IAM policies.
// foldCase compares ASCII letters without regard to case (actions);
// resources compare exactly. The work is O(len(pattern)·len(s)) at worst:
// on a mismatch only the last '*' seen backtracks.
func match(pattern, s string, foldCase bool) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p < len(pattern) && (pattern[p] == '?' || same(pattern[p], s[i], foldCase)):
			p++
			i++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

func same(a, b byte, foldCase bool) bool {
	if a == b {
		return true
	}
	if !foldCase {
		return false
	}
	return lower(a) == lower(b)
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
