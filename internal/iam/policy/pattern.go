package policy

import (
	"fmt"
	"strings"
)

// pattern is a Resource or condition value, with its ${...} policy
// variables split out at compile time so evaluation only concatenates.
type pattern struct {
	text  string // the value when it has no variables
	parts []part // nil when it has none
}

// part is a literal run or a variable.
type part struct {
	lit string
	key condKey
	v   bool
}

// compilePattern splits s into literals and variables; with vars false (an
// old-Version document) ${...} is literal text, as in AWS.
func compilePattern(s string, vars bool) (pattern, error) {
	if !vars || !strings.Contains(s, "${") {
		return pattern{text: s}, nil
	}
	var parts []part
	var lit strings.Builder
	for rest := s; rest != ""; {
		i := strings.Index(rest, "${")
		if i < 0 {
			lit.WriteString(rest)
			break
		}
		lit.WriteString(rest[:i])
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return pattern{}, fmt.Errorf("unterminated variable in %q", s)
		}
		name := rest[i+2 : i+j]
		rest = rest[i+j+1:]
		switch name {
		case "*", "?", "$": // AWS's escapes for the special characters
			lit.WriteString(name)
			continue
		case "":
			return pattern{}, fmt.Errorf("empty variable in %q", s)
		}
		if !strings.Contains(name, ":") {
			return pattern{}, fmt.Errorf("variable ${%s} in %q is not a condition key", name, s)
		}
		if lit.Len() > 0 {
			parts = append(parts, part{lit: lit.String()})
			lit.Reset()
		}
		parts = append(parts, part{key: newCondKey(name), v: true})
	}
	if lit.Len() > 0 {
		parts = append(parts, part{lit: lit.String()})
	}
	return pattern{text: s, parts: parts}, nil
}

// expand returns the pattern with r's variable values; ok is false when a
// variable has no value, and then the pattern matches nothing.
func (p *pattern) expand(r *Request) (string, bool) {
	if p.parts == nil {
		return p.text, true
	}
	var b strings.Builder
	for _, pt := range p.parts {
		if !pt.v {
			b.WriteString(pt.lit)
			continue
		}
		v, ok := r.value(pt.key)
		if !ok {
			return "", false
		}
		b.WriteString(v)
	}
	return b.String(), true
}
