package checksum

import (
	"crypto/md5" //nolint:gosec // MD5 is the S3 ETag, not a security choice.
	"encoding/hex"
	"fmt"
	"hash"
	"io"
)

// Set computes, in one pass over an object's bytes, the MD5 that becomes
// its ETag plus any additional checksums requested. A Set is an io.Writer
// that never fails; it is not safe for concurrent use.
type Set struct {
	md5   hash.Hash
	algs  []Algorithm
	extra []hash.Hash
	size  int64
}

var _ io.Writer = (*Set)(nil)

// NewSet returns a Set computing MD5 and each distinct algorithm in algs.
// It returns an error wrapping ErrUnknownAlgorithm if any is not valid.
func NewSet(algs ...Algorithm) (*Set, error) {
	s := &Set{md5: md5.New()} //nolint:gosec // see import.
	for _, a := range algs {
		info, ok := a.info()
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrUnknownAlgorithm, string(a))
		}
		if s.has(a) {
			continue
		}
		s.algs = append(s.algs, a)
		s.extra = append(s.extra, info.newHash())
	}
	return s, nil
}

func (s *Set) has(a Algorithm) bool {
	for _, b := range s.algs {
		if a == b {
			return true
		}
	}
	return false
}

// Write feeds p to every hash. It always returns len(p), nil.
func (s *Set) Write(p []byte) (int, error) {
	s.md5.Write(p)
	for _, h := range s.extra {
		h.Write(p)
	}
	s.size += int64(len(p))
	return len(p), nil
}

// Size returns the number of bytes written so far (the part length that
// FullObjectCRC needs).
func (s *Set) Size() int64 { return s.size }

// Algorithms returns the additional algorithms the Set computes.
func (s *Set) Algorithms() []Algorithm { return append([]Algorithm(nil), s.algs...) }

// Sum returns the lower-case hex MD5 of the bytes written so far (the
// single-part ETag, without quotes) and the wire value of each additional
// checksum. It does not change the Set; more writes may follow.
func (s *Set) Sum() (md5Hex string, checksums map[Algorithm]string) {
	checksums = make(map[Algorithm]string, len(s.algs))
	for i, a := range s.algs {
		checksums[a] = Encode(s.extra[i].Sum(nil))
	}
	return hex.EncodeToString(s.md5.Sum(nil)), checksums
}
