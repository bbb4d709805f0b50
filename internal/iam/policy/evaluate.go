package policy

// Decision is the outcome of evaluating policies against a request.
type Decision uint8

// The three outcomes. NoDecision means no statement applied: the request
// is denied unless another policy set allows it (an implicit deny).
const (
	NoDecision Decision = iota
	Allow
	Deny
)

func (d Decision) String() string {
	switch d {
	case Allow:
		return "Allow"
	case Deny:
		return "Deny"
	}
	return "NoDecision"
}

// Evaluate applies AWS's rule to one set of policies: any matching Deny
// statement wins, else any matching Allow allows, else NoDecision. It is
// pure and safe for concurrent use; nil policies are skipped.
func Evaluate(policies []*Policy, r *Request) Decision {
	d := NoDecision
	for _, p := range policies {
		if p == nil {
			continue
		}
		switch p.evaluate(r) {
		case Deny:
			return Deny
		case Allow:
			d = Allow
		}
	}
	return d
}

func (p *Policy) evaluate(r *Request) Decision {
	d := NoDecision
	for i := range p.statements {
		st := &p.statements[i]
		if !st.applies(r) {
			continue
		}
		if st.effect == EffectDeny {
			return Deny
		}
		d = Allow
	}
	return d
}

// Sets is everything that bears on one request: the identity's policies
// (user and groups), an access key's session policy narrowing them, and the
// bucket's resource policy.
type Sets struct {
	Identity []*Policy
	// Session, when non-nil, intersects Identity: an identity Allow counts
	// only if the session policy allows too.
	Session *Policy
	// Inline, when non-nil, narrows further: the inline policy of an STS
	// session, whose parent may itself be an access key with a session
	// policy.
	Inline *Policy
	// Bucket is the bucket policy, or nil.
	Bucket *Policy
}

// Authorize decides a request over every policy set, as AWS does within one
// account: an explicit Deny in any set denies; otherwise the identity's
// Allow (within its session policy) or the bucket policy's Allow allows;
// otherwise the request is denied. Root is not evaluated: callers allow it
// before asking.
func Authorize(s Sets, r *Request) bool {
	id := Evaluate(s.Identity, r)
	var sess Decision = Allow
	if s.Session != nil {
		sess = s.Session.evaluate(r)
	}
	if s.Inline != nil {
		sess = intersect(sess, s.Inline.evaluate(r))
	}
	var bucket Decision
	if s.Bucket != nil {
		bucket = s.Bucket.evaluate(r)
	}
	if id == Deny || sess == Deny || bucket == Deny {
		return false
	}
	return id == Allow && sess == Allow || bucket == Allow
}

// intersect combines two narrowing policies' decisions: a Deny in either
// denies, both must Allow to allow.
func intersect(a, b Decision) Decision {
	switch {
	case a == Deny || b == Deny:
		return Deny
	case a == Allow && b == Allow:
		return Allow
	}
	return NoDecision
}

func (st *statement) applies(r *Request) bool {
	return st.principalMatches(r) && st.actionMatches(r.Action) &&
		st.resourceMatches(r) && st.conditionsHold(r)
}

func (st *statement) principalMatches(r *Request) bool {
	if st.principal == nil {
		return true
	}
	if st.principal.any {
		return true
	}
	if r.Anonymous {
		return false
	}
	for _, n := range st.principal.names {
		if n == r.Username || n == r.AccessKey || n == "arn:aws:iam:::user/"+r.Username {
			return true
		}
	}
	return false
}

func (st *statement) actionMatches(action string) bool {
	for _, a := range st.actions {
		if wildcardMatchFold(a, action) {
			return !st.notAction
		}
	}
	return st.notAction
}

func (st *statement) resourceMatches(r *Request) bool {
	for i := range st.resources {
		p, ok := st.resources[i].expand(r)
		if ok && (p == "*" || wildcardMatch(p, r.Resource)) {
			return !st.notResource
		}
	}
	return st.notResource
}

func (st *statement) conditionsHold(r *Request) bool {
	for i := range st.conditions {
		if !st.conditions[i].eval(r) {
			return false
		}
	}
	return true
}
