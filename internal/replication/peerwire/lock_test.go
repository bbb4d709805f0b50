package peerwire

import (
	"reflect"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/twinlake/twinlake/internal/objects"
)

// TestObjectLockTravels: a version's retention and legal hold and a
// bucket's object lock configuration reach the peer; a peer predating
// object lock (its types without these keys) decodes the same bodies and
// ignores them, and this site decodes that peer's bodies as unlocked.
func TestObjectLockTravels(t *testing.T) {
	v := sent()
	v.LockMode, v.RetainUntil, v.LegalHold = objects.LockCompliance, 1_900_000_000_000_000_000, objects.LegalHoldOn
	raw, err := msgpack.Marshal(FromVersion(v))
	if err != nil {
		t.Fatal(err)
	}
	var w ObjectVersion
	if err := msgpack.Unmarshal(raw, &w); err != nil {
		t.Fatal(err)
	}
	if got := w.ToVersion(); !reflect.DeepEqual(got, v) {
		t.Fatalf("version round trip:\n got %+v\nwant %+v", got, v)
	}
	type oldVersion struct { // ObjectVersion before object lock
		VersionID string            `msgpack:"id"`
		ModTime   int64             `msgpack:"mt"`
		Tags      map[string]string `msgpack:"tg,omitempty"`
		MetaTime  int64             `msgpack:"mm,omitempty"`
	}
	var old oldVersion
	if err := msgpack.Unmarshal(raw, &old); err != nil || old.VersionID != v.VersionID || old.MetaTime != v.MetaTime {
		t.Fatalf("a peer predating object lock: %+v %v", old, err)
	}
	raw, _ = msgpack.Marshal(old)
	w = ObjectVersion{}
	if err := msgpack.Unmarshal(raw, &w); err != nil || w.LockMode != "" || w.LegalHold != "" {
		t.Fatalf("from a peer predating object lock: %+v %v", w, err)
	}

	b := objects.Bucket{Name: "b", Created: time.Unix(5, 0).UTC(), Versioning: objects.VersioningEnabled, ModTime: 7,
		FieldTimes: map[string]int64{objects.FieldObjectLock: 7}, ObjectLock: &objects.LockConfig{Mode: objects.LockGovernance, Days: 3}}
	raw, _ = msgpack.Marshal(BucketChange{Bucket: FromBucket(b)})
	var bc BucketChange
	if err := msgpack.Unmarshal(raw, &bc); err != nil {
		t.Fatal(err)
	}
	if got := bc.Bucket.ToBucket(); !got.Created.Equal(b.Created) || !reflect.DeepEqual(got.ObjectLock, b.ObjectLock) || got.FieldTimes[objects.FieldObjectLock] != 7 {
		t.Fatalf("bucket round trip: %+v", got)
	}
	type oldBucket struct {
		Name       string           `msgpack:"n"`
		FieldTimes map[string]int64 `msgpack:"ft,omitempty"`
	}
	var ob struct {
		Bucket oldBucket `msgpack:"b"`
	}
	if err := msgpack.Unmarshal(raw, &ob); err != nil || ob.Bucket.Name != "b" {
		t.Fatalf("a peer predating object lock: %+v %v", ob, err)
	}
}
