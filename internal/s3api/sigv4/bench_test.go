package sigv4

import (
	"bytes"
	"io"
	"testing"
)

func BenchmarkVerifyHeader(b *testing.B) {
	body := []byte("hello")
	r := newClientRequest(b, "PUT", "http://twinlake.test/bucket/some/key.parquet?partNumber=1&uploadId=abc", body)
	r.Header.Set("X-Amz-Content-Sha256", sha256Hex(body))
	sdkSign(b, r, sha256Hex(body), "s3", testTime())
	sr := toServer(b, r)
	v := newTestVerifier(testTime())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(sr, "s3"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkChunkedReaderSigned(b *testing.B) {
	data := bytes.Repeat([]byte("x"), 1<<20)
	signer := newChunkSigner(exampleSecret, exampleAmzDate, "us-east-1", "s3")
	body := chunkEncoding{chunkSize: 64 << 10, signer: signer, seed: exampleSeedSignature}.encode(data)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		res := exampleStreamResult(PayloadStreamingSigned, int64(len(data)))
		rd := res.Body(newClientRequest(b, "PUT", "http://x/", body))
		if _, err := io.Copy(io.Discard, rd); err != nil {
			b.Fatal(err)
		}
	}
}
