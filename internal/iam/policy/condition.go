package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"
)

// opKind is how an operator compares.
type opKind uint8

const (
	opString opKind = iota
	opStringFold
	opStringLike
	opNumeric
	opDate
	opBool
	opIP
	opNull
)

// cmp selects the ordering comparison of numeric and date operators.
type cmp uint8

const (
	cmpEq cmp = iota
	cmpLt
	cmpLe
	cmpGt
	cmpGe
)

// operator describes one condition operator.
type operator struct {
	kind   opKind
	cmp    cmp
	negate bool
}

// operators is the table of supported condition operators. ...IfExists
// variants and ForAnyValue:/ForAllValues: prefixes are derived from it.
var operators = map[string]operator{
	"StringEquals":              {kind: opString},
	"StringNotEquals":           {kind: opString, negate: true},
	"StringEqualsIgnoreCase":    {kind: opStringFold},
	"StringNotEqualsIgnoreCase": {kind: opStringFold, negate: true},
	"StringLike":                {kind: opStringLike},
	"StringNotLike":             {kind: opStringLike, negate: true},
	"NumericEquals":             {kind: opNumeric, cmp: cmpEq},
	"NumericNotEquals":          {kind: opNumeric, cmp: cmpEq, negate: true},
	"NumericLessThan":           {kind: opNumeric, cmp: cmpLt},
	"NumericLessThanEquals":     {kind: opNumeric, cmp: cmpLe},
	"NumericGreaterThan":        {kind: opNumeric, cmp: cmpGt},
	"NumericGreaterThanEquals":  {kind: opNumeric, cmp: cmpGe},
	"DateEquals":                {kind: opDate, cmp: cmpEq},
	"DateNotEquals":             {kind: opDate, cmp: cmpEq, negate: true},
	"DateLessThan":              {kind: opDate, cmp: cmpLt},
	"DateLessThanEquals":        {kind: opDate, cmp: cmpLe},
	"DateGreaterThan":           {kind: opDate, cmp: cmpGt},
	"DateGreaterThanEquals":     {kind: opDate, cmp: cmpGe},
	"Bool":                      {kind: opBool},
	"IpAddress":                 {kind: opIP},
	"NotIpAddress":              {kind: opIP, negate: true},
	"Null":                      {kind: opNull},
}

// condition is one compiled (operator, key, values) triple.
type condition struct {
	op       operator
	ifExists bool
	forAll   bool
	key      condKey
	strs     []pattern // string operators
	nums     []float64 // numeric and date (Unix seconds) operators
	nets     []netip.Prefix
	flag     bool // Bool and Null
}

func compileConditions(i int, raw map[string]map[string]json.RawMessage, vars bool) ([]condition, error) {
	names := make([]string, 0, len(raw))
	for n := range raw {
		names = append(names, n)
	}
	sort.Strings(names) // report the first problem deterministically
	var out []condition
	for _, name := range names {
		field := "Condition." + name
		base := name
		forAll := false
		if b, ok := strings.CutPrefix(base, "ForAnyValue:"); ok {
			base = b
		} else if b, ok := strings.CutPrefix(base, "ForAllValues:"); ok {
			base, forAll = b, true
		}
		base, ifExists := strings.CutSuffix(base, "IfExists")
		op, ok := operators[base]
		if !ok || (ifExists && op.kind == opNull) {
			return nil, errAt(i, field, "unknown condition operator %q", name)
		}
		keys := make([]string, 0, len(raw[name]))
		for k := range raw[name] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !strings.Contains(k, ":") {
				return nil, errAt(i, field, "condition key %q is not of the form service:name", k)
			}
			c, err := compileCondition(op, newCondKey(k), raw[name][k], vars)
			if err != nil {
				return nil, errAt(i, field+"."+k, "%v", err)
			}
			c.ifExists, c.forAll = ifExists, forAll
			out = append(out, c)
		}
	}
	return out, nil
}

// conditionValues decodes a value or list of values of any JSON scalar type
// into strings.
func conditionValues(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	var list []json.RawMessage
	if len(raw) > 0 && raw[0] == '[' {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("want a value or a list of values")
		}
	} else {
		list = []json.RawMessage{raw}
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("no values")
	}
	out := make([]string, 0, len(list))
	for _, v := range list {
		var s string
		if json.Unmarshal(v, &s) == nil {
			out = append(out, s)
			continue
		}
		var n json.Number
		var b bool
		switch {
		case json.Unmarshal(v, &n) == nil:
			out = append(out, n.String())
		case json.Unmarshal(v, &b) == nil:
			out = append(out, strconv.FormatBool(b))
		default:
			return nil, fmt.Errorf("values must be strings, numbers or booleans")
		}
	}
	return out, nil
}

func compileCondition(op operator, key condKey, raw json.RawMessage, vars bool) (condition, error) {
	c := condition{op: op, key: key}
	vals, err := conditionValues(raw)
	if err != nil {
		return c, err
	}
	for _, v := range vals {
		switch op.kind {
		case opString, opStringFold, opStringLike:
			p, err := compilePattern(v, vars)
			if err != nil {
				return c, err
			}
			c.strs = append(c.strs, p)
		case opNumeric:
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return c, fmt.Errorf("%q is not a number", v)
			}
			c.nums = append(c.nums, n)
		case opDate:
			t, ok := parseDate(v)
			if !ok {
				return c, fmt.Errorf("%q is not a date (ISO 8601 or epoch seconds)", v)
			}
			c.nums = append(c.nums, t)
		case opBool, opNull:
			b, err := strconv.ParseBool(strings.ToLower(v))
			if err != nil || len(vals) != 1 {
				return c, fmt.Errorf("want one of true or false, got %q", v)
			}
			c.flag = b
		case opIP:
			p, err := parseNet(v)
			if err != nil {
				return c, err
			}
			c.nets = append(c.nets, p)
		}
	}
	return c, nil
}

func parseNet(v string) (netip.Prefix, error) {
	if strings.Contains(v, "/") {
		p, err := netip.ParsePrefix(v)
		if err != nil {
			return p, fmt.Errorf("%q is not an IP address or CIDR block", v)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(v)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not an IP address or CIDR block", v)
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// parseDate reads an ISO 8601 date, date-time or epoch seconds as Unix
// seconds (with fractions).
func parseDate(v string) (float64, bool) {
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		return n, true
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04Z07:00", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return float64(t.UnixNano()) / 1e9, true
		}
	}
	return 0, false
}

// eval reports whether the condition holds for r.
func (c *condition) eval(r *Request) bool {
	v, present := r.value(c.key)
	if c.op.kind == opNull {
		return !present == c.flag
	}
	if !present {
		return c.ifExists || c.op.negate || c.forAll
	}
	return c.matches(v, r) != c.op.negate
}

// matches reports whether v matches any of the condition's values.
func (c *condition) matches(v string, r *Request) bool {
	switch c.op.kind {
	case opString, opStringFold, opStringLike:
		for i := range c.strs {
			want, ok := c.strs[i].expand(r)
			if !ok {
				continue
			}
			switch {
			case c.op.kind == opString && v == want,
				c.op.kind == opStringFold && strings.EqualFold(v, want),
				c.op.kind == opStringLike && wildcardMatch(want, v):
				return true
			}
		}
	case opNumeric, opDate:
		var x float64
		var ok bool
		if c.op.kind == opNumeric {
			n, err := strconv.ParseFloat(v, 64)
			x, ok = n, err == nil
		} else {
			x, ok = parseDate(v)
		}
		if !ok {
			return false
		}
		for _, n := range c.nums {
			if compare(x, n, c.op.cmp) {
				return true
			}
		}
	case opBool:
		b, err := strconv.ParseBool(strings.ToLower(v))
		return err == nil && b == c.flag
	case opIP:
		a, err := netip.ParseAddr(v)
		if err != nil {
			return false
		}
		a = a.Unmap()
		for _, p := range c.nets {
			if p.Contains(a) {
				return true
			}
		}
	}
	return false
}

func compare(x, n float64, c cmp) bool {
	switch c {
	case cmpLt:
		return x < n
	case cmpLe:
		return x <= n
	case cmpGt:
		return x > n
	case cmpGe:
		return x >= n
	}
	return x == n
}
