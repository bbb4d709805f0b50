package bench

import "math/rand/v2"

// Payload returns size pseudo-random bytes, the same for the same seed.
// Bench commands build one payload per object size before a run and share
// it read-only among workers, so generating data never limits throughput;
// random bytes keep compression or deduplication from flattering results.
func Payload(size int64, seed uint64) []byte {
	var key [32]byte
	for i := range 8 {
		key[i] = byte(seed >> (8 * i))
	}
	b := make([]byte, size)
	_, _ = rand.NewChaCha8(key).Read(b) // ChaCha8.Read never fails
	return b
}
