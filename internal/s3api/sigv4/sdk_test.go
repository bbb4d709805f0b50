package sigv4

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// seen is what the test server recorded about one request.
type seen struct {
	method, path string
	res          *Result
	body         []byte
	trailers     http.Header
	err          error
}

// s3Recorder is an HTTP handler that authenticates every request with a
// Verifier, reads its payload through Result.Body and records the outcome.
type s3Recorder struct {
	v    *Verifier
	mu   sync.Mutex
	seen []seen
}

func (s *s3Recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := seen{method: r.Method, path: r.URL.Path}
	rec.res, rec.err = s.v.Verify(r, "s3")
	if rec.err == nil {
		rec.body, rec.err = io.ReadAll(rec.res.Body(r))
		rec.trailers = rec.res.Trailers()
	}
	s.mu.Lock()
	s.seen = append(s.seen, rec)
	s.mu.Unlock()
	if rec.err != nil {
		w.WriteHeader(http.StatusForbidden)
		return
	}
	if r.Method == http.MethodGet && r.URL.Query().Has("list-type") {
		fmt.Fprint(w, `<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>bucket</Name></ListBucketResult>`)
		return
	}
	w.Header().Set("ETag", `"etag"`)
	w.Write([]byte("object body"))
}

func (s *s3Recorder) last(t *testing.T) seen {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.seen) == 0 {
		t.Fatal("no request reached the server")
	}
	return s.seen[len(s.seen)-1]
}

// TestAWSSDKClient drives the real S3 client: its header signing, the
// aws-chunked trailing checksum it uses for uploads over TLS, and its
// presigned URLs, with keys that need escaping.
func TestAWSSDKClient(t *testing.T) {
	rec := &s3Recorder{v: &Verifier{Creds: staticCreds{exampleAccessKey: exampleSecret}}}
	srv := httptest.NewTLSServer(rec)
	defer srv.Close()
	client := s3.New(s3.Options{
		Region:           "eu-west-3",
		BaseEndpoint:     aws.String(srv.URL),
		UsePathStyle:     true,
		Credentials:      credentials.NewStaticCredentialsProvider(exampleAccessKey, exampleSecret, ""),
		HTTPClient:       srv.Client(),
		RetryMaxAttempts: 1,
		// The default of config.LoadDefaultConfig, spelled out since s3.New
		// does not load it.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenSupported,
	})
	ctx := context.Background()
	const key = "dir/a b+c=d&e?f#g%h~i!j'k(l)m*n,o;p:q@r$s[t]u{v}|^`\"é/日本"
	data := bytes.Repeat([]byte("twinlake "), 100_000) // spans several aws-chunked chunks

	t.Run("put object with trailing checksum", func(t *testing.T) {
		_, err := client.PutObject(ctx, &s3.PutObjectInput{
			Bucket: aws.String("bucket"), Key: aws.String(key), Body: bytes.NewReader(data),
			Metadata: map[string]string{"color": "blue"},
		})
		got := rec.last(t)
		if err != nil || got.err != nil {
			t.Fatalf("client: %v, server: %v", err, got.err)
		}
		if got.path != "/bucket/"+key || !bytes.Equal(got.body, data) {
			t.Fatalf("path %q, %d bytes", got.path, len(got.body))
		}
		var sum [4]byte
		binary.BigEndian.PutUint32(sum[:], crc32.ChecksumIEEE(data))
		if got.res.Payload != PayloadStreamingUnsignedTrailer ||
			got.trailers.Get("x-amz-checksum-crc32") != base64.StdEncoding.EncodeToString(sum[:]) {
			t.Fatalf("payload %v, trailers %v", got.res.Payload, got.trailers)
		}
	})
	t.Run("get object", func(t *testing.T) {
		out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bucket"), Key: aws.String(key), Range: aws.String("bytes=0-3")})
		if err != nil {
			t.Fatalf("client: %v, server: %v", err, rec.last(t).err)
		}
		out.Body.Close()
	})
	t.Run("list with awkward prefix", func(t *testing.T) {
		_, err := client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("bucket"), Prefix: aws.String("a b+c/é*~"), Delimiter: aws.String("/")})
		if err != nil {
			t.Fatalf("client: %v, server: %v", err, rec.last(t).err)
		}
	})
	t.Run("presigned get and put", func(t *testing.T) {
		presign := s3.NewPresignClient(client, s3.WithPresignExpires(10*time.Minute))
		get, err := presign.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bucket"), Key: aws.String(key)})
		wantErr(t, err, nil)
		put, err := presign.PresignPutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bucket"), Key: aws.String(key)})
		wantErr(t, err, nil)
		for _, p := range []struct {
			method, url string
			header      http.Header
			body        []byte
		}{{get.Method, get.URL, get.SignedHeader, nil}, {put.Method, put.URL, put.SignedHeader, []byte("presigned upload")}} {
			req, err := http.NewRequest(p.method, p.url, bytes.NewReader(p.body))
			wantErr(t, err, nil)
			for k, v := range p.header {
				if k != "Host" {
					req.Header[k] = v
				}
			}
			resp, err := srv.Client().Do(req)
			wantErr(t, err, nil)
			resp.Body.Close()
			got := rec.last(t)
			if got.err != nil || !got.res.Presigned || got.res.Payload != PayloadUnsigned || !bytes.Equal(got.body, p.body) {
				t.Fatalf("%s: %+v", p.method, got)
			}
		}
	})
}
