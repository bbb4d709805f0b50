package peerwire

import (
	"bytes"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/twinlake/twinlake/internal/objects"
)

// TestBucketCORSTravels: a bucket's CORS configuration and its field time
// cross the wire; a peer predating CORS decodes the record regardless and
// one sending none leaves it empty.
func TestBucketCORSTravels(t *testing.T) {
	doc := []byte(`<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>`)
	b := objects.Bucket{Name: "b", Created: time.Unix(5, 0).UTC(), ModTime: 7,
		FieldTimes: map[string]int64{objects.FieldCORS: 7}, CORS: doc}
	raw, err := msgpack.Marshal(BucketChange{Bucket: FromBucket(b), At: 7})
	if err != nil {
		t.Fatal(err)
	}
	var bc BucketChange
	if err := msgpack.Unmarshal(raw, &bc); err != nil {
		t.Fatal(err)
	}
	if got := bc.Bucket.ToBucket(); !bytes.Equal(got.CORS, doc) || got.FieldTimes[objects.FieldCORS] != 7 {
		t.Fatalf("bucket round trip: %+v", got)
	}
	type oldBucket struct {
		Name    string `msgpack:"n"`
		ModTime int64  `msgpack:"m,omitempty"`
	}
	var ob struct {
		Bucket oldBucket `msgpack:"b"`
	}
	if err := msgpack.Unmarshal(raw, &ob); err != nil || ob.Bucket.Name != "b" || ob.Bucket.ModTime != 7 {
		t.Fatalf("a peer predating CORS: %+v %v", ob, err)
	}
	raw, _ = msgpack.Marshal(struct {
		Bucket oldBucket `msgpack:"b"`
	}{oldBucket{Name: "b", ModTime: 7}})
	bc = BucketChange{}
	if err := msgpack.Unmarshal(raw, &bc); err != nil || bc.Bucket.CORS != nil {
		t.Fatalf("from a peer predating CORS: %+v %v", bc, err)
	}
}
