package objects

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// codecVersions are versions with every field set, none, and the edges
// of each kind: empty and nil maps, long strings, large and negative
// numbers, several segments with inline data.
func codecVersions() []*Version {
	long := string(bytes.Repeat([]byte("k"), 70000))
	return []*Version{
		{},
		{VersionID: "null", ModTime: 1, Size: 0},
		{VersionID: "8f0c2a8e-3c1d-4f5e-9a7b-0123456789ab", ModTime: 1796600058397955646, DeleteMarker: true, Origin: "site-a"},
		{
			VersionID: "8f0c2a8e-3c1d-4f5e-9a7b-0123456789ab", ModTime: 1<<62 + 7, Size: 4096, ETag: `"d41d8cd98f00b204e9800998ecf8427e"`,
			ContentType: "application/octet-stream", UserMeta: map[string]string{"a": "1", "long": long},
			Headers:   map[string]string{"Cache-Control": "no-cache", HeaderStorageClass: "REDUCED_REDUNDANCY"},
			Checksums: map[string]string{"CRC32": "AAAAAA==", "SHA256": "x-3"}, Tags: map[string]string{"": ""},
			SSE: "AES256", Multipart: true, Origin: "b", KeyCheck: []byte{0, 1, 2}, UploadID: "u", MetaTime: -1,
			LockMode: "GOVERNANCE", RetainUntil: -1 << 40, LegalHold: "ON", ACL: "public-read",
			Targets:       map[string]string{"s1": StatusPending, "s2": StatusCompleted, "s3": "OTHER"},
			ReplicaStatus: StatusReplica, ReplicaTimestamp: 255, ActivityTimestamp: 65536,
			Segments: []Segment{
				{Number: 1, Size: 4096, ETag: "e", Inline: bytes.Repeat([]byte{0xc1}, 4096), Checksum: map[string]string{"CRC32": "x"}, SealedKey: []byte{9}},
				{Number: 10000, Size: 1 << 33, BlobID: "blob"},
				{},
			},
		},
		{VersionID: "v", UserMeta: map[string]string{}, Segments: []Segment{{Inline: bytes.Repeat([]byte("x"), 70000)}}},
	}
}

// TestVersionCodecMatchesReflection: a record written by hand reads back
// the same through the reflective codec and by hand, and one written by
// the reflective codec (every record stored before the hand codec) reads
// back the same by hand.
func TestVersionCodecMatchesReflection(t *testing.T) {
	for i, v := range codecVersions() {
		want := decodedByReflection(t, mustMarshal(t, v))

		var fromHand, fromReflect, byReflect Version
		if err := decodeVersion(appendVersion(nil, v), &fromHand); err != nil {
			t.Fatalf("version %d: hand-written record: %v", i, err)
		}
		if err := decodeVersion(mustMarshal(t, v), &fromReflect); err != nil {
			t.Fatalf("version %d: reflection-written record: %v", i, err)
		}
		if err := msgpack.Unmarshal(appendVersion(nil, v), &byReflect); err != nil {
			t.Fatalf("version %d: hand-written record through reflection: %v", i, err)
		}
		for name, got := range map[string]*Version{"hand to hand": &fromHand, "reflection to hand": &fromReflect, "hand to reflection": &byReflect} {
			if !reflect.DeepEqual(got, want) {
				t.Errorf("version %d, %s:\n got %+v\nwant %+v", i, name, got, want)
			}
		}
	}
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodedByReflection(t testing.TB, b []byte) *Version {
	t.Helper()
	var v Version
	if err := msgpack.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return &v
}

// TestVersionCodecSkipsUnknownFields: a record a newer build wrote, with
// fields this one does not know, reads as its known fields.
func TestVersionCodecSkipsUnknownFields(t *testing.T) {
	rec := mustMarshal(t, map[string]any{
		"id": "v1", "zz": map[string]any{"nested": []any{1.5, true, nil, "s", []byte{1}, map[string]int{"a": -300}}},
		"sz": 5, "ext": msgpack.RawMessage{0xd6, 0xff, 0, 0, 0, 1}, "mt": uint64(1) << 63,
	})
	var got Version
	if err := decodeVersion(rec, &got); err != nil {
		t.Fatal(err)
	}
	want := Version{VersionID: "v1", Size: 5, ModTime: -1 << 63}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

// TestVersionCodecRefusesBrokenRecords: every prefix of a record, and a
// field of the wrong type, is an error, never a panic or a partial read
// taken for a whole one.
func TestVersionCodecRefusesBrokenRecords(t *testing.T) {
	rec := appendVersion(nil, codecVersions()[3])
	for n := range len(rec) {
		var v Version
		if err := decodeVersion(rec[:n], &v); err == nil {
			t.Fatalf("a record cut at %d of %d bytes read without error", n, len(rec))
		}
	}
	for _, bad := range []any{
		map[string]any{"id": 5},
		map[string]any{"mt": "x"},
		map[string]any{"dm": 1},
		map[string]any{"sg": "x"},
		map[string]any{"sg": []any{map[string]any{"i": 3}}},
		map[string]any{"rt": []string{"a"}},
		[]any{"v1"},
	} {
		var v Version
		if err := decodeVersion(mustMarshal(t, bad), &v); err == nil {
			t.Errorf("%v read without error", bad)
		}
	}
}

// TestLatestCodecMatchesReflection is TestVersionCodecMatchesReflection
// for the latest-version summary, through encode and decode.
func TestLatestCodecMatchesReflection(t *testing.T) {
	for i, v := range codecVersions() {
		s := summarize(v)
		var want, fromHand, fromReflect latest
		if err := msgpack.Unmarshal(mustMarshal(t, &s), &want); err != nil {
			t.Fatal(err)
		}
		if err := decode(encode(s), &fromHand); err != nil {
			t.Fatalf("summary %d: %v", i, err)
		}
		if err := decode(mustMarshal(t, &s), &fromReflect); err != nil {
			t.Fatalf("summary %d: %v", i, err)
		}
		if fromHand != want || fromReflect != want {
			t.Errorf("summary %d: hand %+v, from reflection %+v, want %+v", i, fromHand, fromReflect, want)
		}
	}
}

// TestStatusCodecMatchesReflection: a status record written by hand reads
// by reflection as the status, and one written by reflection reads by
// hand as it; so does the fuzzer's.
func TestStatusCodecMatchesReflection(t *testing.T) {
	for _, s := range []targetStatus{
		{},
		{ModTime: 1767225600000000000, Status: StatusCompleted, ReplicaTimestamp: 1767225600100000000, ActivityTimestamp: 1767225600100000000},
		{ModTime: -5, MetaTime: 7, Status: StatusFailed, ActivityTimestamp: 3},
		{ModTime: 1 << 40, Status: "SOMETHING-ELSE"},
	} {
		checkStatusCodec(t, s)
	}
}

func checkStatusCodec(t *testing.T, s targetStatus) {
	t.Helper()
	var fromHand, fromReflect, hand targetStatus
	if err := msgpack.Unmarshal(encode(&s), &fromHand); err != nil || fromHand != s {
		t.Fatalf("hand-written %+v by reflection: %+v (%v)", s, fromHand, err)
	}
	if err := decode(mustMarshal(t, &s), &fromReflect); err != nil || fromReflect != s {
		t.Fatalf("reflection-written %+v by hand: %+v (%v)", s, fromReflect, err)
	}
	if err := decode(encode(&s), &hand); err != nil || hand != s {
		t.Fatalf("%+v by hand and back: %+v (%v)", s, hand, err)
	}
}

func FuzzStatusCodec(f *testing.F) {
	f.Add(int64(1), int64(0), "COMPLETED", int64(2), int64(3), []byte(nil))
	f.Add(int64(-1), int64(9), "", int64(0), int64(0), encode(&targetStatus{ModTime: 4, Status: StatusPending}))
	f.Fuzz(func(t *testing.T, mt, mm int64, st string, rts, rat int64, raw []byte) {
		checkStatusCodec(t, targetStatus{ModTime: mt, MetaTime: mm, Status: st, ReplicaTimestamp: rts, ActivityTimestamp: rat})
		var byHand, byReflect targetStatus
		if decodeStatus(raw, &byHand) != nil {
			return
		}
		if msgpack.Unmarshal(raw, &byReflect) == nil && byHand != byReflect {
			t.Fatalf("%x reads as %+v by hand, %+v by reflection", raw, byHand, byReflect)
		}
	})
}

// FuzzVersionCodec builds a version from the fuzzer's values and checks
// that both codecs read each other's record of it as the same version;
// the fuzzer's bytes are also read as a record, which must not panic, and
// must read as the reflective codec reads them whenever both accept them.
func FuzzVersionCodec(f *testing.F) {
	for _, v := range codecVersions() {
		if len(appendVersion(nil, v)) > 1<<10 {
			// Large seeds make the fuzzer spend its time minimizing.
			v = &Version{VersionID: v.VersionID, Targets: v.Targets, Checksums: v.Checksums, Segments: []Segment{{Number: 2, Checksum: v.Checksums}}}
		}
		f.Add(v.VersionID, v.ModTime, v.Size, v.ETag, v.Origin, v.DeleteMarker, []byte(nil), appendVersion(nil, v))
	}
	f.Add("", int64(-33), int64(128), "\xff", "", false, []byte{}, mustMarshal(f, &Version{Segments: []Segment{{}}}))
	f.Fuzz(func(t *testing.T, id string, mt, size int64, s1, s2 string, dm bool, inline, raw []byte) {
		v := &Version{VersionID: id, ModTime: mt, Size: size, ETag: s1, Origin: s2, DeleteMarker: dm, MetaTime: -size,
			UserMeta: map[string]string{s1: s2}, Targets: map[string]string{s2: s1}}
		if inline != nil {
			v.Segments = []Segment{{Number: int(mt % 10000), Size: size, Inline: inline, BlobID: s2}}
		}
		want := decodedByReflection(t, mustMarshal(t, v))
		var got, back Version
		if err := decodeVersion(appendVersion(nil, v), &got); err != nil || !reflect.DeepEqual(&got, want) {
			t.Fatalf("hand codec round trip: %v\n got %+v\nwant %+v", err, &got, want)
		}
		if err := msgpack.Unmarshal(appendVersion(nil, v), &back); err != nil || !reflect.DeepEqual(&back, want) {
			t.Fatalf("hand-written record through reflection: %v\n got %+v\nwant %+v", err, &back, want)
		}

		// Only input the hand codec accepts goes to the reflective one:
		// that one sizes a map or slice by the count it reads, so a
		// count of 2³² in a few bytes exhausts memory, where the hand
		// codec refuses any count the rest of the input cannot hold.
		var byHand, byReflect Version
		if decodeVersion(raw, &byHand) != nil {
			return
		}
		if mt, mm, err := versionStamp(raw); err != nil || mt != byHand.ModTime || mm != byHand.MetaTime {
			t.Fatalf("%x: stamp read alone %d/%d (%v), whole %d/%d", raw, mt, mm, err, byHand.ModTime, byHand.MetaTime)
		}
		if msgpack.Unmarshal(raw, &byReflect) == nil && !reflect.DeepEqual(byHand, byReflect) {
			t.Fatalf("%x reads as\n%+v by hand,\n%+v by reflection", raw, byHand, byReflect)
		}
	})
}

// BenchmarkVersionCodec compares the hand codec with the reflective one
// on the record of a 4 KiB object stored inline on a replicating site.
func BenchmarkVersionCodec(b *testing.B) {
	v := &Version{VersionID: "8f0c2a8e-3c1d-4f5e-9a7b-0123456789ab", ModTime: 1796600058397955646, Size: 4096,
		ETag: `"d41d8cd98f00b204e9800998ecf8427e"`, ContentType: "application/octet-stream", Origin: "8f0c2a8e3c1d4f5e",
		Targets:  map[string]string{"0c2a8e3c1d4f5e9a": StatusPending},
		Segments: []Segment{{Size: 4096, Inline: make([]byte, 4096)}}, ActivityTimestamp: 1796600058397955646}
	rec := appendVersion(nil, v)
	buf := make([]byte, 0, 8192)
	b.Run("encode/hand", func(b *testing.B) {
		for b.Loop() {
			buf = appendVersion(buf[:0], v)
		}
	})
	b.Run("encode/reflect", func(b *testing.B) {
		for b.Loop() {
			_, _ = msgpack.Marshal(v)
		}
	})
	b.Run("decode/hand", func(b *testing.B) {
		for b.Loop() {
			var got Version
			_ = decodeVersion(rec, &got)
		}
	})
	b.Run("decode/reflect", func(b *testing.B) {
		for b.Loop() {
			var got Version
			_ = msgpack.Unmarshal(rec, &got)
		}
	})
}
