package lifecycle

import (
	"slices"
	"strings"
	"testing"
	"time"
)

const day = 24 * time.Hour

func mustParse(t *testing.T, doc string) *Configuration {
	t.Helper()
	c, err := Parse([]byte(doc))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

func d(n int) int64 { return int64(n) * int64(day) }

func TestParseRefusals(t *testing.T) {
	long := strings.Repeat("a", 256)
	for _, tc := range []struct {
		name, doc, code string
	}{
		{"not xml", `<LifecycleConfiguration><Rule>`, "MalformedXML"},
		{"no rules", `<LifecycleConfiguration></LifecycleConfiguration>`, "MalformedXML"},
		{"bad status", `<LifecycleConfiguration><Rule><Status>enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`, "MalformedXML"},
		{"id too long", `<LifecycleConfiguration><Rule><ID>` + long + `</ID><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`, "InvalidArgument"},
		{"same id", `<LifecycleConfiguration><Rule><ID>a</ID><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule><Rule><ID>a</ID><Status>Enabled</Status><Expiration><Days>2</Days></Expiration></Rule></LifecycleConfiguration>`, "InvalidArgument"},
		{"days 0", `<LifecycleConfiguration><Rule><Status>Enabled</Status><Expiration><Days>0</Days></Expiration></Rule></LifecycleConfiguration>`, "InvalidArgument"},
		{"no action", `<LifecycleConfiguration><Rule><Status>Enabled</Status><Filter><Prefix>a</Prefix></Filter></Rule></LifecycleConfiguration>`, "InvalidRequest"},
		{"date not midnight", `<LifecycleConfiguration><Rule><Status>Enabled</Status><Expiration><Date>2027-01-01T05:00:00Z</Date></Expiration></Rule></LifecycleConfiguration>`, "InvalidArgument"},
		{"date garbage", `<LifecycleConfiguration><Rule><Status>Enabled</Status><Expiration><Date>20200101</Date></Expiration></Rule></LifecycleConfiguration>`, "InvalidArgument"},
		{"days and date", `<LifecycleConfiguration><Rule><Status>Enabled</Status><Expiration><Days>1</Days><Date>2027-01-01</Date></Expiration></Rule></LifecycleConfiguration>`, "MalformedXML"},
		{"filter and prefix", `<LifecycleConfiguration><Rule><Status>Enabled</Status><Prefix>a</Prefix><Filter><Prefix>b</Prefix></Filter><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`, "MalformedXML"},
		{"two filters", `<LifecycleConfiguration><Rule><Status>Enabled</Status><Filter><Prefix>b</Prefix><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`, "MalformedXML"},
		{"sizes reversed", `<LifecycleConfiguration><Rule><Status>Enabled</Status><Filter><And><ObjectSizeGreaterThan>10</ObjectSizeGreaterThan><ObjectSizeLessThan>5</ObjectSizeLessThan></And></Filter><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`, "InvalidArgument"},
		{"marker with tags", `<LifecycleConfiguration><Rule><Status>Enabled</Status><Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration></Rule></LifecycleConfiguration>`, "InvalidRequest"},
		{"abort with tags", `<LifecycleConfiguration><Rule><Status>Enabled</Status><Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule></LifecycleConfiguration>`, "InvalidRequest"},
		{"newer noncurrent too many", `<LifecycleConfiguration><Rule><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays><NewerNoncurrentVersions>101</NewerNoncurrentVersions></NoncurrentVersionExpiration></Rule></LifecycleConfiguration>`, "InvalidArgument"},
		{"transition", `<LifecycleConfiguration><Rule><Status>Enabled</Status><Transition><Days>1</Days><StorageClass>GLACIER</StorageClass></Transition></Rule></LifecycleConfiguration>`, "NotImplemented"},
	} {
		_, err := Parse([]byte(tc.doc))
		e, ok := IsRefusal(err)
		if !ok || e.Code != tc.code {
			t.Errorf("%s: got %v, want %s", tc.name, err, tc.code)
		}
	}
}

func TestParseAssignsIDAndRoundTrips(t *testing.T) {
	c := mustParse(t, `<LifecycleConfiguration><Rule><Prefix>logs/</Prefix><Status>Enabled</Status><Expiration><Days>3</Days></Expiration></Rule></LifecycleConfiguration>`)
	if c.Rules[0].ID == "" {
		t.Fatal("no ID assigned")
	}
	again, err := Decode(c.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if again.Rules[0].ID != c.Rules[0].ID || *again.Rules[0].Prefix != "logs/" || *again.Rules[0].Expiration.Days != 3 {
		t.Fatalf("round trip changed the rule: %s", again.Marshal())
	}
}

func TestDueDaysRoundsToDayBoundary(t *testing.T) {
	base := time.Date(2026, 3, 1, 15, 4, 5, 0, time.UTC).UnixNano()
	got := time.Unix(0, DueDays(base, 2, day)).UTC()
	if want := time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Fatalf("DueDays = %v, want %v", got, want)
	}
	exact := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	if got := DueDays(exact, 1, day); got != exact+d(1) {
		t.Fatalf("a day boundary stays: %v", time.Unix(0, got).UTC())
	}
	if got := DueDays(base, 3, 10*time.Second); got != base+int64(30*time.Second) {
		t.Fatalf("a shortened day rounds: %v", time.Duration(got-base))
	}
}

func TestEvaluate(t *testing.T) {
	const rules = `<LifecycleConfiguration>
<Rule><ID>logs</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>2</Days></Expiration></Rule>
<Rule><ID>tmp</ID><Filter><And><Prefix>tmp/</Prefix><Tag><Key>class</Key><Value>scratch</Value></Tag><ObjectSizeGreaterThan>10</ObjectSizeGreaterThan></And></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>
<Rule><ID>old</ID><Filter><Prefix>v/</Prefix></Filter><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays><NewerNoncurrentVersions>1</NewerNoncurrentVersions></NoncurrentVersionExpiration><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration></Rule>
<Rule><ID>mpu</ID><Filter><Prefix>up/</Prefix></Filter><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>
<Rule><ID>off</ID><Filter><Prefix>off/</Prefix></Filter><Status>Disabled</Status><Expiration><Days>1</Days></Expiration></Rule>
</LifecycleConfiguration>`
	c := mustParse(t, rules)
	scratch := map[string]string{"class": "scratch"}
	for _, tc := range []struct {
		name     string
		key      string
		versions []Version
		uploads  []Upload
		now      int64
		want     Plan
	}{
		{name: "not yet due", key: "logs/a", versions: []Version{{ID: "1", ModTime: d(10)}}, now: d(11),
			want: Plan{Next: d(12)}},
		{name: "current expired", key: "logs/a", versions: []Version{{ID: "1", ModTime: d(10)}}, now: d(12),
			want: Plan{ExpireCurrent: &Expiry{VersionID: "1", Due: d(12), RuleID: "logs"}}},
		{name: "no rule matches", key: "data/a", versions: []Version{{ID: "1", ModTime: d(1)}}, now: d(100)},
		{name: "disabled rule", key: "off/a", versions: []Version{{ID: "1", ModTime: d(1)}}, now: d(100)},
		{name: "tag and size match", key: "tmp/a", versions: []Version{{ID: "1", ModTime: d(1), Size: 11, Tags: scratch}}, now: d(2),
			want: Plan{ExpireCurrent: &Expiry{VersionID: "1", Due: d(2), RuleID: "tmp"}}},
		{name: "tag missing", key: "tmp/a", versions: []Version{{ID: "1", ModTime: d(1), Size: 11}}, now: d(9)},
		{name: "too small", key: "tmp/a", versions: []Version{{ID: "1", ModTime: d(1), Size: 10, Tags: scratch}}, now: d(9)},
		{name: "noncurrent beyond the newest kept", key: "v/a", now: d(5),
			versions: []Version{{ID: "3", ModTime: d(4)}, {ID: "2", ModTime: d(3)}, {ID: "1", ModTime: d(2)}},
			want:     Plan{Purge: []string{"1"}}}, // "2" is the newest noncurrent, kept
		{name: "noncurrent held", key: "v/a", now: d(9),
			versions: []Version{{ID: "3", ModTime: d(4)}, {ID: "2", ModTime: d(3)}, {ID: "1", ModTime: d(2), LegalHold: true}}},
		{name: "noncurrent retained until", key: "v/a", now: d(9),
			versions: []Version{{ID: "3", ModTime: d(4)}, {ID: "2", ModTime: d(3)}, {ID: "1", ModTime: d(2), RetainUntil: d(20)}},
			want:     Plan{Next: d(20)}},
		{name: "marker left alone expires", key: "v/a", now: d(9),
			versions: []Version{{ID: "m", ModTime: d(4), DeleteMarker: true}, {ID: "2", ModTime: d(3)}, {ID: "1", ModTime: d(2)}},
			want:     Plan{Purge: []string{"1"}}},
		{name: "sole marker removed", key: "v/a", now: d(9),
			versions: []Version{{ID: "m", ModTime: d(4), DeleteMarker: true}},
			want:     Plan{RemoveMarker: true}},
		{name: "upload aborted", key: "up/a", now: d(3),
			uploads: []Upload{{ID: "u1", Initiated: d(1)}, {ID: "u2", Initiated: d(2) + 1}},
			want:    Plan{Abort: []string{"u1"}, Next: d(4)}},
	} {
		got := Evaluate(c, tc.key, tc.versions, tc.uploads, tc.now, day)
		if !samePlan(got, tc.want) {
			t.Errorf("%s: got %+v (expire %+v), want %+v (expire %+v)", tc.name, got, got.ExpireCurrent, tc.want, tc.want.ExpireCurrent)
		}
	}
}

func samePlan(a, b Plan) bool {
	if (a.ExpireCurrent == nil) != (b.ExpireCurrent == nil) || a.ExpireCurrent != nil && *a.ExpireCurrent != *b.ExpireCurrent {
		return false
	}
	return a.RemoveMarker == b.RemoveMarker && slices.Equal(a.Purge, b.Purge) && slices.Equal(a.Abort, b.Abort) && a.Next == b.Next
}

// TestLowerBoundNeverLate: whatever a key's versions, nothing Evaluate
// finds due comes before the LowerBound of the change that made it (the
// earliest version time), so the due index never wakes too late.
func TestLowerBoundNeverLate(t *testing.T) {
	c := mustParse(t, `<LifecycleConfiguration>
<Rule><ID>a</ID><Status>Enabled</Status><Expiration><Days>3</Days></Expiration></Rule>
<Rule><ID>b</ID><Filter><Prefix>k</Prefix></Filter><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration></Rule>
</LifecycleConfiguration>`)
	for seed := int64(1); seed < 200; seed++ {
		n := int(seed%5) + 1
		vs := make([]Version, n)
		base := int64(0)
		for i := range vs {
			vs[i] = Version{ID: string(rune('a' + i)), ModTime: d(50) - int64(i)*int64(seed%7+1)*int64(time.Hour)}
		}
		base = vs[n-1].ModTime
		lb, ok := c.LowerBound("key", base, day)
		if !ok {
			t.Fatal("no bound")
		}
		for now := base; now < d(60); now += int64(time.Hour) {
			p := Evaluate(c, "key", vs, nil, now, day)
			if !p.Empty() && now < lb {
				t.Fatalf("seed %d: due at %d before the bound %d", seed, now, lb)
			}
		}
	}
}

func TestExpiryHeader(t *testing.T) {
	c := mustParse(t, `<LifecycleConfiguration><Rule><ID>r1</ID><Filter><Prefix>a/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`)
	mod := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC).UnixNano()
	got := c.ExpiryHeader("a/x", Version{ModTime: mod}, day)
	// S3's example: created at 10:00, one day later, rounded up to the
	// next midnight UTC.
	if want := `expiry-date="Sun, 03 May 2026 00:00:00 GMT", rule-id="r1"`; got != want {
		t.Fatalf("header %q, want %q", got, want)
	}
	if got := c.ExpiryHeader("b/x", Version{ModTime: mod}, day); got != "" {
		t.Fatalf("unmatched key got %q", got)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`<LifecycleConfiguration><Rule><ID>a</ID><Filter><And><Prefix>p</Prefix><Tag><Key>k</Key><Value>v</Value></Tag></And></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`))
	f.Add([]byte(`<LifecycleConfiguration><Rule><Status>Disabled</Status><NoncurrentVersionExpiration><NoncurrentDays>3</NoncurrentDays></NoncurrentVersionExpiration></Rule></LifecycleConfiguration>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			if _, ok := IsRefusal(err); !ok {
				t.Fatalf("refusal without an S3 code: %v", err)
			}
			return
		}
		again, err := Decode(c.Marshal())
		if err != nil {
			t.Fatalf("a parsed configuration does not decode again: %v", err)
		}
		if len(again.Rules) != len(c.Rules) {
			t.Fatal("rules lost in the round trip")
		}
		Evaluate(again, "k", []Version{{ID: "1", ModTime: 1}, {ID: "0", ModTime: 0}}, []Upload{{ID: "u", Initiated: 0}}, d(1000), day)
	})
}
