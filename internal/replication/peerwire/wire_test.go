package peerwire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/replication"
)

// record is a stored version with every field set, local ones included.
func record() *objects.Version {
	return &objects.Version{VersionID: "v1", ModTime: 10, Size: 7, ETag: "etag-2", ContentType: "text/plain",
		UserMeta: map[string]string{"a": "b"}, Headers: map[string]string{"Cache-Control": "no-cache"},
		Checksums: map[string]string{"CRC32": "AAAA-2"}, Tags: map[string]string{"t": "u"}, SSE: "AES256",
		Segments: []objects.Segment{
			{Number: 1, Size: 3, ETag: "e1", BlobID: "blob1", Checksum: map[string]string{"CRC32": "x"}, SealedKey: []byte("k")},
			{Number: 2, Size: 4, ETag: "e2", Inline: []byte("data")}},
		Multipart: true, Origin: "site-a", MetaTime: 11,
		Targets: map[string]string{"site-b": objects.StatusPending}, ReplicaStatus: objects.StatusReplica,
		ReplicaTimestamp: 12, ActivityTimestamp: 13}
}

// sent is what a peer may learn of record(): nothing local to the site.
func sent() *objects.Version {
	v := record()
	v.Targets, v.ReplicaStatus, v.ReplicaTimestamp, v.ActivityTimestamp = nil, "", 0, 0
	v.Segments = []objects.Segment{{Number: 1, Size: 3, ETag: "e1", Checksum: map[string]string{"CRC32": "x"}}, {Number: 2, Size: 4, ETag: "e2"}}
	return v
}

// v1Version is how protocol version 1 encoded a version: the record itself
// with its targets and segment-local fields cleared.
func v1Version(v *objects.Version) *objects.Version {
	w := *v
	w.Targets = nil
	w.Segments = make([]objects.Segment, len(v.Segments))
	for i, s := range v.Segments {
		w.Segments[i] = objects.Segment{Number: s.Number, Size: s.Size, ETag: s.ETag, Checksum: s.Checksum}
	}
	return &w
}

func TestVersionCarriesNothingLocal(t *testing.T) {
	if got := FromVersion(record()).ToVersion(); !reflect.DeepEqual(got, sent()) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, sent())
	}
}

// TestVersionLayoutIsVersion1 pins the MessagePack layout: a version 1 peer
// decodes what this site sends into its record, and this site decodes what
// a version 1 peer sends.
func TestVersionLayoutIsVersion1(t *testing.T) {
	v2, err := msgpack.Marshal(FromVersion(record()))
	if err != nil {
		t.Fatal(err)
	}
	var atV1 objects.Version
	if err := msgpack.Unmarshal(v2, &atV1); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&atV1, sent()) {
		t.Fatalf("a version 1 peer reads\n %+v\nwant %+v", atV1, sent())
	}
	v1, err := msgpack.Marshal(v1Version(sent()))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(v1, v2) {
		t.Fatalf("layout differs from version 1:\n v1 %x\n v2 %x", v1, v2)
	}
	// A version 1 peer also sent its replica fields; they are ignored.
	v1, _ = msgpack.Marshal(v1Version(record()))
	var w ObjectVersion
	if err := msgpack.Unmarshal(v1, &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(w.ToVersion(), sent()) {
		t.Fatalf("from a version 1 peer:\n got %+v\nwant %+v", w.ToVersion(), sent())
	}
}

func TestBucketLayoutIsVersion1(t *testing.T) {
	b := objects.Bucket{Name: "b", Created: time.Unix(5, 6).UTC(), Versioning: objects.VersioningEnabled,
		Tags: map[string]string{"k": "v"}, Policy: []byte(`{}`), Encryption: "AES256", ModTime: 7, Warehouse: true,
		FieldTimes: map[string]int64{objects.FieldTags: 7}}
	type v1Body struct { // peerhttp's bucketBody at version 1
		Bucket  objects.Bucket `msgpack:"b"`
		Deleted bool           `msgpack:"d"`
		At      int64          `msgpack:"at"`
	}
	v1, _ := msgpack.Marshal(v1Body{Bucket: b, At: 9})
	v2, _ := msgpack.Marshal(BucketChange{Bucket: FromBucket(b), At: 9})
	if !bytes.Equal(v1, v2) {
		t.Fatalf("layout differs from version 1:\n v1 %x\n v2 %x", v1, v2)
	}
	var got BucketChange
	if err := msgpack.Unmarshal(v1, &got); err != nil {
		t.Fatal(err)
	}
	gb := got.Bucket.ToBucket()
	if gb.Created.Equal(b.Created) {
		gb.Created = b.Created // decoded in the local zone
	}
	if !reflect.DeepEqual(gb, b) || got.At != 9 {
		t.Fatalf("got %+v, want %+v", got, b)
	}
}

func TestBatchDigestsRefsLayoutIsVersion1(t *testing.T) {
	items := []replication.VersionItem{{Bucket: "b", Key: "k", Version: sent(), Data: []byte("x")}}
	v1, _ := msgpack.Marshal(items)
	v2, _ := msgpack.Marshal(FromItems(items))
	if !bytes.Equal(v1, v2) {
		t.Fatalf("batch layout differs from version 1:\n v1 %x\n v2 %x", v1, v2)
	}
	var d objects.Digest
	d[0], d[255] = 1, 1<<63
	v1, _ = msgpack.Marshal(map[string]objects.Digest{"b": d})
	v2, _ = msgpack.Marshal(FromDigests(map[string]objects.Digest{"b": d}))
	if !bytes.Equal(v1, v2) {
		t.Fatalf("digest layout differs from version 1")
	}
	var wd Digests
	if err := msgpack.Unmarshal(v1, &wd); err != nil {
		t.Fatal(err)
	}
	if got, err := wd.ToDigests(); err != nil || got["b"] != d {
		t.Fatalf("digests %v, %v", got, err)
	}
	if _, err := (Digests{"b": {1, 2}}).ToDigests(); err == nil {
		t.Fatal("a short digest was accepted")
	}
	refs := []objects.VersionRef{{Key: "k", VersionID: "v", ModTime: 1, MetaTime: 2, Origin: "o", DeleteMarker: true, Size: 3}}
	v1, _ = msgpack.Marshal(refs)
	v2, _ = msgpack.Marshal(FromRefs(refs))
	if !bytes.Equal(v1, v2) {
		t.Fatalf("slot layout differs from version 1")
	}
}

func TestJSONBodiesAreVersion1(t *testing.T) {
	st := replication.State{Sites: []replication.Site{{ID: "id", Name: "n", Endpoint: "http://e"}}, ServiceAccessKey: "ak",
		ServiceSecretKey: "sk", Updated: 3}
	info := replication.PeerInfo{DeploymentID: "id", SiteName: "n", Buckets: []string{"b"}, Warehouses: []string{"w"}, Objects: 4,
		Replication: &st, ReplicaCatalog: true, BucketConfig: map[string]string{"b": "f"}}
	job := replication.ResyncJob{ID: "j", Target: "t", State: "done", Started: time.Unix(1, 0).UTC(), Bucket: "b", Buckets: 2,
		Queued: 3, Bytes: 4, LastError: "e", AfterKey: "local"}
	for name, pair := range map[string][2]any{
		"state":  {st, FromState(st)},
		"info":   {info, FromInfo(info)},
		"resync": {job, FromResyncJob(job)},
	} {
		v1, _ := json.Marshal(pair[0])
		v2, _ := json.Marshal(pair[1])
		if !bytes.Equal(v1, v2) {
			t.Errorf("%s differs from version 1:\n v1 %s\n v2 %s", name, v1, v2)
		}
	}
	if got := FromInfo(info).ToInfo(); !reflect.DeepEqual(got, info) {
		t.Errorf("info round trip: %+v", got)
	}
	job.AfterKey = ""
	if got := FromResyncJob(job).ToResyncJob(); !reflect.DeepEqual(got, job) {
		t.Errorf("resync round trip: %+v", got)
	}
}
