package objects

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/checksum"
	"github.com/twinlake/twinlake/internal/lifecycle"
	"github.com/twinlake/twinlake/internal/meta"
)

// crashed is the panic value of a simulated crash.
type crashed struct{ point string }

// crashScenario is an operation to interrupt at each of its crash points:
// setup runs uninterrupted, act is stopped at one point.
type crashScenario struct {
	name  string
	setup func(t *testing.T, l *Layer)
	act   func(l *Layer) error
}

const crashBucket = "crash"

func crashScenarios() []crashScenario {
	ctx := context.Background()
	big := strings.Repeat("x", 100)
	bigPart := bytes.Repeat([]byte("p"), MinPartSize)
	versioned := func(t *testing.T, l *Layer) {
		if err := l.SetVersioning(ctx, crashBucket, VersioningEnabled); err != nil {
			t.Fatal(err)
		}
	}
	var uploadID string
	parts := func(t *testing.T, l *Layer) {
		u, err := l.CreateMultipartUpload(ctx, crashBucket, "mp", PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		uploadID = u.UploadID
		for n, body := range [][]byte{bigPart, []byte(big), []byte(big + "spare")} {
			if _, err := l.UploadPart(ctx, crashBucket, "mp", uploadID, n+1, bytes.NewReader(body), PutOptions{Size: int64(len(body))}); err != nil {
				t.Fatal(err)
			}
		}
		put(t, l, crashBucket, "mp", "an older object replaced by the upload")
	}
	return []crashScenario{
		{"put replacing a blob", func(t *testing.T, l *Layer) { put(t, l, crashBucket, "k", big+"old") },
			func(l *Layer) error { return putErr(l, "k", big+"new") }},
		{"versioned put and delete", versioned, func(l *Layer) error {
			if err := putErr(l, "k", big); err != nil {
				return err
			}
			v, err := l.HeadObject(ctx, crashBucket, "k", "")
			if err != nil {
				return err
			}
			if _, err := l.DeleteObject(ctx, crashBucket, "k", ""); err != nil {
				return err
			}
			_, err = l.DeleteObject(ctx, crashBucket, "k", v.VersionID)
			return err
		}},
		{"unversioned delete", func(t *testing.T, l *Layer) { put(t, l, crashBucket, "k", big) },
			func(l *Layer) error { _, err := l.DeleteObject(ctx, crashBucket, "k", ""); return err }},
		{"put that fails its check", nil, func(l *Layer) error {
			_, err := l.PutObject(ctx, crashBucket, "k", strings.NewReader(big), PutOptions{Size: int64(len(big)),
				Verify: func(string, map[checksum.Algorithm]string) error { return ErrBadDigest }})
			if !errors.Is(err, ErrBadDigest) {
				return fmt.Errorf("put failing its check: %v, want ErrBadDigest", err)
			}
			return nil
		}},
		{"upload part replacing a part", parts, func(l *Layer) error {
			_, err := l.UploadPart(ctx, crashBucket, "mp", uploadID, 2, strings.NewReader(big+"again"), PutOptions{Size: int64(len(big) + 5)})
			return err
		}},
		{"multipart complete", parts, func(l *Layer) error {
			list, err := partList(l, uploadID, 1, 2)
			if err != nil {
				return err
			}
			_, err = l.CompleteMultipartUpload(ctx, crashBucket, "mp", uploadID, list, PutOptions{})
			return err
		}},
		{"multipart abort", parts, func(l *Layer) error {
			return l.AbortMultipartUpload(ctx, crashBucket, "mp", uploadID)
		}},
		{"replication receive", versioned, func(l *Layer) error {
			in := replicaOf(big, bigPart)
			body := io.MultiReader(bytes.NewReader(bigPart), strings.NewReader(big))
			if _, err := l.ApplyReplica(ctx, crashBucket, "r", in, body); err != nil {
				return err
			}
			// A newer copy of the same version replaces the data.
			in.MetaTime = in.ModTime + 1
			in.ETag = "other"
			body = io.MultiReader(bytes.NewReader(bigPart), strings.NewReader(big))
			_, err := l.ApplyReplica(ctx, crashBucket, "r", in, body)
			if errors.Is(err, ErrBadDigest) {
				return nil
			}
			return err
		}},
		{"batched replication receive", func(t *testing.T, l *Layer) {
			versioned(t, l)
			if _, err := l.ApplyReplica(ctx, crashBucket, "r", replicaOf(big, bigPart), io.MultiReader(bytes.NewReader(bigPart), strings.NewReader(big))); err != nil {
				t.Fatal(err)
			}
		}, func(l *Layer) error {
			meta := replicaOf(big, bigPart)
			meta.MetaTime, meta.Tags = meta.ModTime+1, map[string]string{"k": "v"}
			replaced := replicaOf(big, bigPart)
			replaced.VersionID, replaced.ModTime = "1b9d6c1e-7f3a-4c2e-9a1b-2c3d4e5f6a7b", 2000
			_, errs, _ := l.ApplyReplicas(ctx, []ReplicaItem{
				{Bucket: crashBucket, Key: "a", Version: replaced, Data: append(append([]byte(nil), bigPart...), big...)},
				{Bucket: crashBucket, Key: "b", Version: replicaSmall("tiny"), Data: []byte("tiny")},
				{Bucket: crashBucket, Key: "r", Version: meta},
			})
			return errors.Join(errs...)
		}},
		{"failed replication receive", versioned, func(l *Layer) error {
			in := replicaOf(big, bigPart)
			body := io.MultiReader(bytes.NewReader(bigPart), strings.NewReader(strings.Repeat("y", len(big))))
			_, err := l.ApplyReplica(ctx, crashBucket, "r", in, body)
			if !errors.Is(err, ErrBadDigest) {
				return fmt.Errorf("receive of corrupt data: %v, want ErrBadDigest", err)
			}
			return nil
		}},
		{"lifecycle run", func(t *testing.T, l *Layer) {
			versioned(t, l)
			c, err := lifecycle.Parse([]byte(`<LifecycleConfiguration><Rule><ID>r</ID><Status>Enabled</Status>
<Expiration><Days>1</Days></Expiration><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration>
<AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule></LifecycleConfiguration>`))
			if err != nil {
				t.Fatal(err)
			}
			if err := l.SetBucketLifecycle(ctx, crashBucket, c.Marshal()); err != nil {
				t.Fatal(err)
			}
			put(t, l, crashBucket, "a", big+"1")
			put(t, l, crashBucket, "a", big+"2")
			put(t, l, crashBucket, "b", big)
			if _, err := l.CreateMultipartUpload(ctx, crashBucket, "up", PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}, func(l *Layer) error {
			st, err := l.RunLifecycle(ctx, time.Now().UnixNano()+5*int64(24*time.Hour), 0)
			if err == nil && (st.Expired != 2 || st.Purged != 3 || st.Markers != 2 || st.Aborted != 1) { // all gone: expired, then noncurrent, then the markers left alone
				return fmt.Errorf("lifecycle run did %+v", st)
			}
			return err
		}},
	}
}

func putErr(l *Layer, key, body string) error {
	_, err := l.PutObject(context.Background(), crashBucket, key, strings.NewReader(body), PutOptions{Size: int64(len(body))})
	return err
}

func partList(l *Layer, uploadID string, numbers ...int) ([]CompletePart, error) {
	parts, _, err := l.ListParts(context.Background(), crashBucket, "mp", uploadID, 0, 100)
	if err != nil {
		return nil, err
	}
	var list []CompletePart
	for _, p := range parts {
		if slices.Contains(numbers, p.Number) {
			list = append(list, CompletePart{Number: p.Number, ETag: p.Segment.ETag})
		}
	}
	return list, nil
}

// replicaOf is a two-part version from a peer whose data is first, second.
func replicaOf(second string, first []byte) *Version {
	md5 := func(b []byte) string { s := md5.Sum(b); return hex.EncodeToString(s[:]) }
	return &Version{VersionID: "0b9d6c1e-7f3a-4c2e-9a1b-2c3d4e5f6a7b", ModTime: 1000, Origin: "site-b",
		Multipart: true, Size: int64(len(first) + len(second)), ETag: "mp-etag",
		Segments: []Segment{
			{Number: 1, Size: int64(len(first)), ETag: md5(first)},
			{Number: 2, Size: int64(len(second)), ETag: md5([]byte(second))},
		}}
}

// replicaSmall is a one-part version from a peer whose data is body.
func replicaSmall(body string) *Version {
	sum := md5.Sum([]byte(body))
	return &Version{VersionID: "2b9d6c1e-7f3a-4c2e-9a1b-2c3d4e5f6a7b", ModTime: 3000, Origin: "site-b",
		Size: int64(len(body)), ETag: hex.EncodeToString(sum[:]),
		Segments: []Segment{{Number: 1, Size: int64(len(body))}}}
}

// crashSite is a layer's stores, reopened after each simulated crash.
type crashSite struct {
	m     meta.Store
	blobs *blob.Store
}

func newCrashSite(t *testing.T) crashSite {
	b, err := blob.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return crashSite{m: meta.NewMem(), blobs: b}
}

func (s crashSite) open(t *testing.T) *Layer {
	t.Helper()
	l, err := New(s.m, s.blobs, Config{SiteID: "site-a", InlineLimit: 8})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	return l
}

// run runs the scenario on a fresh site, crashing at the crashAt-th point
// (0: never), and returns the points passed.
func (sc crashScenario) run(t *testing.T, s crashSite, crashAt int) (points []string) {
	t.Helper()
	l := s.open(t)
	if err := l.CreateBucket(context.Background(), crashBucket); err != nil {
		t.Fatal(err)
	}
	if sc.setup != nil {
		sc.setup(t, l)
	}
	l.lcWorkers = 1 // crash points stop the caller's goroutine
	l.hook = func(p string) {
		points = append(points, p)
		if len(points) == crashAt {
			panic(crashed{p})
		}
	}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crashed); !ok {
				panic(r)
			}
		}
	}()
	if err := sc.act(l); err != nil {
		t.Fatalf("%s: %v", sc.name, err)
	}
	return points
}

// TestCrashLeavesExactState stops each scenario at every crash point in
// turn (after each commit, blob fsync and blob removal), reopens the layer
// and checks that the blob tree holds exactly the referenced blobs, that no
// intent is left, and that the stored digests and counters equal a
// recomputation from scratch.
func TestCrashLeavesExactState(t *testing.T) {
	for _, sc := range crashScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			all := sc.run(t, newCrashSite(t), 0)
			if len(all) == 0 {
				t.Fatal("no crash point reached")
			}
			for i := 1; i <= len(all); i++ {
				s := newCrashSite(t)
				sc.run(t, s, i)
				l := s.open(t)
				checkExact(t, fmt.Sprintf("crash at %d (%s)", i, all[i-1]), l)
			}
		})
	}
}

// checkExact compares the stored state with one recomputed from scratch.
func checkExact(t *testing.T, when string, l *Layer) {
	t.Helper()
	want, used, err := recount(l.meta)
	if err != nil {
		t.Fatal(err)
	}
	for k, c := range want {
		if c == (cell{}) {
			delete(want, k)
		}
	}
	got := map[string]cell{}
	err = meta.Scan(l.meta, []byte(pfxCell), meta.PrefixEnd([]byte(pfxCell)), func(k, v []byte) (bool, error) {
		c, err := decodeCell(v)
		got[string(k)] = c
		return true, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, want) {
		t.Errorf("%s: stored stats cells %v, recomputed %v", when, got, want)
	}
	var files []string
	if err := l.blobs.Walk(func(id string) bool { files = append(files, id); return true }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	if refs := slices.Sorted(maps.Keys(used)); !slices.Equal(files, refs) {
		t.Errorf("%s: blob files %v, referenced %v", when, files, refs)
	}
	if empty, err := l.rangeEmpty([]byte(pfxIntent)); err != nil || !empty {
		t.Errorf("%s: intents left after open (err %v)", when, err)
	}
}

// TestUpgradeFromFormat1 writes a store the way format 1 left it (the same
// records, no stats cells, intents or format key, and an orphan blob file
// its open would have swept), opens it, and checks the computed state; a
// second open reads no per-object record.
func TestUpgradeFromFormat1(t *testing.T) {
	ctx := context.Background()
	s := newCrashSite(t)
	l := s.open(t)
	l.CreateBucket(ctx, "plain")
	l.CreateBucket(ctx, "ver")
	l.SetVersioning(ctx, "ver", VersioningEnabled)
	for i := 0; i < 50; i++ {
		put(t, l, "plain", fmt.Sprintf("k%d", i), strings.Repeat("d", i))
		put(t, l, "ver", fmt.Sprintf("k%d", i%7), strings.Repeat("v", i))
	}
	l.DeleteObject(ctx, "ver", "k3", "")
	u, _ := l.CreateMultipartUpload(ctx, "ver", "mp", PutOptions{})
	l.UploadPart(ctx, "ver", "mp", u.UploadID, 1, strings.NewReader("a pending part"), PutOptions{Size: 14})
	wantUsage := l.Usage()
	wantDigest, err := l.BucketDigest(ctx, "ver")
	if err != nil {
		t.Fatal(err)
	}
	// Back to format 1.
	batch := s.m.NewBatch()
	batch.DeleteRange([]byte("o/"), []byte("o0"))
	batch.Commit(true)
	w, _ := s.blobs.Create()
	w.Write([]byte("orphan of a format-1 crash"))
	orphan, _ := w.Commit()

	l = s.open(t)
	checkExact(t, "after upgrade", l)
	if got := l.Usage(); got != wantUsage || got.Objects != 50+6 {
		t.Errorf("usage after upgrade %+v, before %+v", got, wantUsage)
	}
	if got, _ := l.BucketDigest(ctx, "ver"); got != wantDigest {
		t.Error("digest after upgrade differs")
	}
	if f, err := s.blobs.Open(orphan); err == nil {
		f.Close()
		t.Error("format-1 orphan blob not removed by the upgrade")
	}
	if raw, err := s.m.Get([]byte(keyFormat)); err != nil || raw[0] != formatVersion {
		t.Errorf("format key %x, %v", raw, err)
	}
	cs := &countingStore{Store: s.m}
	if _, err := New(cs, s.blobs, Config{SiteID: "site-a"}); err != nil {
		t.Fatal(err)
	}
	if n := cs.reads.Load(); n > 3 {
		t.Errorf("the open after the upgrade read %d records", n)
	}
}
