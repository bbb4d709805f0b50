// Package lifecycle is the bucket lifecycle (ILM) model and its decision
// core: the S3 LifecycleConfiguration document, its validation, and the
// pure evaluation of one object key's versions and uploads against the
// rules at a given time. It performs no I/O; the object layer stores the
// document, keeps the due index and carries out what Evaluate decides.
package lifecycle

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Limits of a lifecycle configuration, as AWS sets them.
const (
	MaxRules        = 1000
	MaxRuleIDLength = 255
	// MaxDocumentSize bounds the XML document a client may send.
	MaxDocumentSize = 1 << 20
	// MaxNewerNoncurrent bounds NewerNoncurrentVersions.
	MaxNewerNoncurrent = 100
	// MaxDays bounds every day count (about 273 years), so due times stay
	// far inside int64 nanoseconds.
	MaxDays = 100000
)

// Rule statuses.
const (
	StatusEnabled  = "Enabled"
	StatusDisabled = "Disabled"
)

// Error is a refused configuration: Code is the S3 error code
// (MalformedXML, InvalidArgument, InvalidRequest, NotImplemented).
type Error struct {
	Code string
	Msg  string
}

func (e *Error) Error() string { return e.Code + ": " + e.Msg }

func refuse(code, format string, args ...any) error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Configuration is a bucket's lifecycle configuration, in S3's XML form.
type Configuration struct {
	XMLName xml.Name `xml:"LifecycleConfiguration"`
	NS      string   `xml:"xmlns,attr,omitempty"`
	Rules   []Rule   `xml:"Rule"`
}

// Rule is one lifecycle rule.
type Rule struct {
	ID     string  `xml:"ID,omitempty"`
	Status string  `xml:"Status"`
	Filter *Filter `xml:"Filter,omitempty"`
	// Prefix is the legacy filter, outside Filter; kept as sent.
	Prefix                         *string                         `xml:"Prefix,omitempty"`
	Expiration                     *Expiration                     `xml:"Expiration,omitempty"`
	NoncurrentVersionExpiration    *NoncurrentVersionExpiration    `xml:"NoncurrentVersionExpiration,omitempty"`
	AbortIncompleteMultipartUpload *AbortIncompleteMultipartUpload `xml:"AbortIncompleteMultipartUpload,omitempty"`
	Transitions                    []xmlAny                        `xml:"Transition,omitempty"`
	NoncurrentVersionTransitions   []xmlAny                        `xml:"NoncurrentVersionTransition,omitempty"`
	// MinIO's own actions, refused rather than ignored.
	DelMarkerExpiration   []xmlAny `xml:"DelMarkerExpiration,omitempty"`
	AllVersionsExpiration []xmlAny `xml:"AllVersionsExpiration,omitempty"`
}

// xmlAny swallows an element twinlake refuses (transitions) so that the
// refusal can name it.
type xmlAny struct {
	Inner string `xml:",innerxml"`
}

// Filter selects the objects a rule applies to: at most one of Prefix,
// Tag, And or the size bounds (S3's rule).
type Filter struct {
	Prefix                *string `xml:"Prefix,omitempty"`
	Tag                   *Tag    `xml:"Tag,omitempty"`
	And                   *And    `xml:"And,omitempty"`
	ObjectSizeGreaterThan *int64  `xml:"ObjectSizeGreaterThan,omitempty"`
	ObjectSizeLessThan    *int64  `xml:"ObjectSizeLessThan,omitempty"`
}

// And combines a prefix, tags and size bounds.
type And struct {
	Prefix                *string `xml:"Prefix,omitempty"`
	Tags                  []Tag   `xml:"Tag,omitempty"`
	ObjectSizeGreaterThan *int64  `xml:"ObjectSizeGreaterThan,omitempty"`
	ObjectSizeLessThan    *int64  `xml:"ObjectSizeLessThan,omitempty"`
}

// Tag is one object tag a filter requires.
type Tag struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

// Expiration expires current versions (Days or Date) or removes expired
// object delete markers.
type Expiration struct {
	Days                      *int    `xml:"Days,omitempty"`
	Date                      *string `xml:"Date,omitempty"`
	ExpiredObjectDeleteMarker *bool   `xml:"ExpiredObjectDeleteMarker,omitempty"`
	// ExpiredObjectAllVersions is MinIO's; refused when true.
	ExpiredObjectAllVersions *bool `xml:"ExpiredObjectAllVersions,omitempty"`
}

// NoncurrentVersionExpiration removes versions some days after they
// became noncurrent, keeping the newest NewerNoncurrentVersions.
type NoncurrentVersionExpiration struct {
	NoncurrentDays          *int `xml:"NoncurrentDays,omitempty"`
	NewerNoncurrentVersions *int `xml:"NewerNoncurrentVersions,omitempty"`
}

// AbortIncompleteMultipartUpload aborts uploads some days after they began.
type AbortIncompleteMultipartUpload struct {
	DaysAfterInitiation *int `xml:"DaysAfterInitiation,omitempty"`
}

// s3NS is the S3 XML namespace documents are stored and served with.
const s3NS = "http://s3.amazonaws.com/doc/2006-03-01/"

// Parse decodes and validates a PutBucketLifecycleConfiguration body. A
// rule without an ID gets a random one, as S3 assigns.
func Parse(data []byte) (*Configuration, error) {
	if len(data) > MaxDocumentSize {
		return nil, refuse("MalformedXML", "the lifecycle configuration is larger than %d bytes", MaxDocumentSize)
	}
	var c Configuration
	if err := xml.Unmarshal(data, &c); err != nil {
		return nil, refuse("MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema")
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	for i := range c.Rules {
		if c.Rules[i].ID == "" {
			c.Rules[i].ID = newRuleID()
		}
	}
	c.XMLName = xml.Name{}
	c.NS = s3NS
	return &c, nil
}

// Decode reads a stored document (already validated when it was set).
func Decode(data []byte) (*Configuration, error) {
	var c Configuration
	if err := xml.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Marshal encodes c as its stored and served XML form.
func (c *Configuration) Marshal() []byte {
	out := *c
	out.XMLName = xml.Name{}
	out.NS = s3NS
	b, err := xml.Marshal(&out)
	if err != nil {
		panic(err) // the type always marshals
	}
	return b
}

func newRuleID() string {
	var b [10]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (c *Configuration) validate() error {
	if len(c.Rules) == 0 {
		return refuse("MalformedXML", "a lifecycle configuration needs at least one Rule")
	}
	if len(c.Rules) > MaxRules {
		return refuse("InvalidRequest", "a lifecycle configuration holds at most %d rules", MaxRules)
	}
	ids := map[string]bool{}
	for i := range c.Rules {
		r := &c.Rules[i]
		if err := r.validate(); err != nil {
			return err
		}
		if r.ID != "" {
			if ids[r.ID] {
				return refuse("InvalidArgument", "Rule ID must be unique. Found same ID for more than one rule: %s", r.ID)
			}
			ids[r.ID] = true
		}
	}
	return nil
}

func validDays(name string, d *int, min int) error {
	if d == nil {
		return nil
	}
	if *d < min || *d > MaxDays {
		if min == 1 {
			return refuse("InvalidArgument", "'%s' must be a positive integer no larger than %d", name, MaxDays)
		}
		return refuse("InvalidArgument", "'%s' must be between %d and %d", name, min, MaxDays)
	}
	return nil
}

func (r *Rule) validate() error {
	if len(r.ID) > MaxRuleIDLength {
		return refuse("InvalidArgument", "ID length should not exceed allowed limit of %d", MaxRuleIDLength)
	}
	if r.Status != StatusEnabled && r.Status != StatusDisabled {
		return refuse("MalformedXML", "Status must be Enabled or Disabled, not %q", r.Status)
	}
	if len(r.Transitions) > 0 || len(r.NoncurrentVersionTransitions) > 0 {
		return refuse("NotImplemented", "transition actions are not supported: twinlake has one storage class and no remote tiers")
	}
	if hasContent(r.DelMarkerExpiration) || hasContent(r.AllVersionsExpiration) ||
		r.Expiration != nil && r.Expiration.ExpiredObjectAllVersions != nil && *r.Expiration.ExpiredObjectAllVersions {
		return refuse("NotImplemented", "DelMarkerExpiration, AllVersionsExpiration and ExpiredObjectAllVersions are not supported: use Expiration, NoncurrentVersionExpiration and ExpiredObjectDeleteMarker")
	}
	if r.Filter != nil && r.Prefix != nil {
		return refuse("MalformedXML", "a rule has either Filter or Prefix, not both")
	}
	if r.Expiration == nil && r.NoncurrentVersionExpiration == nil && r.AbortIncompleteMultipartUpload == nil {
		return refuse("InvalidRequest", "At least one action needs to be specified in a rule")
	}
	if f := r.Filter; f != nil {
		if err := f.validate(); err != nil {
			return err
		}
	}
	hasTags := r.Filter != nil && (r.Filter.Tag != nil || r.Filter.And != nil && len(r.Filter.And.Tags) > 0)
	if e := r.Expiration; e != nil {
		set := 0
		for _, b := range []bool{e.Days != nil, e.Date != nil, e.ExpiredObjectDeleteMarker != nil || e.ExpiredObjectAllVersions != nil} {
			if b {
				set++
			}
		}
		if set != 1 {
			return refuse("MalformedXML", "Expiration takes exactly one of Days, Date and ExpiredObjectDeleteMarker")
		}
		if err := validDays("Days' for Expiration action", e.Days, 1); err != nil {
			return err
		}
		if e.Date != nil {
			if _, err := parseDate(*e.Date); err != nil {
				return err
			}
		}
		if e.ExpiredObjectDeleteMarker != nil && *e.ExpiredObjectDeleteMarker && hasTags {
			return refuse("InvalidRequest", "ExpiredObjectDeleteMarker cannot be specified with tags")
		}
	}
	if n := r.NoncurrentVersionExpiration; n != nil {
		if n.NoncurrentDays == nil {
			return refuse("MalformedXML", "NoncurrentVersionExpiration needs NoncurrentDays")
		}
		if err := validDays("NoncurrentDays", n.NoncurrentDays, 1); err != nil {
			return err
		}
		if v := n.NewerNoncurrentVersions; v != nil && (*v < 1 || *v > MaxNewerNoncurrent) {
			return refuse("InvalidArgument", "NewerNoncurrentVersions must be between 1 and %d", MaxNewerNoncurrent)
		}
	}
	if a := r.AbortIncompleteMultipartUpload; a != nil {
		if a.DaysAfterInitiation == nil {
			return refuse("MalformedXML", "AbortIncompleteMultipartUpload needs DaysAfterInitiation")
		}
		if err := validDays("DaysAfterInitiation", a.DaysAfterInitiation, 1); err != nil {
			return err
		}
		if hasTags {
			return refuse("InvalidRequest", "AbortIncompleteMultipartUpload cannot be specified with tags")
		}
	}
	return nil
}

func (f *Filter) validate() error {
	set := 0
	for _, b := range []bool{f.Prefix != nil, f.Tag != nil, f.And != nil, f.ObjectSizeGreaterThan != nil || f.ObjectSizeLessThan != nil} {
		if b {
			set++
		}
	}
	if set > 1 {
		return refuse("MalformedXML", "Filter takes one of Prefix, Tag, And or the size bounds; combine them with And")
	}
	if err := validSizes(f.ObjectSizeGreaterThan, f.ObjectSizeLessThan); err != nil {
		return err
	}
	if f.Tag != nil && f.Tag.Key == "" {
		return refuse("InvalidArgument", "a filter tag needs a Key")
	}
	if a := f.And; a != nil {
		if err := validSizes(a.ObjectSizeGreaterThan, a.ObjectSizeLessThan); err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, t := range a.Tags {
			if t.Key == "" {
				return refuse("InvalidArgument", "a filter tag needs a Key")
			}
			if seen[t.Key] {
				return refuse("InvalidArgument", "duplicate tag key %q in the filter", t.Key)
			}
			seen[t.Key] = true
		}
	}
	return nil
}

func validSizes(gt, lt *int64) error {
	if gt != nil && *gt < 0 || lt != nil && *lt <= 0 {
		return refuse("InvalidArgument", "object size bounds must be positive")
	}
	if gt != nil && lt != nil && *gt >= *lt {
		return refuse("InvalidArgument", "ObjectSizeGreaterThan must be less than ObjectSizeLessThan")
	}
	return nil
}

// hasContent reports whether any of the elements holds anything.
func hasContent(es []xmlAny) bool {
	for _, e := range es {
		if strings.TrimSpace(e.Inner) != "" {
			return true
		}
	}
	return false
}

// parseDate reads an Expiration Date: ISO 8601 at midnight UTC, with or
// without the time part ("2027-01-01" or "2027-01-01T00:00:00Z").
func parseDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		t, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		t = t.UTC()
		if t.Hour() != 0 || t.Minute() != 0 || t.Second() != 0 || t.Nanosecond() != 0 {
			return time.Time{}, refuse("InvalidArgument", "'Date' must be at midnight GMT")
		}
		return t, nil
	}
	return time.Time{}, refuse("InvalidArgument", "'Date' must be an ISO 8601 date at midnight GMT, not %q", s)
}

// IsRefusal reports whether err is a refused configuration and returns it.
func IsRefusal(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
