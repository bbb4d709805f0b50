package checksum

import (
	"errors"
	"net/http"
	"testing"
)

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func TestFromHeaders(t *testing.T) {
	crc := CRC32.Sum([]byte("abc"))
	sha := SHA256.Sum([]byte("abc"))
	md5b64 := "kAFQmDzST7DWlj99KOF/cg==" // MD5("abc")
	tests := []struct {
		name    string
		h       http.Header
		want    Declared
		wantErr error
	}{
		{"nothing", header(), Declared{}, nil},
		{"header value", header("X-Amz-Checksum-Crc32", crc),
			Declared{Algorithm: CRC32, Value: crc}, nil},
		{"lower-case raw key", http.Header{"x-amz-checksum-sha256": {sha}},
			Declared{Algorithm: SHA256, Value: sha}, nil},
		{"sdk algorithm agrees", header("x-amz-checksum-crc32", crc, "x-amz-sdk-checksum-algorithm", "crc32"),
			Declared{Algorithm: CRC32, Value: crc}, nil},
		{"sdk algorithm alone", header("x-amz-sdk-checksum-algorithm", "CRC64NVME"),
			Declared{Algorithm: CRC64NVME}, nil},
		{"trailer", header("x-amz-trailer", "x-amz-checksum-crc32c", "x-amz-sdk-checksum-algorithm", "CRC32C"),
			Declared{Algorithm: CRC32C, Trailer: true}, nil},
		{"content-md5", header("Content-MD5", md5b64),
			Declared{ContentMD5: md5b64}, nil},
		{"non-value family members ignored",
			header("x-amz-checksum-type", "FULL_OBJECT", "x-amz-checksum-mode", "ENABLED", "x-amz-checksum-algorithm", "CRC32"),
			Declared{}, nil},
		{"repeated identical value", header("x-amz-checksum-crc32", crc, "x-amz-checksum-crc32", crc),
			Declared{Algorithm: CRC32, Value: crc}, nil},

		{"repeated different value", header("x-amz-checksum-crc32", crc, "x-amz-checksum-crc32", "AAAAAA=="),
			Declared{}, ErrInvalidChecksum},
		{"bad base64", header("x-amz-checksum-crc32", "not base64!"), Declared{}, ErrInvalidChecksum},
		{"wrong length", header("x-amz-checksum-crc32", sha), Declared{}, ErrInvalidChecksum},
		{"unknown algorithm header", header("x-amz-checksum-blake3", "AAAAAAAAAAA="), Declared{}, ErrUnknownAlgorithm},
		{"two algorithms", header("x-amz-checksum-crc32", crc, "x-amz-checksum-sha256", sha),
			Declared{}, ErrMultipleChecksums},
		{"header and trailer", header("x-amz-checksum-crc32", crc, "x-amz-trailer", "x-amz-checksum-crc32"),
			Declared{}, ErrMultipleChecksums},
		{"two trailers", header("x-amz-trailer", "x-amz-checksum-crc32, x-amz-checksum-sha1"),
			Declared{}, ErrMultipleChecksums},
		{"non-checksum trailer", header("x-amz-trailer", "x-amz-meta-foo"), Declared{}, ErrInvalidTrailer},
		{"unknown checksum trailer", header("x-amz-trailer", "x-amz-checksum-blake3"), Declared{}, ErrInvalidTrailer},
		{"sdk algorithm mismatch", header("x-amz-checksum-crc32", crc, "x-amz-sdk-checksum-algorithm", "SHA256"),
			Declared{}, ErrAlgorithmMismatch},
		{"sdk algorithm vs trailer", header("x-amz-trailer", "x-amz-checksum-crc32", "x-amz-sdk-checksum-algorithm", "CRC32C"),
			Declared{}, ErrAlgorithmMismatch},
		{"sdk algorithm unknown", header("x-amz-sdk-checksum-algorithm", "BLAKE3"), Declared{}, ErrUnknownAlgorithm},
		{"content-md5 wrong length", header("Content-MD5", crc), Declared{}, ErrInvalidDigest},
		{"content-md5 not base64", header("Content-MD5", "zzz"), Declared{}, ErrInvalidDigest},
		{"content-md5 present but empty", header("Content-MD5", ""), Declared{}, ErrInvalidDigest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromHeaders(tt.h)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSetTrailerValue(t *testing.T) {
	crc := CRC32C.Sum([]byte("abc"))
	tests := []struct {
		name    string
		d       Declared
		trailer string
		value   string
		wantErr error
	}{
		{"declared", Declared{Algorithm: CRC32C, Trailer: true}, "X-Amz-Checksum-Crc32c", crc, nil},
		{"not declared", Declared{Algorithm: CRC32C}, "x-amz-checksum-crc32c", crc, ErrInvalidTrailer},
		{"other name", Declared{Algorithm: CRC32C, Trailer: true}, "x-amz-checksum-crc32", crc, ErrInvalidTrailer},
		{"malformed", Declared{Algorithm: CRC32C, Trailer: true}, "x-amz-checksum-crc32c", "AA", ErrInvalidChecksum},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.d
			err := d.SetTrailerValue(tt.trailer, tt.value)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err == nil && d.Value != tt.value {
				t.Errorf("Value = %q, want %q", d.Value, tt.value)
			}
		})
	}
}

func TestDeclaredVerify(t *testing.T) {
	body := []byte("abc")
	s, _ := NewSet(CRC32)
	s.Write(body)
	md5Hex, sums := s.Sum()
	tests := []struct {
		name    string
		d       Declared
		wantErr error
	}{
		{"nothing declared", Declared{}, nil},
		{"both match", Declared{Algorithm: CRC32, Value: sums[CRC32], ContentMD5: "kAFQmDzST7DWlj99KOF/cg=="}, nil},
		{"trailer pending", Declared{Algorithm: CRC32, Trailer: true}, nil},
		{"crc mismatch", Declared{Algorithm: CRC32, Value: "AAAAAA=="}, ErrBadDigest},
		{"md5 mismatch", Declared{ContentMD5: "AAAAAAAAAAAAAAAAAAAAAA=="}, ErrBadDigest},
		{"not computed", Declared{Algorithm: SHA1, Value: SHA1.Sum(body)}, ErrNotComputed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.d.Verify(md5Hex, sums)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}
