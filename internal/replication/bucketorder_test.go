package replication

import "testing"

func TestBucketOrder(t *testing.T) {
	ver := func(b string) Entry { return Entry{Op: OpVersion, Bucket: b, Key: "k"} }
	purge := func(b string) Entry { return Entry{Op: OpPurge, Bucket: b, Key: "k"} }
	rec := func(b string) Entry { return Entry{Op: OpBucket, Bucket: b} }
	del := func(b string) Entry { return Entry{Op: OpBucketDelete, Bucket: b} }
	iam := Entry{Op: OpIAM, Key: "user/x"}

	type step struct {
		finish bool // finish en instead of admitting it
		en     Entry
		retry  bool
		want   bool // admitted; for a finish, whether held work may go
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"objects of a bucket go together", []step{
			{en: ver("a"), want: true}, {en: purge("a"), want: true}, {en: ver("a"), want: true}}},
		{"objects wait for their bucket's record", []step{
			{en: rec("a"), want: true},
			{en: ver("a"), want: false},
			{en: ver("b"), want: true}, // another bucket never waits
			{finish: true, en: rec("a"), want: true},
			{en: ver("a"), want: true}}},
		{"a bucket's deletion waits for its purges", []step{
			{en: purge("a"), want: true}, {en: purge("a"), want: true},
			{en: del("a"), want: false},
			{finish: true, en: purge("a"), want: false}, // one still in flight
			{en: del("a"), want: false},
			{finish: true, en: purge("a"), want: true},
			{en: del("a"), want: true},
			{en: purge("a"), want: false}}},
		{"a record retried does not wait for objects", []step{
			{en: ver("a"), want: true},
			{en: rec("a"), retry: true, want: true},
			{en: ver("a"), retry: true, want: false}}},
		{"records of a bucket follow each other", []step{
			{en: rec("a"), want: true}, {en: rec("a"), want: true},
			{finish: true, en: rec("a"), want: false},
			{finish: true, en: rec("a"), want: false}, // nothing was held
			{en: ver("a"), want: true}}},
		{"IAM records are not ordered", []step{
			{en: rec(""), want: true}, {en: iam, want: true}, {en: iam, want: true},
			{finish: true, en: iam, want: false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newBucketOrder()
			for i, s := range tc.steps {
				var got bool
				if s.finish {
					got = o.finish(s.en)
				} else {
					got = o.admit(s.en, s.retry)
				}
				if got != s.want {
					t.Fatalf("step %d (%+v): got %v, want %v", i, s, got, s.want)
				}
			}
		})
	}
}

// TestBucketOrderDrained: every admitted send finished leaves nothing
// counted, whatever the interleaving.
func TestBucketOrderDrained(t *testing.T) {
	o := newBucketOrder()
	var admitted []Entry
	for i := range 200 {
		en := Entry{Op: []string{OpVersion, OpPurge, OpBucket, OpBucketDelete}[i%4], Bucket: []string{"a", "b", "c"}[i%3]}
		if o.admit(en, i%5 == 0) {
			admitted = append(admitted, en)
		}
		if i%3 == 0 && len(admitted) > 0 {
			o.finish(admitted[0])
			admitted = admitted[1:]
		}
	}
	for _, en := range admitted {
		o.finish(en)
	}
	if len(o.objects)+len(o.records)+len(o.waiting) != 0 {
		t.Fatalf("left counted: %v %v %v", o.objects, o.records, o.waiting)
	}
}
