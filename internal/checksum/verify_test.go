package checksum

import (
	"errors"
	"testing"
)

func TestVerify(t *testing.T) {
	data := []byte("hello")
	computed := map[Algorithm]string{CRC32: CRC32.Sum(data), SHA256: SHA256.Sum(data)}
	tests := []struct {
		name     string
		expected map[Algorithm]string
		wantErr  error
	}{
		{"nil expected", nil, nil},
		{"match", map[Algorithm]string{CRC32: CRC32.Sum(data)}, nil},
		{"match both", map[Algorithm]string{CRC32: CRC32.Sum(data), SHA256: SHA256.Sum(data)}, nil},
		{"mismatch", map[Algorithm]string{CRC32: CRC32.Sum([]byte("world"))}, ErrBadDigest},
		{"second mismatches", map[Algorithm]string{CRC32: CRC32.Sum(data), SHA256: SHA256.Sum(nil)}, ErrBadDigest},
		{"not computed", map[Algorithm]string{CRC32C: CRC32C.Sum(data)}, ErrNotComputed},
		{"malformed expected", map[Algorithm]string{CRC32: "!!"}, ErrInvalidChecksum},
		{"unknown key", map[Algorithm]string{"BLAKE3": "AAAA"}, ErrUnknownAlgorithm},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify(tt.expected, computed)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestVerifyContentMD5(t *testing.T) {
	const abcHex = "900150983cd24fb0d6963f7d28e17f72" // MD5("abc")
	tests := []struct {
		name    string
		header  string
		md5Hex  string
		wantErr error
	}{
		{"match", "kAFQmDzST7DWlj99KOF/cg==", abcHex, nil},
		{"mismatch", "1B2M2Y8AsgTpgAmY7PhCfg==", abcHex, ErrBadDigest},
		{"unpadded", "kAFQmDzST7DWlj99KOF/cg", abcHex, ErrInvalidDigest},
		{"hex instead of base64", abcHex, abcHex, ErrInvalidDigest},
		{"empty", "", abcHex, ErrInvalidDigest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := VerifyContentMD5(tt.header, tt.md5Hex)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}
