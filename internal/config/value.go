package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// value is a parsed setting: its canonical text and its typed form.
type value struct {
	text string
	dur  time.Duration
	n    int64
	on   bool
}

// parse checks raw against k and returns its canonical form. Canonical text
// parses to itself, so a stored value reads back unchanged.
func (k *Key) parse(raw string) (value, error) {
	s := strings.TrimSpace(raw)
	switch k.Kind {
	case KindBool:
		switch strings.ToLower(s) {
		case "on":
			return value{text: "on", on: true}, nil
		case "off":
			return value{text: "off"}, nil
		}
		return value{}, k.invalid(raw, "want on or off")
	case KindEnum:
		s = strings.ToLower(s)
		if slices.Contains(k.Values, s) {
			return value{text: s}, nil
		}
		return value{}, k.invalid(raw, "want "+strings.Join(k.Values, " or "))
	case KindDuration:
		d, err := time.ParseDuration(s)
		if err != nil || d < k.MinDur || d > k.MaxDur || d <= 0 {
			return value{}, k.invalid(raw, fmt.Sprintf("want a duration from %v to %v, such as 500ms, 10s or 5m", k.MinDur, k.MaxDur))
		}
		return value{text: s, dur: d}, nil
	case KindInt:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < k.Min || n > k.Max {
			return value{}, k.invalid(raw, fmt.Sprintf("want an integer from %d to %d", k.Min, k.Max))
		}
		return value{text: strconv.FormatInt(n, 10), n: n}, nil
	}
	return value{}, k.invalid(raw, "key has no kind")
}

func (k *Key) invalid(raw, want string) error {
	return fmt.Errorf("%s: %w %q (%s)", k.Name, ErrInvalidValue, raw, want)
}

// ParseKV parses command-line "key=value" arguments into a map. The value is
// everything after the first '='; an empty value resets the key to its
// default. Keys are ASCII letters (lower-cased), digits, '_' and '-'. Every problem
// (no '=', empty or malformed key, a key given twice) is reported at once in
// a *ValidationError whose problems wrap ErrSyntax. Whether the keys exist is
// Set's business, not ParseKV's.
func ParseKV(args []string) (map[string]string, error) {
	kv := make(map[string]string, len(args))
	var problems []error
	for _, arg := range args {
		key, val, ok := strings.Cut(arg, "=")
		key = strings.TrimSpace(key)
		switch {
		case !ok:
			problems = append(problems, fmt.Errorf("%w %q: want key=value", ErrSyntax, arg))
		case !validKeyName(key):
			problems = append(problems, fmt.Errorf("%w %q: key must be letters, digits, '_' or '-'", ErrSyntax, arg))
		default:
			key = strings.ToLower(key)
			if _, dup := kv[key]; dup {
				problems = append(problems, fmt.Errorf("%w %q: key %s given twice", ErrSyntax, arg, key))
				continue
			}
			kv[key] = val
		}
	}
	if len(problems) > 0 {
		return nil, &ValidationError{Problems: problems}
	}
	return kv, nil
}

func validKeyName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}
