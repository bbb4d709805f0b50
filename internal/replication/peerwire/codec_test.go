package peerwire

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func codecItems() []VersionItem {
	full := &ObjectVersion{VersionID: "8f0c2a8e-3c1d-4f5e-9a7b-0123456789ab", ModTime: 1796600058397955646, DeleteMarker: true,
		Size: 1 << 33, ETag: `"e-2"`, ContentType: "text/plain", UserMeta: map[string]string{"a": "1"},
		Headers: map[string]string{"Cache-Control": "no-cache"}, Checksums: map[string]string{"CRC32": "x-2"},
		Tags: map[string]string{"": ""}, SSE: "AES256", Multipart: true, Origin: "site-a", MetaTime: -1,
		KeyCheck: []byte{1}, LockMode: "COMPLIANCE", RetainUntil: 1 << 40, LegalHold: "ON", ACL: "public-read",
		Segments: []Segment{{Number: 1, Size: 5, ETag: "e", Checksum: map[string]string{"CRC32": "y"}, SealedKey: []byte{2}}, {}}}
	return []VersionItem{
		{Bucket: "b", Key: "k", Version: full, Data: bytes.Repeat([]byte{0xc1}, 70000)},
		{Bucket: "b", Key: "", Version: &ObjectVersion{VersionID: "null"}},
		{Bucket: "b", Key: "no-version"},
	}
}

// TestItemsCodecMatchesReflection: a batch written by hand reads back the
// same by hand and through the reflective codec (a peer of an earlier
// build), and one the reflective codec wrote reads back the same by hand.
func TestItemsCodecMatchesReflection(t *testing.T) {
	for _, items := range [][]VersionItem{nil, codecItems()} {
		viaReflect, err := msgpack.Marshal(items)
		if err != nil {
			t.Fatal(err)
		}
		var want []VersionItem
		if err := msgpack.Unmarshal(viaReflect, &want); err != nil {
			t.Fatal(err)
		}
		fromHand, err := DecodeItems(AppendItems(nil, items))
		if err != nil {
			t.Fatal(err)
		}
		fromReflect, err := DecodeItems(viaReflect)
		if err != nil {
			t.Fatal(err)
		}
		var byReflect []VersionItem
		if err := msgpack.Unmarshal(AppendItems(nil, items), &byReflect); err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 { // the reflective codec reads an empty array as nil or empty alike
			if len(fromHand)+len(fromReflect)+len(byReflect) != 0 {
				t.Fatalf("an empty batch read back as %d, %d, %d items", len(fromHand), len(fromReflect), len(byReflect))
			}
			continue
		}
		for name, got := range map[string][]VersionItem{"hand to hand": fromHand, "reflection to hand": fromReflect, "hand to reflection": byReflect} {
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
			}
		}
	}
}

// TestDecodeItemsIgnoresLocalFields: fields of a site's storage records
// that a peer's batch might carry (a blob ID, inline data, target
// statuses) are stepped over, never read into the version applied.
func TestDecodeItemsIgnoresLocalFields(t *testing.T) {
	raw, err := msgpack.Marshal([]map[string]any{{"b": "b", "k": "k", "v": map[string]any{
		"id": "v", "rt": map[string]string{"x": "PENDING"}, "ui": "upload",
		"sg": []map[string]any{{"s": 1, "b": "../../etc/passwd", "i": []byte("inline")}}}}})
	if err != nil {
		t.Fatal(err)
	}
	items, err := DecodeItems(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := []VersionItem{{Bucket: "b", Key: "k", Version: &ObjectVersion{VersionID: "v", Segments: []Segment{{Size: 1}}}}}
	if !reflect.DeepEqual(items, want) {
		t.Fatalf("got %+v", items)
	}
}

// TestDecodeItemsRefusesBrokenBatches: a batch cut short anywhere, or a
// huge count in a few bytes, is ErrMalformed, never a panic or a large
// allocation.
func TestDecodeItemsRefusesBrokenBatches(t *testing.T) {
	raw := AppendItems(nil, codecItems()[:2])
	for n := range len(raw) {
		if _, err := DecodeItems(raw[:n]); !errors.Is(err, ErrMalformed) {
			t.Fatalf("a batch cut at %d of %d bytes: %v", n, len(raw), err)
		}
	}
	for _, bad := range [][]byte{{0xdd, 0xff, 0xff, 0xff, 0xff}, {0x91, 0xdf, 0xff, 0xff, 0xff, 0xff}, {0x91, 0x81, 0xa1, 'v', 0x05}} {
		if _, err := DecodeItems(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("% x: %v", bad, err)
		}
	}
}

// FuzzDecodeItems: any body either decodes or is ErrMalformed; what the
// hand codec accepts, the reflective codec (given only that: it sizes by
// unchecked counts) reads the same, when it reads it.
func FuzzDecodeItems(f *testing.F) {
	items := codecItems()
	items[0].Data = []byte("small")
	f.Add(AppendItems(nil, items))
	f.Add([]byte{0x90})
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := DecodeItems(raw)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("% x: %v", raw, err)
			}
			return
		}
		var want []VersionItem
		if msgpack.Unmarshal(raw, &want) == nil && len(want)+len(got) > 0 && !reflect.DeepEqual(got, want) {
			t.Fatalf("% x reads as\n%+v by hand,\n%+v by reflection", raw, got, want)
		}
	})
}
