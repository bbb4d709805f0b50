package s3api_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/sse"
	"github.com/minio/minio-go/v7/pkg/tags"

	"github.com/twinlake/twinlake/internal/testsite"
)

// payloadRecorder remembers the x-amz-content-sha256 modes a client sent,
// to prove which signing path a test exercised.
type payloadRecorder struct {
	mu    sync.Mutex
	modes map[string]bool
	next  http.RoundTripper
}

func (p *payloadRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	if v := r.Header.Get("X-Amz-Content-Sha256"); strings.HasPrefix(v, "STREAMING-") || v == "UNSIGNED-PAYLOAD" {
		if r.URL.Query().Has("partNumber") {
			v = "part " + v
		}
		p.mu.Lock()
		p.modes[v] = true
		p.mu.Unlock()
	}
	return p.next.RoundTrip(r)
}

func (p *payloadRecorder) seen(mode string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.modes[mode]
}

func minioClient(t *testing.T, site *testsite.Site) (*minio.Client, *payloadRecorder) {
	t.Helper()
	return minioClientWith(t, site, false)
}

// minioClientWith builds a client; trailers lets it send checksums as
// signed aws-chunked trailers (STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER).
func minioClientWith(t *testing.T, site *testsite.Site, trailers bool) (*minio.Client, *payloadRecorder) {
	t.Helper()
	u, err := url.Parse(site.URL)
	if err != nil {
		t.Fatal(err)
	}
	next := site.HTTPClient.Transport // trusts the site's certificate under WithTLS
	if next == nil {
		next = http.DefaultTransport
	}
	rec := &payloadRecorder{modes: map[string]bool{}, next: next}
	c, err := minio.New(u.Host, &minio.Options{
		Creds:           credentials.NewStaticV4(site.AccessKey, site.SecretKey, ""),
		Secure:          u.Scheme == "https",
		BucketLookup:    minio.BucketLookupPath,
		Transport:       rec,
		TrailingHeaders: trailers,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}

func minioRead(t *testing.T, c *minio.Client, bucket, key string, opts minio.GetObjectOptions) []byte {
	t.Helper()
	obj, err := c.GetObject(context.Background(), bucket, key, opts)
	if err != nil {
		t.Fatalf("GetObject %s/%s: %v", bucket, key, err)
	}
	defer obj.Close()
	data, err := io.ReadAll(obj)
	if err != nil {
		t.Fatalf("read %s/%s: %v", bucket, key, err)
	}
	return data
}

func minioCode(err error) string { return minio.ToErrorResponse(err).Code }

func listKeys(t *testing.T, c *minio.Client, bucket string, opts minio.ListObjectsOptions) []string {
	t.Helper()
	var keys []string
	for o := range c.ListObjects(context.Background(), bucket, opts) {
		if o.Err != nil {
			t.Fatalf("ListObjects %s %+v: %v", bucket, opts, o.Err)
		}
		k := o.Key
		if opts.WithVersions {
			k += "@" + o.VersionID
			if o.IsDeleteMarker {
				k += "(marker)"
			}
		}
		keys = append(keys, k)
	}
	return keys
}

func TestMinioObjects(t *testing.T) {
	site := testsite.Start(t)
	c, rec := minioClient(t, site)
	ctx := context.Background()
	const bucket = "minio-objects"
	if err := c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("MakeBucket: %v", err)
	}
	if err := c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); minioCode(err) != "BucketAlreadyOwnedByYou" {
		t.Fatalf("MakeBucket twice: %v", err)
	}
	if ok, err := c.BucketExists(ctx, bucket); !ok || err != nil {
		t.Fatalf("BucketExists: %v %v", ok, err)
	}

	big := make([]byte, 16<<20+123)
	for i := range big {
		big[i] = byte(i*7 + i>>13)
	}
	objects := []struct {
		name string
		key  string
		data []byte
		opts minio.PutObjectOptions
	}{
		{"small", "docs/readme.txt", []byte("hello from minio-go"), minio.PutObjectOptions{ContentType: "text/plain", UserMetadata: map[string]string{"Color": "blue", "x-amz-meta-shape": "round"}}},
		{"empty", "docs/empty", nil, minio.PutObjectOptions{}},
		{"nested", "docs/sub/deep.bin", bytes.Repeat([]byte{1, 2, 3}, 1000), minio.PutObjectOptions{}},
		{"multipart", "big/object.bin", big, minio.PutObjectOptions{PartSize: 5 << 20, ContentType: "application/x-big"}},
		{"unknown size", "stream/piped.bin", big[:7<<20], minio.PutObjectOptions{PartSize: 5 << 20}},
	}
	for _, o := range objects {
		t.Run("put "+o.name, func(t *testing.T) {
			size := int64(len(o.data))
			var body io.Reader = bytes.NewReader(o.data)
			if o.name == "unknown size" {
				size, body = -1, io.MultiReader(body) // as from a pipe: no length, no seeking
			}
			info, err := c.PutObject(ctx, bucket, o.key, body, size, o.opts)
			if err != nil {
				t.Fatalf("PutObject: %v", err)
			}
			if info.Size != int64(len(o.data)) {
				t.Fatalf("uploaded %d bytes, want %d", info.Size, len(o.data))
			}
			if got := minioRead(t, c, bucket, o.key, minio.GetObjectOptions{}); !bytes.Equal(got, o.data) {
				t.Fatalf("read back %d bytes that differ from the %d written", len(got), len(o.data))
			}
		})
	}
	if !rec.seen("part STREAMING-AWS4-HMAC-SHA256-PAYLOAD") && !rec.seen("part STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER") {
		t.Fatalf("minio-go did not upload parts as signed aws-chunked bodies (saw %v)", rec.modes)
	}

	st, err := c.StatObject(ctx, bucket, "big/object.bin", minio.StatObjectOptions{})
	if err != nil || st.Size != int64(len(big)) || st.ContentType != "application/x-big" || !strings.HasSuffix(st.ETag, "-4") {
		t.Fatalf("StatObject multipart: size %d type %q etag %q err %v", st.Size, st.ContentType, st.ETag, err)
	}
	st, err = c.StatObject(ctx, bucket, "docs/readme.txt", minio.StatObjectOptions{})
	if err != nil || st.UserMetadata["Color"] != "blue" || st.UserMetadata["Shape"] != "round" || st.ContentType != "text/plain" {
		t.Fatalf("StatObject metadata: %v type %q err %v", st.UserMetadata, st.ContentType, err)
	}
	if _, err := c.StatObject(ctx, bucket, "docs/missing", minio.StatObjectOptions{}); minioCode(err) != "NoSuchKey" {
		t.Fatalf("StatObject of a missing key: %v", err)
	}

	ranges := []struct {
		name       string
		start, end int64
		want       []byte
	}{
		{"first bytes", 0, 9, big[:10]},
		{"across parts", 5<<20 - 3, 5<<20 + 3, big[5<<20-3 : 5<<20+4]},
		{"open end", int64(len(big)) - 50, 0, big[len(big)-50:]},
		{"suffix", 0, -7, big[len(big)-7:]},
	}
	for _, r := range ranges {
		t.Run("range "+r.name, func(t *testing.T) {
			var opts minio.GetObjectOptions
			if err := opts.SetRange(r.start, r.end); err != nil {
				t.Fatal(err)
			}
			if got := minioRead(t, c, bucket, "big/object.bin", opts); !bytes.Equal(got, r.want) {
				t.Fatalf("range %d-%d: got %d bytes, want %d", r.start, r.end, len(got), len(r.want))
			}
		})
	}

	listings := []struct {
		name string
		opts minio.ListObjectsOptions
		want []string
	}{
		{"recursive", minio.ListObjectsOptions{Recursive: true}, []string{"big/object.bin", "docs/empty", "docs/readme.txt", "docs/sub/deep.bin", "stream/piped.bin"}},
		{"top level", minio.ListObjectsOptions{}, []string{"big/", "docs/", "stream/"}},
		{"prefix", minio.ListObjectsOptions{Prefix: "docs/"}, []string{"docs/empty", "docs/readme.txt", "docs/sub/"}},
		{"prefix recursive", minio.ListObjectsOptions{Prefix: "docs/", Recursive: true}, []string{"docs/empty", "docs/readme.txt", "docs/sub/deep.bin"}},
		{"v1 paged", minio.ListObjectsOptions{Recursive: true, UseV1: true, MaxKeys: 1}, []string{"big/object.bin", "docs/empty", "docs/readme.txt", "docs/sub/deep.bin", "stream/piped.bin"}},
		{"v2 paged", minio.ListObjectsOptions{Recursive: true, MaxKeys: 3}, []string{"big/object.bin", "docs/empty", "docs/readme.txt", "docs/sub/deep.bin", "stream/piped.bin"}},
	}
	for _, l := range listings {
		t.Run("list "+l.name, func(t *testing.T) {
			if got := listKeys(t, c, bucket, l.opts); !slices.Equal(got, l.want) {
				t.Fatalf("got %v, want %v", got, l.want)
			}
		})
	}

	// Server-side copy, keeping and replacing metadata.
	if _, err := c.CopyObject(ctx, minio.CopyDestOptions{Bucket: bucket, Object: "copies/kept"}, minio.CopySrcOptions{Bucket: bucket, Object: "docs/readme.txt"}); err != nil {
		t.Fatalf("CopyObject: %v", err)
	}
	st, err = c.StatObject(ctx, bucket, "copies/kept", minio.StatObjectOptions{})
	if err != nil || st.UserMetadata["Color"] != "blue" {
		t.Fatalf("copy kept metadata: %v %v", st.UserMetadata, err)
	}
	if _, err := c.CopyObject(ctx, minio.CopyDestOptions{Bucket: bucket, Object: "copies/replaced", ReplaceMetadata: true, UserMetadata: map[string]string{"Mood": "calm"}},
		minio.CopySrcOptions{Bucket: bucket, Object: "big/object.bin"}); err != nil {
		t.Fatalf("CopyObject replace: %v", err)
	}
	st, err = c.StatObject(ctx, bucket, "copies/replaced", minio.StatObjectOptions{})
	if err != nil || st.UserMetadata["Mood"] != "calm" || st.Size != int64(len(big)) {
		t.Fatalf("copy replaced metadata: %v size %d %v", st.UserMetadata, st.Size, err)
	}
	if got := minioRead(t, c, bucket, "copies/replaced", minio.GetObjectOptions{}); !bytes.Equal(got, big) {
		t.Fatal("copied multipart object differs from its source")
	}

	// Object tagging.
	ot, _ := tags.NewTags(map[string]string{"project": "twinlake", "tier": "gold"}, true)
	if err := c.PutObjectTagging(ctx, bucket, "docs/readme.txt", ot, minio.PutObjectTaggingOptions{}); err != nil {
		t.Fatalf("PutObjectTagging: %v", err)
	}
	got, err := c.GetObjectTagging(ctx, bucket, "docs/readme.txt", minio.GetObjectTaggingOptions{})
	if err != nil || got.ToMap()["project"] != "twinlake" || got.ToMap()["tier"] != "gold" || len(got.ToMap()) != 2 {
		t.Fatalf("GetObjectTagging: %v %v", got, err)
	}
	if err := c.RemoveObjectTagging(ctx, bucket, "docs/readme.txt", minio.RemoveObjectTaggingOptions{}); err != nil {
		t.Fatalf("RemoveObjectTagging: %v", err)
	}
	if got, err := c.GetObjectTagging(ctx, bucket, "docs/readme.txt", minio.GetObjectTaggingOptions{}); err != nil || len(got.ToMap()) != 0 {
		t.Fatalf("tags after removal: %v %v", got, err)
	}

	// Removal: one object, then the rest in bulk.
	if err := c.RemoveObject(ctx, bucket, "copies/kept", minio.RemoveObjectOptions{}); err != nil {
		t.Fatalf("RemoveObject: %v", err)
	}
	if _, err := c.StatObject(ctx, bucket, "copies/kept", minio.StatObjectOptions{}); minioCode(err) != "NoSuchKey" {
		t.Fatalf("StatObject after RemoveObject: %v", err)
	}
	for e := range c.RemoveObjects(ctx, bucket, c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true}), minio.RemoveObjectsOptions{}) {
		t.Errorf("RemoveObjects %s: %v", e.ObjectName, e.Err)
	}
	if keys := listKeys(t, c, bucket, minio.ListObjectsOptions{Recursive: true}); len(keys) != 0 {
		t.Fatalf("objects left after RemoveObjects: %v", keys)
	}
	if err := c.RemoveBucket(ctx, bucket); err != nil {
		t.Fatalf("RemoveBucket: %v", err)
	}
	// S3's message, word for word: clients compare it.
	if err := c.RemoveBucket(ctx, bucket); err == nil || err.Error() != "The specified bucket does not exist" {
		t.Fatalf("RemoveBucket of a removed bucket: %v", err)
	}
}

func TestMinioVersioning(t *testing.T) {
	site := testsite.Start(t)
	c, _ := minioClient(t, site)
	ctx := context.Background()
	const bucket = "minio-versions"
	if err := c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if cfg, err := c.GetBucketVersioning(ctx, bucket); err != nil || cfg.Status != "" {
		t.Fatalf("versioning of a new bucket: %+v %v", cfg, err)
	}
	if err := c.EnableVersioning(ctx, bucket); err != nil {
		t.Fatalf("EnableVersioning: %v", err)
	}
	if cfg, err := c.GetBucketVersioning(ctx, bucket); err != nil || !cfg.Enabled() {
		t.Fatalf("after enable: %+v %v", cfg, err)
	}
	put := func(key, body string) string {
		t.Helper()
		info, err := c.PutObject(ctx, bucket, key, strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{})
		if err != nil {
			t.Fatalf("PutObject %s: %v", key, err)
		}
		return info.VersionID
	}
	v1, v2 := put("doc", "first"), put("doc", "second")
	if v1 == "" || v2 == "" || v1 == v2 {
		t.Fatalf("version IDs %q %q", v1, v2)
	}
	if got := minioRead(t, c, bucket, "doc", minio.GetObjectOptions{VersionID: v1}); string(got) != "first" {
		t.Fatalf("version 1 reads %q", got)
	}
	if err := c.RemoveObject(ctx, bucket, "doc", minio.RemoveObjectOptions{}); err != nil {
		t.Fatalf("RemoveObject on a versioned bucket: %v", err)
	}
	if _, err := c.StatObject(ctx, bucket, "doc", minio.StatObjectOptions{}); minioCode(err) != "NoSuchKey" {
		t.Fatalf("StatObject behind a delete marker: %v", err)
	}
	var markers, versions int
	for o := range c.ListObjects(ctx, bucket, minio.ListObjectsOptions{WithVersions: true, Recursive: true}) {
		switch {
		case o.Err != nil:
			t.Fatalf("ListObjects WithVersions: %v", o.Err)
		case o.IsDeleteMarker:
			markers++
			if !o.IsLatest {
				t.Error("the delete marker is not the latest version")
			}
		default:
			versions++
		}
	}
	if markers != 1 || versions != 2 {
		t.Fatalf("versions listing: %d versions, %d markers", versions, markers)
	}
	if keys := listKeys(t, c, bucket, minio.ListObjectsOptions{Recursive: true}); len(keys) != 0 {
		t.Fatalf("plain listing shows deleted keys: %v", keys)
	}
	// Removing a specific version is permanent.
	if err := c.RemoveObject(ctx, bucket, "doc", minio.RemoveObjectOptions{VersionID: v1}); err != nil {
		t.Fatalf("RemoveObject version: %v", err)
	}
	// HEAD carries no error body, so ask with GET for the precise code.
	obj, err := c.GetObject(ctx, bucket, "doc", minio.GetObjectOptions{VersionID: v1})
	if err == nil {
		_, err = io.ReadAll(obj)
		obj.Close()
	}
	if minioCode(err) != "NoSuchVersion" {
		t.Fatalf("GetObject of a removed version: %v", err)
	}

	if err := c.SuspendVersioning(ctx, bucket); err != nil {
		t.Fatalf("SuspendVersioning: %v", err)
	}
	if cfg, err := c.GetBucketVersioning(ctx, bucket); err != nil || !cfg.Suspended() {
		t.Fatalf("after suspend: %+v %v", cfg, err)
	}
	if id := put("doc", "suspended"); id != "null" && id != "" {
		t.Fatalf("suspended PUT got version %q", id)
	}
	if got := minioRead(t, c, bucket, "doc", minio.GetObjectOptions{}); string(got) != "suspended" {
		t.Fatalf("latest after suspended PUT: %q", got)
	}
	if got := minioRead(t, c, bucket, "doc", minio.GetObjectOptions{VersionID: v2}); string(got) != "second" {
		t.Fatalf("version 2 after suspend: %q", got)
	}
	// What "rb --force" does: remove every version and marker in bulk, then
	// the bucket.
	put("other", "x")
	all := c.ListObjects(ctx, bucket, minio.ListObjectsOptions{WithVersions: true, Recursive: true})
	for e := range c.RemoveObjects(ctx, bucket, all, minio.RemoveObjectsOptions{}) {
		t.Errorf("RemoveObjects %s@%s: %v", e.ObjectName, e.VersionID, e.Err)
	}
	if left := listKeys(t, c, bucket, minio.ListObjectsOptions{WithVersions: true, Recursive: true}); len(left) != 0 {
		t.Fatalf("versions left after bulk removal: %v", left)
	}
	if err := c.RemoveBucket(ctx, bucket); err != nil {
		t.Fatalf("RemoveBucket after removing every version: %v", err)
	}
}

// TestMinioTrailingChecksums uploads with checksums sent as aws-chunked
// trailers in minio-go's own framing, single and multipart: signed trailers
// over HTTP, unsigned ones over HTTPS (what mc does with --checksum).
func TestMinioTrailingChecksums(t *testing.T) {
	transports := []struct {
		name string
		opts []testsite.Option
		mode string
	}{
		{"http", nil, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"},
		{"https", []testsite.Option{testsite.WithTLS()}, "STREAMING-UNSIGNED-PAYLOAD-TRAILER"},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			site := testsite.Start(t, tr.opts...)
			c, rec := minioClientWith(t, site, true)
			putWithTrailers(t, c)
			if !rec.seen(tr.mode) {
				t.Fatalf("minio-go did not send %s (saw %v)", tr.mode, rec.modes)
			}
		})
	}
}

func putWithTrailers(t *testing.T, c *minio.Client) {
	ctx := context.Background()
	const bucket = "minio-trailers"
	if err := c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 11<<20+5)
	for i := range data {
		data[i] = byte(i ^ i>>9)
	}
	cases := []struct {
		name string
		size int
		opts minio.PutObjectOptions
	}{
		{"single crc32c", 300 << 10, minio.PutObjectOptions{Checksum: minio.ChecksumCRC32C}},
		{"single sha256", 1000, minio.PutObjectOptions{Checksum: minio.ChecksumSHA256}},
		{"multipart crc32", len(data), minio.PutObjectOptions{Checksum: minio.ChecksumCRC32, PartSize: 5 << 20}},
		{"multipart full-object crc32c", len(data), minio.PutObjectOptions{Checksum: minio.ChecksumFullObjectCRC32C, PartSize: 5 << 20}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := strings.ReplaceAll(tc.name, " ", "-")
			if _, err := c.PutObject(ctx, bucket, key, bytes.NewReader(data[:tc.size]), int64(tc.size), tc.opts); err != nil {
				t.Fatalf("PutObject: %v", err)
			}
			if got := minioRead(t, c, bucket, key, minio.GetObjectOptions{}); !bytes.Equal(got, data[:tc.size]) {
				t.Fatalf("read back %d bytes that differ from the %d written", len(got), tc.size)
			}
		})
	}
}

func TestMinioBucketConfig(t *testing.T) {
	site := testsite.Start(t)
	c, _ := minioClient(t, site)
	ctx := context.Background()
	const bucket = "minio-config"
	if err := c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":["*"]},"Action":["s3:GetObject"],"Resource":["arn:aws:s3:::minio-config/*"]}]}`
	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"no tags yet", func(t *testing.T) {
			if _, err := c.GetBucketTagging(ctx, bucket); minioCode(err) != "NoSuchTagSet" {
				t.Fatalf("GetBucketTagging: %v", err)
			}
		}},
		{"set and get tags", func(t *testing.T) {
			bt, _ := tags.NewTags(map[string]string{"team": "storage", "env": "test"}, false)
			if err := c.SetBucketTagging(ctx, bucket, bt); err != nil {
				t.Fatalf("SetBucketTagging: %v", err)
			}
			got, err := c.GetBucketTagging(ctx, bucket)
			if err != nil || got.ToMap()["team"] != "storage" || got.ToMap()["env"] != "test" {
				t.Fatalf("GetBucketTagging: %v %v", got, err)
			}
		}},
		{"remove tags", func(t *testing.T) {
			if err := c.RemoveBucketTagging(ctx, bucket); err != nil {
				t.Fatalf("RemoveBucketTagging: %v", err)
			}
			if _, err := c.GetBucketTagging(ctx, bucket); minioCode(err) != "NoSuchTagSet" {
				t.Fatalf("tags after removal: %v", err)
			}
		}},
		{"no policy yet", func(t *testing.T) {
			if p, err := c.GetBucketPolicy(ctx, bucket); err != nil || p != "" {
				t.Fatalf("GetBucketPolicy: %q %v", p, err)
			}
		}},
		{"set and get policy", func(t *testing.T) {
			if err := c.SetBucketPolicy(ctx, bucket, policy); err != nil {
				t.Fatalf("SetBucketPolicy: %v", err)
			}
			if p, err := c.GetBucketPolicy(ctx, bucket); err != nil || p != policy {
				t.Fatalf("GetBucketPolicy: %q %v", p, err)
			}
		}},
		{"malformed policy", func(t *testing.T) {
			if err := c.SetBucketPolicy(ctx, bucket, `{"Version":`); minioCode(err) != "MalformedPolicy" {
				t.Fatalf("SetBucketPolicy malformed: %v", err)
			}
		}},
		{"remove policy", func(t *testing.T) {
			if err := c.SetBucketPolicy(ctx, bucket, ""); err != nil {
				t.Fatalf("remove policy: %v", err)
			}
			if p, err := c.GetBucketPolicy(ctx, bucket); err != nil || p != "" {
				t.Fatalf("policy after removal: %q %v", p, err)
			}
		}},
		{"no encryption yet", func(t *testing.T) {
			if _, err := c.GetBucketEncryption(ctx, bucket); minioCode(err) != "ServerSideEncryptionConfigurationNotFoundError" {
				t.Fatalf("GetBucketEncryption: %v", err)
			}
		}},
		{"set and get encryption", func(t *testing.T) {
			if err := c.SetBucketEncryption(ctx, bucket, sse.NewConfigurationSSES3()); err != nil {
				t.Fatalf("SetBucketEncryption: %v", err)
			}
			cfg, err := c.GetBucketEncryption(ctx, bucket)
			if err != nil || len(cfg.Rules) != 1 || cfg.Rules[0].Apply.SSEAlgorithm != "AES256" {
				t.Fatalf("GetBucketEncryption: %+v %v", cfg, err)
			}
			info, err := c.PutObject(ctx, bucket, "enc", strings.NewReader("secret"), 6, minio.PutObjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := minioRead(t, c, bucket, "enc", minio.GetObjectOptions{}); string(got) != "secret" {
				t.Fatalf("encrypted object reads %q", got)
			}
			if err := c.RemoveObject(ctx, bucket, info.Key, minio.RemoveObjectOptions{}); err != nil {
				t.Fatal(err)
			}
		}},
		{"remove encryption", func(t *testing.T) {
			if err := c.RemoveBucketEncryption(ctx, bucket); err != nil {
				t.Fatalf("RemoveBucketEncryption: %v", err)
			}
			if _, err := c.GetBucketEncryption(ctx, bucket); minioCode(err) != "ServerSideEncryptionConfigurationNotFoundError" {
				t.Fatalf("encryption after removal: %v", err)
			}
		}},
	}
	for _, s := range steps {
		if !t.Run(s.name, s.run) {
			return
		}
	}
}

func TestMinioPresigned(t *testing.T) {
	site := testsite.Start(t)
	c, _ := minioClient(t, site)
	ctx := context.Background()
	const bucket = "minio-presign"
	if err := c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	body := []byte("uploaded through a presigned URL")
	putURL, err := c.PresignedPutObject(ctx, bucket, "shared/file.txt", 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPut, putURL.String(), bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sum := md5.Sum(body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") != `"`+hex.EncodeToString(sum[:])+`"` {
		t.Fatalf("presigned PUT: %d ETag %s", resp.StatusCode, resp.Header.Get("ETag"))
	}
	cases := []struct {
		name   string
		params url.Values
		status int
		header string // Content-Disposition expected, if any
	}{
		{"plain", nil, http.StatusOK, ""},
		{"response override", url.Values{"response-content-disposition": {`attachment; filename="f.txt"`}}, http.StatusOK, `attachment; filename="f.txt"`},
	}
	for _, tc := range cases {
		t.Run("GET "+tc.name, func(t *testing.T) {
			u, err := c.PresignedGetObject(ctx, bucket, "shared/file.txt", time.Minute, tc.params)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.Get(u.String())
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || !bytes.Equal(got, body) || resp.Header.Get("Content-Disposition") != tc.header {
				t.Fatalf("status %d body %q disposition %q", resp.StatusCode, got, resp.Header.Get("Content-Disposition"))
			}
		})
	}
	// A presigned URL does not authorize another key.
	u, err := c.PresignedGetObject(ctx, bucket, "shared/file.txt", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = strings.Replace(u.Path, "file.txt", "other.txt", 1)
	resp, err = http.Get(u.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("tampered presigned URL: %d", resp.StatusCode)
	}
}

// TestMinioNewChecksumAlgorithms: the algorithms S3 added after CRC64NVME
// (MD5, SHA512 and the xxhashes), which minio-go computes, are verified,
// stored and answered like the others: in a header or an aws-chunked
// trailer, whole or in parts (COMPOSITE), and a wrong value is BadDigest.
func TestMinioNewChecksumAlgorithms(t *testing.T) {
	site := testsite.Start(t)
	ctx := context.Background()
	const bucket = "new-algs"
	plain, _ := minioClient(t, site)
	trailing, _ := minioClientWith(t, site, true)
	if err := plain.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 6<<20+3)
	for i := range data {
		data[i] = byte(i * 7 >> 3)
	}
	stored := func(st minio.ObjectInfo, ct minio.ChecksumType) string {
		return map[minio.ChecksumType]string{minio.ChecksumMD5: st.ChecksumMD5, minio.ChecksumSHA512: st.ChecksumSHA512,
			minio.ChecksumXXHash64: st.ChecksumXXHash64, minio.ChecksumXXHash3: st.ChecksumXXHash3, minio.ChecksumXXHash128: st.ChecksumXXHash128}[ct]
	}
	for _, ct := range []minio.ChecksumType{minio.ChecksumMD5, minio.ChecksumSHA512, minio.ChecksumXXHash64, minio.ChecksumXXHash3, minio.ChecksumXXHash128} {
		for _, tc := range []struct {
			name   string
			c      *minio.Client
			size   int
			suffix string // a COMPOSITE's part count
		}{{"header", nil, 1000, ""}, {"trailer", trailing, 70 << 10, ""}, {"parts", trailing, len(data), "-2"}} {
			key := ct.String() + "-" + tc.name
			opts := minio.PutObjectOptions{Checksum: ct, PartSize: 5 << 20, DisableMultipart: tc.suffix == ""}
			if tc.c == nil {
				// A value the client gives goes as a header.
				tc.c = trailing
				opts = minio.PutObjectOptions{DisableMultipart: true, UserMetadata: map[string]string{ct.Key(): ct.EncodeToString(data[:tc.size])}}
			}
			if _, err := tc.c.PutObject(ctx, bucket, key, bytes.NewReader(data[:tc.size]), int64(tc.size), opts); err != nil {
				t.Fatalf("%s: PutObject: %v", key, err)
			}
			st, err := plain.StatObject(ctx, bucket, key, minio.StatObjectOptions{Checksum: true})
			if err != nil {
				t.Fatal(err)
			}
			got := stored(st, ct)
			if tc.suffix == "" && got != ct.EncodeToString(data[:tc.size]) {
				t.Errorf("%s: stored %q, want %q", key, got, ct.EncodeToString(data[:tc.size]))
			}
			if !strings.HasSuffix(got, tc.suffix) || got == "" {
				t.Errorf("%s: stored %q, want a value ending %q", key, got, tc.suffix)
			}
		}
		wrong := ct.EncodeToString([]byte("other bytes"))
		_, err := trailing.PutObject(ctx, bucket, ct.String()+"-wrong", bytes.NewReader(data[:10]), 10,
			minio.PutObjectOptions{DisableMultipart: true, UserMetadata: map[string]string{ct.Key(): wrong}})
		if minioCode(err) != "BadDigest" {
			t.Errorf("%s: a wrong value: %v, want BadDigest", ct, err)
		}
	}
}
