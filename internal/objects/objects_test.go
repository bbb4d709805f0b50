package objects

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/checksum"
	"github.com/twinlake/twinlake/internal/meta"
)

func newLayer(t *testing.T) *Layer { return newLayerInline(t, 8) }

// newLayerInline is a layer over memory and a blob directory that keeps
// objects of at most inlineLimit bytes inline.
func newLayerInline(t *testing.T, inlineLimit int64) *Layer {
	return newLayerOver(t, meta.NewMem(), inlineLimit)
}

// newLayerOver is newLayerInline over the metadata store m.
func newLayerOver(t *testing.T, m meta.Store, inlineLimit int64) *Layer {
	t.Helper()
	b, err := blob.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(m, b, Config{SiteID: "site-a", InlineLimit: inlineLimit})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func put(t *testing.T, l *Layer, bucket, key, body string) *Version {
	t.Helper()
	v, err := l.PutObject(context.Background(), bucket, key, strings.NewReader(body), PutOptions{Size: int64(len(body))})
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return v
}

// putReplica stores body under key as a version received from a peer.
func putReplica(t *testing.T, l *Layer, bucket, key, body string) {
	t.Helper()
	sum := md5.Sum([]byte(body))
	in := &Version{VersionID: newVersionID(), ModTime: time.Now().UnixNano(), Origin: "site-b", Size: int64(len(body)),
		ETag: hex.EncodeToString(sum[:]), Segments: []Segment{{Size: int64(len(body))}}}
	if _, err := l.ApplyReplica(context.Background(), bucket, key, in, strings.NewReader(body)); err != nil {
		t.Fatalf("replica %q: %v", key, err)
	}
}

func read(t *testing.T, l *Layer, bucket, key, versionID string) string {
	t.Helper()
	v, err := l.HeadObject(context.Background(), bucket, key, versionID)
	if err != nil {
		t.Fatalf("head %s: %v", key, err)
	}
	r, err := l.OpenRange(bucket, key, v, 0, v.Size)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestListPaginationWithDelimiter walks a delimited listing one entry per
// page and checks every key or prefix appears exactly once, in order.
func TestListPaginationWithDelimiter(t *testing.T) {
	l := newLayer(t)
	ctx := context.Background()
	if err := l.CreateBucket(ctx, "bkt"); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a/1", "a/2", "a/b/3", "b", "c/1", "c/2", "d", "e/x/y"} {
		put(t, l, "bkt", k, "data-"+k)
	}
	l.DeleteObject(ctx, "bkt", "d", "") // unversioned: removed outright
	for _, tc := range []struct {
		prefix, delim string
		want          string
	}{
		{"", "/", "a/,b,c/,e/"},
		{"a/", "/", "a/1,a/2,a/b/"},
		{"", "", "a/1,a/2,a/b/3,b,c/1,c/2,e/x/y"},
		{"c", "/", "c/"},
	} {
		for _, pageSize := range []int{1, 2, 1000} {
			var got []string
			after := ""
			for {
				res, err := l.ListObjects(ctx, "bkt", ListOptions{Prefix: tc.prefix, Delimiter: tc.delim, After: after, MaxKeys: pageSize})
				if err != nil {
					t.Fatal(err)
				}
				for _, o := range res.Objects {
					got = append(got, o.Key)
				}
				got = append(got, res.CommonPrefixes...)
				if !res.IsTruncated {
					break
				}
				after = res.NextAfter
			}
			sortStrings(got)
			if strings.Join(got, ",") != tc.want {
				t.Errorf("prefix %q delim %q page %d: got %v, want %s", tc.prefix, tc.delim, pageSize, got, tc.want)
			}
		}
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestVersionsAndDeleteMarkers(t *testing.T) {
	l := newLayer(t)
	ctx := context.Background()
	l.CreateBucket(ctx, "ver")
	if err := l.SetVersioning(ctx, "ver", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	v1 := put(t, l, "ver", "k", "one")
	v2 := put(t, l, "ver", "k", "a longer second body that is not inline")
	// A NUL is refused in new keys, but a peer's older object may carry
	// one: the key encoding must keep it apart from "k".
	if err := ValidateNewKey("k\x00nul"); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("NUL in a new key: %v", err)
	}
	putReplica(t, l, "ver", "k\x00nul", "nul key")
	dm, err := l.DeleteObject(ctx, "ver", "k", "")
	if err != nil || !dm.DeleteMarker {
		t.Fatalf("delete marker: %+v %v", dm, err)
	}
	if _, err := l.HeadObject(ctx, "ver", "k", ""); !errors.Is(err, ErrObjectNotFound) {
		t.Fatalf("head after marker: %v", err)
	}
	if _, err := l.HeadObject(ctx, "ver", "k", dm.VersionID); !errors.Is(err, ErrMethodNotAllowed) {
		t.Fatalf("head of marker by id: %v", err)
	}
	if got := read(t, l, "ver", "k", v1.VersionID); got != "one" {
		t.Fatalf("v1 = %q", got)
	}
	// Page through versions one at a time.
	var seen []string
	km, vm := "", ""
	for {
		res, err := l.ListObjectVersions(ctx, "ver", VersionListOptions{KeyMarker: km, VersionIDMarker: vm, MaxKeys: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range res.Versions {
			seen = append(seen, fmt.Sprintf("%q/%v/%v", v.Key, v.DeleteMarker, v.IsLatest))
		}
		if !res.IsTruncated {
			break
		}
		km, vm = res.NextKeyMarker, res.NextVersionIDMarker
	}
	want := `"k"/true/true,"k"/false/false,"k"/false/false,"k\x00nul"/false/true`
	if strings.Join(seen, ",") != want {
		t.Fatalf("versions:\n got %s\nwant %s", strings.Join(seen, ","), want)
	}
	// Removing the marker makes v2 current again; removing v2 makes v1 current.
	if _, err := l.DeleteObject(ctx, "ver", "k", dm.VersionID); err != nil {
		t.Fatal(err)
	}
	if got := read(t, l, "ver", "k", ""); got != "a longer second body that is not inline" {
		t.Fatalf("after removing marker = %q", got)
	}
	if _, err := l.DeleteObject(ctx, "ver", "k", v2.VersionID); err != nil {
		t.Fatal(err)
	}
	if got := read(t, l, "ver", "k", ""); got != "one" {
		t.Fatalf("after removing v2 = %q", got)
	}
	if err := l.DeleteBucket(ctx, "ver"); !errors.Is(err, ErrBucketNotEmpty) {
		t.Fatalf("delete non-empty bucket: %v", err)
	}
}

func TestEvalWriteConditions(t *testing.T) {
	live := &latest{ETag: "abc"}
	marker := &latest{DeleteMarker: true}
	fail := ErrPreconditionFailed
	for _, tc := range []struct {
		cur          *latest
		match, noneM string
		gone, want   error
	}{
		{nil, "", "*", ErrObjectNotFound, nil},
		{marker, "", "*", ErrObjectNotFound, nil},
		{live, "", "*", ErrObjectNotFound, fail},
		{live, "", "*", ErrConditionalConflict, fail},
		{live, `"abc"`, "", ErrObjectNotFound, nil},
		{live, "abc, def", "", ErrObjectNotFound, nil},
		{live, "xyz", "", ErrConditionalConflict, fail},
		{nil, "abc", "", ErrObjectNotFound, ErrObjectNotFound},
		{marker, "abc", "", ErrConditionalConflict, ErrConditionalConflict},
		{live, "", "abc", ErrObjectNotFound, fail},
		{live, "", `"xyz"`, ErrObjectNotFound, nil},
		{nil, "", "abc", ErrObjectNotFound, nil},
	} {
		if got := evalWriteConditions(tc.cur, tc.match, tc.noneM, tc.gone); !errors.Is(got, tc.want) && !(got == nil && tc.want == nil) {
			t.Errorf("cur=%+v If-Match=%q If-None-Match=%q: got %v, want %v", tc.cur, tc.match, tc.noneM, got, tc.want)
		}
	}
}

func TestAssembleRules(t *testing.T) {
	big := Segment{Size: MinPartSize, ETag: "5d41402abc4b2a76b9719d911017c592"}
	small := Segment{Size: 10, ETag: "7d793037a0760186574b0282f2f435e7"}
	have := map[int]*Part{1: {Number: 1, Segment: big}, 2: {Number: 2, Segment: small}, 3: {Number: 3, Segment: small}}
	u := &Upload{}
	for _, tc := range []struct {
		name string
		list []CompletePart
		want error
	}{
		{"ok", []CompletePart{{1, big.ETag, ""}, {2, small.ETag, ""}}, nil},
		{"order", []CompletePart{{2, small.ETag, ""}, {1, big.ETag, ""}}, ErrInvalidPartOrder},
		{"missing", []CompletePart{{1, big.ETag, ""}, {4, small.ETag, ""}}, ErrInvalidPart},
		{"etag", []CompletePart{{1, "ffff", ""}}, ErrInvalidPart},
		{"too small", []CompletePart{{2, small.ETag, ""}, {3, small.ETag, ""}}, ErrEntityTooSmall},
		{"empty", nil, ErrInvalidPart},
	} {
		v, _, err := assemble(u, have, tc.list, "")
		if !errors.Is(err, tc.want) && !(err == nil && tc.want == nil) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
		if err == nil && (!strings.HasSuffix(v.ETag, "-2") || v.Size != MinPartSize+10) {
			t.Errorf("%s: etag %s size %d", tc.name, v.ETag, v.Size)
		}
	}
}

// An upload's object checksum is formed from its parts' as its type
// says: FULL_OBJECT is the CRC of the whole object (what a single PUT of
// the same bytes stores), COMPOSITE the checksum of the part checksums
// with the part count; an upload that names no type takes its algorithm's
// default. A checksum the client sends must be the one formed.
func TestAssembleChecksumTypes(t *testing.T) {
	one, two := bytes.Repeat([]byte("a"), MinPartSize), []byte("tail of the object")
	sum := func(a checksum.Algorithm, parts ...[]byte) string {
		h := a.New()
		for _, p := range parts {
			h.Write(p)
		}
		return checksum.Encode(h.Sum(nil))
	}
	part := func(n int, a checksum.Algorithm, b []byte) *Part {
		return &Part{Number: n, Segment: Segment{Size: int64(len(b)), ETag: fmt.Sprintf("%x", md5.Sum(b)),
			Checksum: map[string]string{string(a): sum(a, b)}}}
	}
	for _, tc := range []struct {
		name string
		alg  checksum.Algorithm
		typ  checksum.Type
		want string // client's object checksum; "whole" for the CRC of all the bytes
		full bool   // the result is the whole object's checksum
		err  error
	}{
		{name: "full object crc32c", alg: checksum.CRC32C, typ: checksum.TypeFullObject, full: true},
		{name: "full object crc32 checked", alg: checksum.CRC32, typ: checksum.TypeFullObject, want: "whole", full: true},
		{name: "full object wrong", alg: checksum.CRC32, typ: checksum.TypeFullObject, want: "AAAAAA==", err: checksum.ErrBadDigest},
		{name: "crc64nvme defaults to full object", alg: checksum.CRC64NVME, full: true},
		{name: "composite crc32c", alg: checksum.CRC32C, typ: checksum.TypeComposite},
		{name: "composite by default", alg: checksum.SHA256},
		{name: "composite wrong", alg: checksum.SHA1, want: "AAAAAAAAAAAAAAAAAAAAAAAAAAA=-2", err: checksum.ErrBadDigest},
	} {
		u := &Upload{Checksum: tc.alg, ChecksumType: tc.typ}
		have := map[int]*Part{1: part(1, tc.alg, one), 2: part(2, tc.alg, two)}
		list := []CompletePart{{1, have[1].Segment.ETag, ""}, {2, have[2].Segment.ETag, ""}}
		want := tc.want
		if want == "whole" {
			want = sum(tc.alg, one, two)
		}
		v, _, err := assemble(u, have, list, want)
		if !errors.Is(err, tc.err) || (err != nil) != (tc.err != nil) {
			t.Fatalf("%s: got %v, want %v", tc.name, err, tc.err)
		}
		if err != nil {
			continue
		}
		got := v.Checksums[string(tc.alg)]
		if tc.full && got != sum(tc.alg, one, two) {
			t.Errorf("%s: %s, want the whole object's %s", tc.name, got, sum(tc.alg, one, two))
		}
		if !tc.full && !strings.HasSuffix(got, "-2") {
			t.Errorf("%s: %s is not a composite of 2 parts", tc.name, got)
		}
	}
	for _, tc := range []struct {
		alg checksum.Algorithm
		typ checksum.Type
	}{{"", checksum.TypeFullObject}, {checksum.SHA256, checksum.TypeFullObject}, {checksum.CRC64NVME, checksum.TypeComposite}} {
		if err := checkUploadChecksum(tc.alg, tc.typ); !errors.Is(err, checksum.ErrUnsupportedType) {
			t.Errorf("upload with %q %s: %v, want ErrUnsupportedType", tc.alg, tc.typ, err)
		}
	}
}

func TestUsageFollowsLatestVersions(t *testing.T) {
	l := newLayer(t)
	ctx := context.Background()
	l.CreateBucket(ctx, "usg")
	l.SetVersioning(ctx, "usg", VersioningEnabled)
	put(t, l, "usg", "a", "12345")
	v := put(t, l, "usg", "a", "123")
	put(t, l, "usg", "b", "1234567890")
	if got := l.Usage(); got != (Usage{Objects: 2, Bytes: 13}) {
		t.Fatalf("after puts: %+v", got)
	}
	dm, _ := l.DeleteObject(ctx, "usg", "b", "")
	if got := l.Usage(); got != (Usage{Objects: 1, Bytes: 3}) {
		t.Fatalf("after delete marker: %+v", got)
	}
	l.DeleteObject(ctx, "usg", "b", dm.VersionID)
	l.DeleteObject(ctx, "usg", "a", v.VersionID)
	if got := l.Usage(); got != (Usage{Objects: 2, Bytes: 15}) {
		t.Fatalf("after removing marker and latest: %+v", got)
	}
	// A fresh layer over the same store recomputes the same usage.
	l2, err := New(l.meta, l.blobs, Config{SiteID: "site-a"})
	if err != nil {
		t.Fatal(err)
	}
	if got := l2.Usage(); got != (Usage{Objects: 2, Bytes: 15}) {
		t.Fatalf("reloaded: %+v", got)
	}
}

func TestOpenRemovesOrphanBlobs(t *testing.T) {
	ctx := context.Background()
	b, err := blob.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := meta.NewMem()
	l, err := New(m, b, Config{SiteID: "site-a", InlineLimit: 8})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.CreateBucket(ctx, "bkt"); err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("kept ", 100)
	if _, err := l.PutObject(ctx, "bkt", "k", strings.NewReader(body), PutOptions{Size: int64(len(body))}); err != nil {
		t.Fatal(err)
	}
	// A blob written and fsynced under its intent, its metadata never
	// committed (a crash).
	id := blob.NewID()
	batch := m.NewBatch()
	batch.Set(intentKey(id), nil)
	if err := batch.Commit(true); err != nil {
		t.Fatal(err)
	}
	w, err := b.CreateAs(id)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("orphan"))
	orphan, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(m, b, Config{SiteID: "site-a", InlineLimit: 8}); err != nil {
		t.Fatal(err)
	}
	if f, err := b.Open(orphan); err == nil {
		f.Close()
		t.Fatal("orphan blob still present")
	}
	_, rc, err := l.GetObject(ctx, "bkt", "k", "", 0, int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if string(got) != body {
		t.Fatalf("referenced blob damaged: %q", got)
	}
}

// TestLiveKeysAgreesWithHead: LiveKeys finds live exactly the keys
// HeadObject without a version finds an object under.
func TestLiveKeysAgreesWithHead(t *testing.T) {
	l := newLayer(t)
	ctx := context.Background()
	l.CreateBucket(ctx, "live")
	if err := l.SetVersioning(ctx, "live", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	put(t, l, "live", "obj", "one")
	put(t, l, "live", "big", strings.Repeat("x", 20))
	put(t, l, "live", "gone", "two")
	if _, err := l.DeleteObject(ctx, "live", "gone", ""); err != nil {
		t.Fatal(err)
	}
	keys := []string{"obj", "gone", "never", "", "big", "obj"}
	got, err := l.LiveKeys(ctx, "live", keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		_, herr := l.HeadObject(ctx, "live", k, "")
		if want := herr == nil; got[i] != want {
			t.Errorf("%q: LiveKeys %t, HeadObject %v", k, got[i], herr)
		}
	}
	if got, err := l.LiveKeys(ctx, "no-such-bucket", []string{"obj"}); err != nil || got[0] {
		t.Fatalf("missing bucket: %v %v", got, err)
	}
}
