package checksum

import (
	"bytes"
	"testing"

	"github.com/minio/minio-go/v7"
)

// TestMinioGoComputesTheSame holds every algorithm's wire value against
// minio-go's own computation of it (a client written apart from this
// package, and the only one here that knows the algorithms S3 added after
// CRC64NVME), over inputs of several lengths.
func TestMinioGoComputesTheSame(t *testing.T) {
	theirs := map[Algorithm]minio.ChecksumType{
		CRC32: minio.ChecksumCRC32, CRC32C: minio.ChecksumCRC32C, CRC64NVME: minio.ChecksumCRC64NVME,
		SHA1: minio.ChecksumSHA1, SHA256: minio.ChecksumSHA256, MD5: minio.ChecksumMD5, SHA512: minio.ChecksumSHA512,
		XXHASH64: minio.ChecksumXXHash64, XXHASH3: minio.ChecksumXXHash3, XXHASH128: minio.ChecksumXXHash128,
	}
	for _, alg := range Algorithms() {
		ct, ok := theirs[alg]
		if !ok {
			t.Fatalf("%s has no minio-go counterpart in the table", alg)
		}
		if ct.String() != string(alg) || ct.Key() != alg.HeaderName() {
			t.Errorf("%s: minio-go names it %s, header %s; this package %s", alg, ct.String(), ct.Key(), alg.HeaderName())
		}
		for _, n := range []int{0, 1, 17, 4096, 1 << 20} {
			data := bytes.Repeat([]byte("twinlake "), n/9+1)[:n]
			if ours, want := alg.Sum(data), ct.EncodeToString(data); ours != want {
				t.Errorf("%s over %d bytes: %s, minio-go %s", alg, n, ours, want)
			}
		}
	}
}
