package policy

// wildcardMatch reports whether s matches pattern, where '*' matches any run
// of characters (including none) and '?' exactly one. It does not allocate:
// the classic greedy algorithm backtracks only to the last '*'.
func wildcardMatch(pattern, s string) bool { return globMatch(pattern, s, false) }

// wildcardMatchFold is wildcardMatch ignoring ASCII case, as IAM compares
// action names.
func wildcardMatchFold(pattern, s string) bool { return globMatch(pattern, s, true) }

func globMatch(pattern, s string, fold bool) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i] || fold && lower(pattern[p]) == lower(s[i])):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
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

// hasWildcard reports whether s holds '*' or '?'.
func hasWildcard(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '*' || s[i] == '?' {
			return true
		}
	}
	return false
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
