package peerwire

import (
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/twinlake/twinlake/internal/objects"
)

// TestBucketQuotaTravels: a bucket's quota and its field time cross the
// wire both ways.
func TestBucketQuotaTravels(t *testing.T) {
	b := objects.Bucket{Name: "b", Created: time.Unix(5, 0).UTC(), ModTime: 9,
		FieldTimes: map[string]int64{objects.FieldQuota: 9}, Quota: 1 << 30}
	raw, err := msgpack.Marshal(BucketChange{Bucket: FromBucket(b), At: 9})
	if err != nil {
		t.Fatal(err)
	}
	var bc BucketChange
	if err := msgpack.Unmarshal(raw, &bc); err != nil {
		t.Fatal(err)
	}
	if got := bc.Bucket.ToBucket(); got.Quota != 1<<30 || got.FieldTimes[objects.FieldQuota] != 9 {
		t.Fatalf("bucket round trip: %+v", got)
	}
}
