package checksum

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// sdkSkips are the algorithms aws-sdk-go-v2 (at the version in go.mod)
// names but does not compute: it neither sends nor validates them.
// TestMinioGoComputesTheSame checks them against minio-go instead.
var sdkSkips = map[Algorithm]bool{MD5: true, XXHASH64: true, XXHASH3: true, XXHASH128: true}

// captured is one request as the fake server saw it, body decoded.
type captured struct {
	header  http.Header
	body    []byte
	trailer http.Header
}

// newSDKClient returns an S3 client aimed at srv.
func newSDKClient(srv *httptest.Server) *s3.Client {
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.URL),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
		HTTPClient:   srv.Client(),
	})
}

// decodeAWSChunked reads an unsigned aws-chunked body (hex size lines,
// data, a zero chunk, then trailer lines) as the SDK sends it over TLS.
func decodeAWSChunked(r io.Reader) (body []byte, trailer http.Header, err error) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, nil, err
		}
		sizeField, _, _ := strings.Cut(strings.TrimSpace(line), ";")
		n, err := strconv.ParseInt(sizeField, 16, 64)
		if err != nil {
			return nil, nil, fmt.Errorf("chunk size %q: %w", line, err)
		}
		if n == 0 {
			break
		}
		chunk := make([]byte, n+2) // data and CRLF
		if _, err := io.ReadFull(br, chunk); err != nil {
			return nil, nil, err
		}
		body = append(body, chunk[:n]...)
	}
	trailer = http.Header{}
	for {
		line, err := br.ReadString('\n')
		line = strings.TrimSpace(line)
		if line == "" || err != nil {
			return body, trailer, nil
		}
		k, v, _ := strings.Cut(line, ":")
		trailer.Add(k, v)
	}
}

// captureServer answers every request 200 and records it.
func captureServer(t *testing.T, useTLS bool, got *captured) *httptest.Server {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.header = r.Header.Clone()
		var err error
		if strings.Contains(r.Header.Get("Content-Encoding"), "aws-chunked") {
			got.body, got.trailer, err = decodeAWSChunked(r.Body)
		} else {
			got.body, err = io.ReadAll(r.Body)
		}
		if err != nil {
			t.Errorf("reading request body: %v", err)
		}
		w.Header().Set("ETag", `"x"`)
	})
	srv := httptest.NewUnstartedServer(h)
	if useTLS {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

// TestSDKPutObjectChecksums sends PutObject through aws-sdk-go-v2 with each
// checksum algorithm, over HTTP (value in a header) and HTTPS (value in an
// aws-chunked trailer), and checks the server-side view: FromHeaders
// accepts the headers, and the value verifies against a Set over the body.
func TestSDKPutObjectChecksums(t *testing.T) {
	body := bytes.Repeat([]byte("twinlake "), 1000)
	sdkAlgs := map[Algorithm]types.ChecksumAlgorithm{
		CRC32: types.ChecksumAlgorithmCrc32, CRC32C: types.ChecksumAlgorithmCrc32c,
		CRC64NVME: types.ChecksumAlgorithmCrc64nvme, SHA1: types.ChecksumAlgorithmSha1,
		SHA256: types.ChecksumAlgorithmSha256,
	}
	for _, useTLS := range []bool{false, true} {
		for alg, sdkAlg := range sdkAlgs {
			t.Run(fmt.Sprintf("%s/tls=%v", alg, useTLS), func(t *testing.T) {
				var got captured
				srv := captureServer(t, useTLS, &got)
				_, err := newSDKClient(srv).PutObject(context.Background(), &s3.PutObjectInput{
					Bucket: aws.String("b"), Key: aws.String("k"),
					Body: bytes.NewReader(body), ChecksumAlgorithm: sdkAlg,
				})
				if err != nil {
					t.Fatalf("PutObject: %v", err)
				}
				checkDeclared(t, alg, useTLS, got)
			})
		}
	}
}

func checkDeclared(t *testing.T, alg Algorithm, useTLS bool, got captured) {
	t.Helper()
	d, err := FromHeaders(got.header)
	if err != nil {
		t.Fatalf("FromHeaders: %v (headers %v)", err, got.header)
	}
	if d.Algorithm != alg || d.Trailer != useTLS {
		t.Fatalf("Declared = %+v, want algorithm %s, trailer %v", d, alg, useTLS)
	}
	if d.Trailer {
		name := alg.HeaderName()
		if err := d.SetTrailerValue(name, got.trailer.Get(name)); err != nil {
			t.Fatalf("SetTrailerValue: %v (trailer %v)", err, got.trailer)
		}
	}
	s, err := NewSet(d.Algorithm)
	if err != nil {
		t.Fatal(err)
	}
	s.Write(got.body)
	md5Hex, sums := s.Sum()
	if err := d.Verify(md5Hex, sums); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

// TestSDKValidatesOurResponseChecksums serves GetObject with the value this
// package computes and lets aws-sdk-go-v2 validate it while reading; a
// corrupted value must make the SDK's read fail, proving validation ran.
func TestSDKValidatesOurResponseChecksums(t *testing.T) {
	body := []byte("served by twinlake")
	for _, alg := range Algorithms() {
		if sdkSkips[alg] {
			continue
		}
		for _, corrupt := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/corrupt=%v", alg, corrupt), func(t *testing.T) {
				value := alg.Sum(body)
				if corrupt {
					value = alg.Sum(append(body, '!'))
				}
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set(alg.HeaderName(), value)
					w.Header().Set("Content-Length", strconv.Itoa(len(body)))
					w.Write(body)
				}))
				t.Cleanup(srv.Close)
				out, err := newSDKClient(srv).GetObject(context.Background(), &s3.GetObjectInput{
					Bucket: aws.String("b"), Key: aws.String("k"), ChecksumMode: types.ChecksumModeEnabled,
				})
				if err != nil {
					t.Fatalf("GetObject: %v", err)
				}
				_, err = io.ReadAll(out.Body)
				out.Body.Close()
				if (err != nil) != corrupt {
					t.Errorf("reading body: err = %v, want error %v", err, corrupt)
				}
			})
		}
	}
}
