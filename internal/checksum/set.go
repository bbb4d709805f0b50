package checksum

import (
	"crypto/md5" //nolint:gosec // MD5 is the S3 ETag, not a security choice.
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"sync"

	md5simd "github.com/minio/md5-simd"
)

// Set computes, in one pass over an object's bytes, the MD5 that becomes
// its ETag plus any additional checksums requested. A Set is an io.Writer
// that never fails; it is not safe for concurrent use.
type Set struct {
	md5   hash.Hash
	algs  []Algorithm
	extra []hash.Hash
	size  int64
	// closeMD5 releases a streaming Set's MD5 lane (NewStreamSet).
	closeMD5 func()
}

// md5Lanes hashes the MD5 of many large streams at once in SIMD lanes
// (AVX2/AVX-512; crypto/md5 where the CPU has neither), each stream's
// blocks hashed on the server's goroutine while its writer goes on.
var md5Lanes = sync.OnceValue(md5simd.NewServer)

var _ io.Writer = (*Set)(nil)

// NewSet returns a Set computing MD5 and each distinct algorithm in algs.
// It returns an error wrapping ErrUnknownAlgorithm if any is not valid.
func NewSet(algs ...Algorithm) (*Set, error) {
	return newSet(md5.New(), nil, algs) //nolint:gosec // see import.
}

// NewStreamSet is NewSet for a large body: its MD5 runs in a SIMD lane
// shared with the other large bodies being hashed, concurrently with the
// caller. Its Sum is final, and Close must be called once it is done.
func NewStreamSet(algs ...Algorithm) (*Set, error) {
	h := md5Lanes().NewHash()
	s, err := newSet(h, h.Close, algs)
	if err != nil {
		h.Close()
	}
	return s, err
}

// Close releases what a streaming Set holds; it is a no-op for NewSet's.
func (s *Set) Close() {
	if s.closeMD5 != nil {
		s.closeMD5()
		s.closeMD5 = nil
	}
}

func newSet(m hash.Hash, closeMD5 func(), algs []Algorithm) (*Set, error) {
	s := &Set{md5: m, closeMD5: closeMD5}
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
