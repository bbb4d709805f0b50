package lifecycle

import (
	"fmt"
	"strings"
	"time"
)

// Version is what the rules see of one object version.
type Version struct {
	ID           string
	ModTime      int64 // Unix nanoseconds
	DeleteMarker bool
	Size         int64
	Tags         map[string]string
	// LegalHold is set when the version is under legal hold; RetainUntil
	// is its retention's end (Unix nanoseconds, 0 for none). A locked
	// noncurrent version is kept until its lock ends.
	LegalHold   bool
	RetainUntil int64
}

// Upload is an incomplete multipart upload of the key.
type Upload struct {
	ID        string
	Initiated int64 // Unix nanoseconds
}

// Plan is what is due for one key now, and when to look again.
type Plan struct {
	// ExpireCurrent is set when the current version has expired: the
	// object layer deletes it as a client delete would (a delete marker
	// on a versioned bucket).
	ExpireCurrent *Expiry
	// RemoveMarker is set when the current version is a delete marker that
	// has expired (it is, or is about to be, the key's only version).
	RemoveMarker bool
	// Purge lists noncurrent versions to remove permanently.
	Purge []string
	// Abort lists incomplete multipart uploads to abort.
	Abort []string
	// Next is the earliest future time something else becomes due for the
	// key, 0 when nothing will without a change to the key.
	Next int64
}

// Empty reports whether the plan does nothing now.
func (p Plan) Empty() bool {
	return p.ExpireCurrent == nil && !p.RemoveMarker && len(p.Purge) == 0 && len(p.Abort) == 0
}

// Expiry is a current version's expiration: when and by which rule.
type Expiry struct {
	VersionID string
	Due       int64
	RuleID    string
}

// DueDays is when something that started at base is days lifecycle days
// old: base plus the days, rounded up to the next midnight UTC, as S3
// computes expiry dates. A shortened day (a test site's) counts without
// rounding, so a rule acts the given number of such days after base.
func DueDays(base int64, days int, day time.Duration) int64 {
	d := int64(day)
	t := base + int64(days)*d
	if day != 24*time.Hour {
		return t
	}
	if r := t % d; r != 0 {
		t += d - r
	}
	return t
}

func (p *Plan) later(t int64) {
	if t > 0 && (p.Next == 0 || t < p.Next) {
		p.Next = t
	}
}

// prefix is the rule's key prefix ("" for all).
func (r *Rule) prefix() string {
	switch {
	case r.Prefix != nil:
		return *r.Prefix
	case r.Filter == nil:
		return ""
	case r.Filter.Prefix != nil:
		return *r.Filter.Prefix
	case r.Filter.And != nil && r.Filter.And.Prefix != nil:
		return *r.Filter.And.Prefix
	}
	return ""
}

func (r *Rule) enabled() bool { return r.Status == StatusEnabled }

// onlyPrefix reports whether the rule filters on nothing but a prefix:
// only such rules apply to delete markers and uploads, which have no tags
// and no size.
func (r *Rule) onlyPrefix() bool {
	f := r.Filter
	if f == nil {
		return true
	}
	if f.Tag != nil || f.ObjectSizeGreaterThan != nil || f.ObjectSizeLessThan != nil {
		return false
	}
	return f.And == nil || len(f.And.Tags) == 0 && f.And.ObjectSizeGreaterThan == nil && f.And.ObjectSizeLessThan == nil
}

// matches reports whether the rule applies to a version with this key,
// tags and size.
func (r *Rule) matches(key string, v *Version) bool {
	if !strings.HasPrefix(key, r.prefix()) {
		return false
	}
	if v.DeleteMarker {
		return r.onlyPrefix()
	}
	f := r.Filter
	if f == nil {
		return true
	}
	tags, gt, lt := []Tag(nil), f.ObjectSizeGreaterThan, f.ObjectSizeLessThan
	if f.Tag != nil {
		tags = []Tag{*f.Tag}
	}
	if f.And != nil {
		tags, gt, lt = f.And.Tags, f.And.ObjectSizeGreaterThan, f.And.ObjectSizeLessThan
	}
	for _, t := range tags {
		if v.Tags[t.Key] != t.Value {
			return false
		}
	}
	return (gt == nil || v.Size > *gt) && (lt == nil || v.Size < *lt)
}

// currentDue is when rule r expires the current version v, or 0.
func (r *Rule) currentDue(v *Version, day time.Duration) int64 {
	e := r.Expiration
	switch {
	case e == nil:
		return 0
	case e.Days != nil:
		return DueDays(v.ModTime, *e.Days, day)
	case e.Date != nil:
		t, err := parseDate(*e.Date)
		if err != nil {
			return 0
		}
		return max(t.UnixNano(), 1)
	}
	return 0
}

// markerDue is when rule r removes the delete marker m once it is the
// key's only version, or 0: at once with ExpiredObjectDeleteMarker, when
// it is as old as Days with a Days expiration (S3's rule for markers).
func (r *Rule) markerDue(m *Version, day time.Duration) int64 {
	e := r.Expiration
	switch {
	case e == nil:
		return 0
	case e.ExpiredObjectDeleteMarker != nil && *e.ExpiredObjectDeleteMarker:
		return max(m.ModTime, 1)
	case e.Days != nil:
		return DueDays(m.ModTime, *e.Days, day)
	}
	return 0
}

// Evaluate decides what is due for one key at now. versions are the key's
// versions newest first (versions[0] is current); uploads its incomplete
// multipart uploads; day the length of a lifecycle day (24h but in tests).
func Evaluate(c *Configuration, key string, versions []Version, uploads []Upload, now int64, day time.Duration) Plan {
	var p Plan
	if c == nil {
		return p
	}
	if len(versions) > 0 && !versions[0].DeleteMarker {
		if exp := c.expiry(key, &versions[0], day); exp != nil {
			if exp.Due <= now {
				p.ExpireCurrent = exp
			} else {
				p.later(exp.Due)
			}
		}
	}
	remaining := len(versions)
	for i := 1; i < len(versions); i++ {
		v := &versions[i]
		due := c.noncurrentDue(key, v, i, versions[i-1].ModTime, day)
		if due == 0 {
			continue
		}
		if v.LegalHold {
			continue // lifting the hold is a change to the key; it is looked at again then
		}
		due = max(due, v.RetainUntil)
		if due <= now {
			p.Purge = append(p.Purge, v.ID)
			remaining--
		} else {
			p.later(due)
		}
	}
	if len(versions) > 0 && versions[0].DeleteMarker && remaining == 1 {
		if due := c.markerRemoval(key, &versions[0], day); due > 0 {
			if due <= now {
				p.RemoveMarker = true
			} else {
				p.later(due)
			}
		}
	}
	for _, u := range uploads {
		due := c.abortDue(key, u.Initiated, day)
		if due == 0 {
			continue
		}
		if due <= now {
			p.Abort = append(p.Abort, u.ID)
		} else {
			p.later(due)
		}
	}
	return p
}

// expiry is the earliest expiration of the current version v, or nil.
func (c *Configuration) expiry(key string, v *Version, day time.Duration) *Expiry {
	var best *Expiry
	for i := range c.Rules {
		r := &c.Rules[i]
		if !r.enabled() || !r.matches(key, v) {
			continue
		}
		if due := r.currentDue(v, day); due > 0 && (best == nil || due < best.Due) {
			best = &Expiry{VersionID: v.ID, Due: due, RuleID: r.ID}
		}
	}
	return best
}

// noncurrentDue is when version v (the rank-th newest noncurrent version,
// noncurrent since the given time) is removed, or 0 when no rule removes
// it.
func (c *Configuration) noncurrentDue(key string, v *Version, rank int, since int64, day time.Duration) int64 {
	var best int64
	for i := range c.Rules {
		r := &c.Rules[i]
		n := r.NoncurrentVersionExpiration
		if !r.enabled() || n == nil || n.NoncurrentDays == nil || !r.matches(key, v) {
			continue
		}
		if n.NewerNoncurrentVersions != nil && rank <= *n.NewerNoncurrentVersions {
			continue
		}
		if due := DueDays(since, *n.NoncurrentDays, day); best == 0 || due < best {
			best = due
		}
	}
	return best
}

func (c *Configuration) markerRemoval(key string, m *Version, day time.Duration) int64 {
	var best int64
	for i := range c.Rules {
		r := &c.Rules[i]
		if !r.enabled() || !r.matches(key, m) {
			continue
		}
		if due := r.markerDue(m, day); due > 0 && (best == 0 || due < best) {
			best = due
		}
	}
	return best
}

func (c *Configuration) abortDue(key string, initiated int64, day time.Duration) int64 {
	var best int64
	for i := range c.Rules {
		r := &c.Rules[i]
		a := r.AbortIncompleteMultipartUpload
		if !r.enabled() || a == nil || a.DaysAfterInitiation == nil || !r.onlyPrefix() || !strings.HasPrefix(key, r.prefix()) {
			continue
		}
		if due := DueDays(initiated, *a.DaysAfterInitiation, day); best == 0 || due < best {
			best = due
		}
	}
	return best
}

// UploadDue is when an upload of key begun at initiated is aborted, or 0.
func (c *Configuration) UploadDue(key string, initiated int64, day time.Duration) int64 {
	return c.abortDue(key, initiated, day)
}

// LowerBound is a time no later than anything on key can become due after
// a change to it at base (a version written, removed or re-tagged then):
// the earliest any enabled rule whose prefix matches could act, ignoring
// tags and sizes. ok is false when no rule can ever act on the key.
func (c *Configuration) LowerBound(key string, base int64, day time.Duration) (t int64, ok bool) {
	if c == nil {
		return 0, false
	}
	take := func(due int64) {
		if due > 0 && (!ok || due < t) {
			t, ok = due, true
		}
	}
	for i := range c.Rules {
		r := &c.Rules[i]
		if !r.enabled() || !strings.HasPrefix(key, r.prefix()) {
			continue
		}
		if e := r.Expiration; e != nil {
			switch {
			case e.Days != nil:
				take(DueDays(base, *e.Days, day))
			case e.Date != nil:
				take(r.currentDue(&Version{ModTime: base}, day))
			default:
				take(max(base, 1))
			}
		}
		if n := r.NoncurrentVersionExpiration; n != nil && n.NoncurrentDays != nil {
			take(DueDays(base, *n.NoncurrentDays, day))
		}
	}
	return t, ok
}

// Enabled reports whether any rule is enabled.
func (c *Configuration) Enabled() bool {
	if c == nil {
		return false
	}
	for i := range c.Rules {
		if c.Rules[i].enabled() {
			return true
		}
	}
	return false
}

// ExpiryHeader is the x-amz-expiration value for a current version: when
// it expires and by which rule; "" when no rule expires it.
func (c *Configuration) ExpiryHeader(key string, v Version, day time.Duration) string {
	if c == nil || v.DeleteMarker {
		return ""
	}
	exp := c.expiry(key, &v, day)
	if exp == nil {
		return ""
	}
	at := time.Unix(0, exp.Due).UTC().Format(time.RFC1123)
	at = strings.Replace(at, "UTC", "GMT", 1)
	return fmt.Sprintf(`expiry-date="%s", rule-id="%s"`, at, exp.RuleID)
}
