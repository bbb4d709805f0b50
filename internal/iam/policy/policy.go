// Package policy owns twinlake's access policies: parsing AWS IAM policy
// JSON (identity and bucket policies), compiling each document once into an
// evaluator, and the pure evaluation of a request against a set of them
// (explicit Deny wins, then any Allow, else no decision). It has no state
// and does no I/O; the built-in policies live here too.
package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Versions a policy document may declare; an absent Version means the old
// one, in which ${...} is not substituted, as in AWS.
const (
	Version2012 = "2012-10-17"
	Version2008 = "2008-10-17"
)

// Effect of a statement.
type Effect string

// The two effects.
const (
	EffectAllow Effect = "Allow"
	EffectDeny  Effect = "Deny"
)

// Policy is a parsed and compiled document. It is immutable and safe for
// concurrent use.
type Policy struct {
	version    string
	statements []statement
	raw        []byte // the document as given, compacted
}

// JSON returns the document, compacted, as it was given.
func (p *Policy) JSON() []byte { return p.raw }

// statement is one compiled Statement.
type statement struct {
	effect      Effect
	principal   *principal // nil: an identity policy statement
	actions     []string   // patterns; notAction inverts
	notAction   bool
	resources   []pattern
	notResource bool
	conditions  []condition
}

// principal is a bucket policy's Principal: "*" or a list of AWS names.
type principal struct {
	any   bool
	names []string
}

// document is the JSON shape of a policy. Fields that may be a string or a
// list are decoded as json.RawMessage and normalised by oneOrMany.
type document struct {
	Version   string          `json:"Version"`
	ID        string          `json:"Id"`
	Statement json.RawMessage `json:"Statement"`
}

type rawStatement struct {
	Sid          string                                `json:"Sid"`
	Effect       string                                `json:"Effect"`
	Principal    json.RawMessage                       `json:"Principal"`
	NotPrincipal json.RawMessage                       `json:"NotPrincipal"`
	Action       json.RawMessage                       `json:"Action"`
	NotAction    json.RawMessage                       `json:"NotAction"`
	Resource     json.RawMessage                       `json:"Resource"`
	NotResource  json.RawMessage                       `json:"NotResource"`
	Condition    map[string]map[string]json.RawMessage `json:"Condition"`
}

// Parse parses and compiles an identity policy (attached to users and
// groups, or an access key's session policy): its statements may not name
// a Principal. Problems are reported as *Error (matching ErrInvalidPolicy)
// naming the statement and field.
func Parse(data []byte) (*Policy, error) { return parse(data, false) }

// ParseBucket parses and compiles a bucket policy: every statement must name
// a Principal.
func ParseBucket(data []byte) (*Policy, error) { return parse(data, true) }

func parse(data []byte, bucket bool) (*Policy, error) {
	var doc document
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, errAt(-1, "", "not a JSON policy document: %v", err)
	}
	if dec.More() {
		return nil, errAt(-1, "", "trailing data after the document")
	}
	switch doc.Version {
	case Version2012, Version2008, "":
	default:
		return nil, errAt(-1, "Version", "unsupported version %q (want %q)", doc.Version, Version2012)
	}
	raws, err := statements(doc.Statement)
	if err != nil {
		return nil, err
	}
	p := &Policy{version: doc.Version}
	for i, rs := range raws {
		st, err := compileStatement(i, rs, doc.Version == Version2012)
		if err != nil {
			return nil, err
		}
		if bucket && st.principal == nil {
			return nil, errAt(i, "Principal", "missing (a bucket policy statement must name its principal)")
		}
		if !bucket && st.principal != nil {
			return nil, errAt(i, "Principal", "not allowed in an identity policy")
		}
		p.statements = append(p.statements, st)
	}
	var buf bytes.Buffer
	if json.Compact(&buf, data) == nil {
		p.raw = buf.Bytes()
	}
	return p, nil
}

// MustParse is Parse for documents known to be valid (the built-ins); it
// panics otherwise.
func MustParse(doc string) *Policy {
	p, err := Parse([]byte(doc))
	if err != nil {
		panic(err)
	}
	return p
}

// statements decodes Statement, which may be one object or a list.
func statements(raw json.RawMessage) ([]rawStatement, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errAt(-1, "Statement", "missing")
	}
	strict := func(b []byte, v any) error {
		d := json.NewDecoder(bytes.NewReader(b))
		d.DisallowUnknownFields()
		return d.Decode(v)
	}
	if raw[0] == '{' {
		var one rawStatement
		if err := strict(raw, &one); err != nil {
			return nil, errAt(0, "", "%v", err)
		}
		return []rawStatement{one}, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, errAt(-1, "Statement", "want an object or a list of objects")
	}
	if len(list) == 0 {
		return nil, errAt(-1, "Statement", "empty")
	}
	out := make([]rawStatement, len(list))
	for i, r := range list {
		if err := strict(r, &out[i]); err != nil {
			return nil, errAt(i, "", "%v", err)
		}
	}
	return out, nil
}

// oneOrMany decodes a string or a list of strings.
func oneOrMany(raw json.RawMessage) ([]string, bool, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false, nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []string{one}, true, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, true, fmt.Errorf("want a string or a list of strings")
	}
	if len(many) == 0 {
		return nil, true, fmt.Errorf("empty list")
	}
	return many, true, nil
}

func compileStatement(i int, rs rawStatement, vars bool) (statement, error) {
	var st statement
	switch Effect(rs.Effect) {
	case EffectAllow, EffectDeny:
		st.effect = Effect(rs.Effect)
	case "":
		return st, errAt(i, "Effect", "missing")
	default:
		return st, errAt(i, "Effect", "%q is neither Allow nor Deny", rs.Effect)
	}
	if len(rs.NotPrincipal) > 0 {
		return st, errAt(i, "NotPrincipal", "not supported")
	}
	if len(rs.Principal) > 0 {
		pr, err := compilePrincipal(rs.Principal)
		if err != nil {
			return st, errAt(i, "Principal", "%v", err)
		}
		st.principal = pr
	}
	if err := st.compileActions(i, rs); err != nil {
		return st, err
	}
	if err := st.compileResources(i, rs, vars); err != nil {
		return st, err
	}
	conds, err := compileConditions(i, rs.Condition, vars)
	if err != nil {
		return st, err
	}
	st.conditions = conds
	return st, nil
}

func (st *statement) compileActions(i int, rs rawStatement) error {
	acts, hasA, errA := oneOrMany(rs.Action)
	nacts, hasN, errN := oneOrMany(rs.NotAction)
	field, list, err := "Action", acts, errA
	switch {
	case hasA && hasN:
		return errAt(i, "Action", "Action and NotAction are exclusive")
	case !hasA && !hasN:
		return errAt(i, "Action", "missing (one of Action or NotAction is required)")
	case hasN:
		field, list, err, st.notAction = "NotAction", nacts, errN, true
	}
	if err != nil {
		return errAt(i, field, "%v", err)
	}
	for _, a := range list {
		if !validAction(a) {
			return errAt(i, field, "unknown action %q", a)
		}
	}
	st.actions = withAliases(list)
	return nil
}

func (st *statement) compileResources(i int, rs rawStatement, vars bool) error {
	res, hasR, errR := oneOrMany(rs.Resource)
	nres, hasN, errN := oneOrMany(rs.NotResource)
	field, list, err := "Resource", res, errR
	switch {
	case hasR && hasN:
		return errAt(i, "Resource", "Resource and NotResource are exclusive")
	case !hasR && !hasN:
		return errAt(i, "Resource", "missing (one of Resource or NotResource is required)")
	case hasN:
		field, list, err, st.notResource = "NotResource", nres, errN, true
	}
	if err != nil {
		return errAt(i, field, "%v", err)
	}
	for _, r := range list {
		if r != "*" && !strings.HasPrefix(r, "arn:") {
			return errAt(i, field, "%q is not an ARN (arn:aws:s3:::bucket/key) or *", r)
		}
		p, err := compilePattern(r, vars)
		if err != nil {
			return errAt(i, field, "%v", err)
		}
		st.resources = append(st.resources, p)
	}
	return nil
}

// compilePrincipal accepts "*", {"AWS": "*"} or {"AWS": [names]}.
func compilePrincipal(raw json.RawMessage) (*principal, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s != "*" {
			return nil, fmt.Errorf("a bare principal must be \"*\", got %q", s)
		}
		return &principal{any: true}, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf(`want "*" or {"AWS": ...}`)
	}
	pr := &principal{}
	for k, v := range m {
		if k != "AWS" {
			return nil, fmt.Errorf("principal type %q is not supported (only AWS)", k)
		}
		names, _, err := oneOrMany(v)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			if n == "*" {
				pr.any = true
			} else {
				pr.names = append(pr.names, n)
			}
		}
	}
	if !pr.any && len(pr.names) == 0 {
		return nil, fmt.Errorf("no AWS principal")
	}
	return pr, nil
}
