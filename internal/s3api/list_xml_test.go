package s3api

import (
	"bytes"
	"encoding/xml"
	"math/rand/v2"
	"testing"
)

// marshalEntries is what encoding/xml writes for a listing's entries.
func marshalEntries(t testing.TB, entries []objectEntry, prefixes []commonPrefix) []byte {
	t.Helper()
	return marshalInner(t, struct {
		XMLName        xml.Name       `xml:"W"`
		Contents       []objectEntry  `xml:"Contents"`
		CommonPrefixes []commonPrefix `xml:"CommonPrefixes"`
	}{Contents: entries, CommonPrefixes: prefixes})
}

// marshalInner is what encoding/xml writes inside v's element <W>.
func marshalInner(t testing.TB, v any) []byte {
	t.Helper()
	out, err := xml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(bytes.TrimPrefix(out, []byte("<W>")), []byte("</W>"))
}

// seeded returns a random source whose seed the test logs, to replay it.
func seeded(t *testing.T) *rand.Rand {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, 1))
}

func randomPrefixes(r *rand.Rand) []commonPrefix {
	var prefixes []commonPrefix
	for range r.IntN(3) {
		prefixes = append(prefixes, commonPrefix{Prefix: randomText(r)})
	}
	return prefixes
}

// randomText mixes what needs no escaping with what does: XML's special
// characters, control characters, multi-byte runes, U+FFFD, invalid UTF-8.
func randomText(r *rand.Rand) string {
	pieces := []string{"a", "Z", "0", "/", " ", "-", "_", ".", "\"", "'", "&", "<", ">", "\t", "\n", "\r",
		"\x00", "\x1f", "\x7f", "é", "日本", "\U0001F600", "\uFFFD", "\xff", "\xc3", "\xed\xa0\x80", "\uFFFE", "%2F"}
	var b []byte
	for range r.IntN(12) {
		b = append(b, pieces[r.IntN(len(pieces))]...)
	}
	return string(b)
}

// TestListEntriesXML: the hand-written entries of a listing are byte for
// byte encoding/xml's, on random keys, ETags, checksums and owners.
func TestListEntriesXML(t *testing.T) {
	r := seeded(t)
	for round := range 2000 {
		var entries []objectEntry
		for range r.IntN(5) {
			e := objectEntry{Key: randomText(r), LastModified: isoTime(r.Int64()), ETag: `"` + randomText(r) + `"`,
				Size: r.Int64() - r.Int64(), StorageClass: randomText(r)}
			if r.IntN(2) == 0 {
				e.ChecksumAlgorithm, e.ChecksumType = randomText(r), randomText(r)
			}
			if r.IntN(2) == 0 {
				e.Owner = &owner{ID: randomText(r), DisplayName: randomText(r)}
			}
			entries = append(entries, e)
		}
		prefixes := randomPrefixes(r)
		var got bytes.Buffer
		listEntries(&got, entries, prefixes)
		if want := marshalEntries(t, entries, prefixes); !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("round %d:\n got %q\nwant %q", round, got.Bytes(), want)
		}
	}
}

func FuzzListEntriesXML(f *testing.F) {
	f.Add("key", `"etag"`, "prefix/", int64(5))
	f.Add("a&b<c>\"'\t\n\r", "\xff\xfe", "\x00\uFFFD", int64(-1))
	f.Fuzz(func(t *testing.T, key, etag, prefix string, size int64) {
		entries := []objectEntry{{Key: key, ETag: etag, Size: size, StorageClass: "STANDARD", Owner: &siteOwner,
			listedChecksum: listedChecksum{ChecksumAlgorithm: prefix}}}
		prefixes := []commonPrefix{{Prefix: prefix}}
		var got bytes.Buffer
		listEntries(&got, entries, prefixes)
		if want := marshalEntries(t, entries, prefixes); !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("got %q\nwant %q", got.Bytes(), want)
		}
	})
}

// BenchmarkListEntries writes a page of 1,000 entries.
func BenchmarkListEntries(b *testing.B) {
	entries := make([]objectEntry, 1000)
	for i := range entries {
		entries[i] = objectEntry{Key: "twinlake-bench/0a1b2c3d/100B/00000" + string(rune('0'+i%10)), LastModified: isoTime(int64(i) * 1e9),
			ETag: `"0123456789abcdef0123456789abcdef"`, Size: 100, StorageClass: "STANDARD"}
	}
	b.Run("hand", func(b *testing.B) {
		for b.Loop() {
			b := xmlBuffer()
			listEntries(b, entries, nil)
			releaseXML(b)
		}
	})
	b.Run("encoding/xml", func(b *testing.B) {
		for b.Loop() {
			marshalEntries(b, entries, nil)
		}
	})
}

// TestVersionEntriesXML: the hand-written versions and delete markers of a
// version listing are byte for byte encoding/xml's.
func TestVersionEntriesXML(t *testing.T) {
	r := seeded(t)
	for round := range 2000 {
		var entries []any
		for range r.IntN(6) {
			o := owner{ID: randomText(r), DisplayName: randomText(r)}
			if r.IntN(3) == 0 {
				entries = append(entries, deleteMarkerEntry{Key: randomText(r), VersionID: randomText(r), IsLatest: r.IntN(2) == 0,
					LastModified: isoTime(r.Int64()), Owner: o})
				continue
			}
			v := versionEntry{Key: randomText(r), VersionID: randomText(r), IsLatest: r.IntN(2) == 0, LastModified: isoTime(r.Int64()),
				ETag: `"` + randomText(r) + `"`, Size: r.Int64() - r.Int64(), StorageClass: randomText(r), Owner: o}
			if r.IntN(2) == 0 {
				v.ChecksumAlgorithm, v.ChecksumType = randomText(r), randomText(r)
			}
			entries = append(entries, v)
		}
		prefixes := randomPrefixes(r)
		want := marshalInner(t, struct {
			XMLName        xml.Name `xml:"W"`
			Entries        []any
			CommonPrefixes []commonPrefix `xml:"CommonPrefixes"`
		}{Entries: entries, CommonPrefixes: prefixes})
		var got bytes.Buffer
		versionEntries(&got, entries, prefixes)
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("round %d:\n got %q\nwant %q", round, got.Bytes(), want)
		}
	}
}
