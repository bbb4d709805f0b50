package s3api_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/twinlake/twinlake/internal/testsite"
)

// The crash test proves the durability contract end to end: a write the
// server acknowledged survives SIGKILL, and nothing is ever half visible. It
// drives the real binary, kills it mid-load three times and checks every
// acknowledged write after each restart.

const (
	crashUser   = "crashroot"
	crashSecret = "crashroot-secret-key"
	crashPlain  = "crash"  // unversioned bucket
	crashVer    = "crashv" // versioned bucket
	crashCycles = 3
)

func TestCrashKillNineKeepsAcknowledgedWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test builds and kills the real binary")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TWINLAKE_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (set TWINLAKE_CRASH_SEED to replay the load)", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	bin := testsite.BuildBinary(t)
	dir := filepath.Join(t.TempDir(), "data")
	addr := testsite.FreeAddr(t)
	srv := testsite.StartProcess(t, bin, dir, addr, "TWINLAKE_ROOT_USER="+crashUser, "TWINLAKE_ROOT_PASSWORD="+crashSecret)
	c := crashClient("http://" + addr)
	ctx := context.Background()
	for _, b := range []string{crashPlain, crashVer} {
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatalf("CreateBucket %s: %v", b, err)
		}
	}
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(crashVer),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatalf("PutBucketVersioning: %v", err)
	}

	workers := make([]*crashWorker, 8)
	for i := range workers {
		workers[i] = newCrashWorker(i, seed)
	}
	for cycle := range crashCycles {
		threshold := int64(150 + rng.IntN(250))
		start := time.Now()
		acks := runLoadUntilKilled(t, c, srv, workers, threshold)
		t.Logf("cycle %d: killed after %d acks (threshold %d) in %v", cycle, acks, threshold, time.Since(start).Round(time.Millisecond))
		if t.Failed() {
			return
		}
		srv = testsite.StartProcess(t, bin, dir, addr, "TWINLAKE_ROOT_USER="+crashUser, "TWINLAKE_ROOT_PASSWORD="+crashSecret)
		start = time.Now()
		inFlight, landed := 0, 0
		for _, w := range workers {
			n, l := w.verify(t, c)
			inFlight, landed = inFlight+n, landed+l
		}
		verifyListings(t, c, workers)
		t.Logf("cycle %d: verified in %v; %d writes were in flight at the kill, %d of them landed",
			cycle, time.Since(start).Round(time.Millisecond), inFlight, landed)
		if t.Failed() {
			return
		}
	}
	srv.Kill(t)
}

// runLoadUntilKilled runs every worker until threshold writes have been
// acknowledged, SIGKILLs the server while they are mid-request and waits
// for them to notice.
func runLoadUntilKilled(t *testing.T, c *s3.Client, srv *testsite.Process, workers []*crashWorker, threshold int64) int64 {
	var acks atomic.Int64
	var killed atomic.Bool
	reached := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() {
			for !killed.Load() {
				if err := w.step(c); err != nil {
					if !killed.Load() {
						t.Errorf("worker %d: write failed before the kill: %v", w.id, err)
						once.Do(func() { close(reached) })
					}
					return
				}
				if acks.Add(1) >= threshold {
					once.Do(func() { close(reached) })
				}
			}
		})
	}
	select {
	case <-reached:
	case <-time.After(45 * time.Second):
		t.Errorf("only %d of %d writes acknowledged in 45s", acks.Load(), threshold)
	}
	killed.Store(true)
	srv.Kill(t)
	wg.Wait()
	return acks.Load()
}

// objState is what a key (or a key's latest version) holds: its content's
// MD5, or nothing.
type objState struct {
	present bool
	md5     string
	size    int64
}

func (s objState) String() string {
	if !s.present {
		return "absent"
	}
	return fmt.Sprintf("md5 %s (%d bytes)", s.md5, s.size)
}

// keyModel is what the test knows of one key of the unversioned bucket.
type keyModel struct {
	attempted map[string]bool // every content ever sent for the key
	acked     objState        // the state the last acknowledged write left
	pending   *objState       // an unacknowledged write in flight at the kill
}

// verKeyModel is what the test knows of one key of the versioned bucket.
type verKeyModel struct {
	attempted map[string]bool
	versions  map[string]objState // acknowledged versions: must stay readable
	latest    objState            // latest version after the last acknowledged write
	latestID  string              // its version ID ("" for a delete marker)
	pending   *objState           // unacknowledged PUT or delete marker
	doomed    string              // version whose unacknowledged permanent delete was in flight
}

// crashWorker writes to keys no other worker touches, one request at a
// time, so the order of its acknowledgements is the order of the writes.
type crashWorker struct {
	id    int
	rng   *rand.Rand
	seq   int
	plain map[string]*keyModel
	ver   map[string]*verKeyModel
}

func newCrashWorker(id int, seed uint64) *crashWorker {
	w := &crashWorker{id: id, rng: rand.New(rand.NewPCG(seed, uint64(id)+1)), plain: map[string]*keyModel{}, ver: map[string]*verKeyModel{}}
	for k := range 12 {
		w.plain[fmt.Sprintf("w%d/k%02d", id, k)] = &keyModel{attempted: map[string]bool{}}
	}
	for k := range 5 {
		w.ver[fmt.Sprintf("w%d/v%02d", id, k)] = &verKeyModel{attempted: map[string]bool{}, versions: map[string]objState{}}
	}
	return w
}

func (w *crashWorker) pickKey(keys []string) string {
	sort.Strings(keys)
	return keys[w.rng.IntN(len(keys))]
}

// content makes a fresh body: a header naming the writer and sequence,
// then pseudo-random bytes, so every write's content is distinct.
func (w *crashWorker) content(size int) ([]byte, objState) {
	w.seq++
	data := make([]byte, size)
	fill := rand.NewChaCha8([32]byte{byte(w.id), byte(w.seq), byte(w.seq >> 8), byte(w.seq >> 16)})
	fill.Read(data)
	hdr := fmt.Appendf(nil, "worker=%d seq=%d;", w.id, w.seq)
	copy(data, hdr)
	sum := md5.Sum(data)
	return data, objState{present: true, md5: hex.EncodeToString(sum[:]), size: int64(size)}
}

// size picks an object size: tiny ones stay inline in metadata, larger ones
// go to blob files.
func (w *crashWorker) size() int {
	if w.rng.IntN(2) == 0 {
		return w.rng.IntN(4 << 10)
	}
	return 200<<10 + w.rng.IntN(1848<<10)
}

// step performs one random write and records it once acknowledged.
func (w *crashWorker) step(c *s3.Client) error {
	ctx := context.Background()
	r := w.rng.IntN(100)
	switch {
	case r < 70:
		key := w.pickKey(keysOf(w.plain))
		m := w.plain[key]
		if r < 8 {
			absent := objState{}
			m.pending = &absent
			if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(crashPlain), Key: aws.String(key)}); err != nil {
				return err
			}
			m.acked, m.pending = absent, nil
			return nil
		}
		var data []byte
		var st objState
		if r < 12 {
			data, st = w.content(5<<20 + 1 + w.rng.IntN(300<<10))
		} else {
			data, st = w.content(w.size())
		}
		m.attempted[st.md5] = true
		m.pending = &st
		var err error
		if r < 12 {
			err = putMultipart(ctx, c, crashPlain, key, data)
		} else {
			_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(crashPlain), Key: aws.String(key), Body: bytes.NewReader(data)})
		}
		if err != nil {
			return err
		}
		m.acked, m.pending = st, nil
		return nil
	default:
		key := w.pickKey(keysOf(w.ver))
		m := w.ver[key]
		switch {
		case r < 78:
			marker := objState{}
			m.pending = &marker
			if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(crashVer), Key: aws.String(key)}); err != nil {
				return err
			}
			m.latest, m.latestID, m.pending = marker, "", nil
		case r < 83 && len(m.versions) > 1:
			var old []string
			for id := range m.versions {
				if id != m.latestID {
					old = append(old, id)
				}
			}
			id := w.pickKey(old)
			m.doomed = id
			if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(crashVer), Key: aws.String(key), VersionId: aws.String(id)}); err != nil {
				return err
			}
			delete(m.versions, id)
			m.doomed = ""
		default:
			data, st := w.content(w.size())
			m.attempted[st.md5] = true
			m.pending = &st
			out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(crashVer), Key: aws.String(key), Body: bytes.NewReader(data)})
			if err != nil {
				return err
			}
			id := aws.ToString(out.VersionId)
			m.versions[id] = st
			m.latest, m.latestID, m.pending = st, id, nil
		}
		return nil
	}
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func putMultipart(ctx context.Context, c *s3.Client, bucket, key string, data []byte) error {
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return err
	}
	var parts []types.CompletedPart
	for i, chunk := range [][]byte{data[:5<<20], data[5<<20:]} {
		n := aws.Int32(int32(i + 1))
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: up.UploadId,
			PartNumber: n, Body: bytes.NewReader(chunk)})
		if err != nil {
			return err
		}
		parts = append(parts, types.CompletedPart{PartNumber: n, ETag: out.ETag})
	}
	_, err = c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	return err
}

// readState GETs an object (a version when versionID is set) and hashes it.
func readState(c *s3.Client, bucket, key, versionID string) (objState, string, error) {
	in := &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
	if versionID != "" {
		in.VersionId = aws.String(versionID)
	}
	out, err := c.GetObject(context.Background(), in)
	if apiCode(err) == "NoSuchKey" {
		return objState{}, "", nil
	}
	if err != nil {
		return objState{}, "", err
	}
	defer out.Body.Close()
	h := md5.New()
	n, err := io.Copy(h, out.Body)
	if err != nil {
		return objState{}, "", fmt.Errorf("reading %s/%s: %w", bucket, key, err)
	}
	if out.ContentLength != nil && *out.ContentLength != n {
		return objState{}, "", fmt.Errorf("%s/%s: Content-Length %d, body %d bytes", bucket, key, *out.ContentLength, n)
	}
	return objState{present: true, md5: hex.EncodeToString(h.Sum(nil)), size: n}, aws.ToString(out.VersionId), nil
}

// verify checks, after a restart, that each of the worker's keys holds what
// its last acknowledged write left (or what the write in flight at the kill
// would have left), that every acknowledged version is intact, and then
// adopts what it found as the new baseline. It returns how many writes were
// in flight at the kill and how many of those took effect.
func (w *crashWorker) verify(t *testing.T, c *s3.Client) (inFlight, landed int) {
	t.Helper()
	for _, key := range sortedKeys(w.plain) {
		m := w.plain[key]
		got, _, err := readState(c, crashPlain, key, "")
		if err != nil {
			t.Errorf("%s/%s: %v", crashPlain, key, err)
			continue
		}
		if got != m.acked && (m.pending == nil || got != *m.pending) {
			t.Errorf("%s/%s: found %v, acknowledged %v (in flight: %v)", crashPlain, key, got, m.acked, m.pending)
		}
		if m.pending != nil {
			inFlight++
			if got != m.acked {
				landed++
			}
		}
		m.acked, m.pending = got, nil
	}
	for _, key := range sortedKeys(w.ver) {
		m := w.ver[key]
		if m.doomed != "" {
			// Its permanent delete was in flight: either outcome is right.
			inFlight++
			_, err := c.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(crashVer), Key: aws.String(key), VersionId: aws.String(m.doomed)})
			switch {
			case httpStatus(err) == http.StatusNotFound:
				delete(m.versions, m.doomed)
				landed++
			case err != nil:
				t.Errorf("%s/%s version %s: %v", crashVer, key, m.doomed, err)
			}
			m.doomed = ""
		}
		for id, want := range m.versions {
			got, _, err := readState(c, crashVer, key, id)
			if err != nil || got != want {
				t.Errorf("%s/%s version %s: found %v (%v), acknowledged %v", crashVer, key, id, got, err, want)
			}
		}
		got, id, err := readState(c, crashVer, key, "")
		if err != nil {
			t.Errorf("%s/%s: %v", crashVer, key, err)
			continue
		}
		if got != m.latest && (m.pending == nil || got != *m.pending) {
			t.Errorf("%s/%s latest: found %v, acknowledged %v (in flight: %v)", crashVer, key, got, m.latest, m.pending)
		}
		if m.pending != nil {
			inFlight++
			if got != m.latest || got.present && id != m.latestID {
				landed++
			}
		}
		if got.present {
			m.versions[id] = got
		}
		m.latest, m.latestID, m.pending = got, id, nil
	}
	return inFlight, landed
}

// httpStatus returns the HTTP status of an SDK error, 0 if it has none.
func httpStatus(err error) int {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// verifyListings checks that listing works after the restart, that it
// shows exactly the keys that exist, and that every entry it shows is fully
// readable with a content that was written to that key.
func verifyListings(t *testing.T, c *s3.Client, workers []*crashWorker) {
	t.Helper()
	ctx := context.Background()
	attempted := map[string]map[string]bool{}
	want := map[string]bool{}
	for _, w := range workers {
		for k, m := range w.plain {
			attempted[crashPlain+"/"+k] = m.attempted
			if m.acked.present {
				want[k] = true
			}
		}
		for k, m := range w.ver {
			attempted[crashVer+"/"+k] = m.attempted
		}
	}
	listed := map[string]bool{}
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(crashPlain), MaxKeys: aws.Int32(37)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Errorf("ListObjectsV2: %v", err)
			return
		}
		for _, o := range page.Contents {
			key := aws.ToString(o.Key)
			listed[key] = true
			checkListed(t, c, crashPlain, key, "", aws.ToInt64(o.Size), attempted)
		}
	}
	for k := range want {
		if !listed[k] {
			t.Errorf("%s/%s exists but is not listed", crashPlain, k)
		}
	}
	for k := range listed {
		if !want[k] {
			t.Errorf("%s/%s is listed but does not exist", crashPlain, k)
		}
	}
	vp := s3.NewListObjectVersionsPaginator(c, &s3.ListObjectVersionsInput{Bucket: aws.String(crashVer), MaxKeys: aws.Int32(53)})
	for vp.HasMorePages() {
		page, err := vp.NextPage(ctx)
		if err != nil {
			t.Errorf("ListObjectVersions: %v", err)
			return
		}
		for _, v := range page.Versions {
			checkListed(t, c, crashVer, aws.ToString(v.Key), aws.ToString(v.VersionId), aws.ToInt64(v.Size), attempted)
		}
	}
}

func checkListed(t *testing.T, c *s3.Client, bucket, key, versionID string, size int64, attempted map[string]map[string]bool) {
	t.Helper()
	got, _, err := readState(c, bucket, key, versionID)
	switch {
	case err != nil:
		t.Errorf("listed %s/%s (version %q) is not readable: %v", bucket, key, versionID, err)
	case !got.present:
		t.Errorf("listed %s/%s (version %q) does not exist", bucket, key, versionID)
	case got.size != size:
		t.Errorf("listed %s/%s (version %q): listing says %d bytes, GET returned %d", bucket, key, versionID, size, got.size)
	case !attempted[bucket+"/"+key][got.md5]:
		t.Errorf("listed %s/%s (version %q) holds content that was never written to it (%v)", bucket, key, versionID, got)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := keysOf(m)
	sort.Strings(keys)
	return keys
}

func crashClient(url string) *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(url),
		Region:       "us-east-1",
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(crashUser, crashSecret, ""),
		HTTPClient:   &http.Client{Timeout: 30 * time.Second},
		// A retried write could be acknowledged by the restarted server; the
		// test wants each attempt's own answer.
		Retryer:                    aws.NopRetryer{},
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}
