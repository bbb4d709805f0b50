package objects

import "io"

// SSEAlgorithm is the only server-side encryption algorithm served (SSE-S3).
const SSEAlgorithm = "AES256"

// Cipher encrypts object data at rest. Each stored segment gets its own data
// key, sealed by the site key and bound to its object through aad, so no two
// segments ever share a key and nonce space.
type Cipher interface {
	// NewKey returns a fresh data key and its sealed form.
	NewKey(aad []byte) (key, sealed []byte, err error)
	// Unseal recovers a data key sealed for aad.
	Unseal(sealed, aad []byte) (key []byte, err error)
	// Encrypt returns a reader of the ciphertext of plaintext under key.
	Encrypt(key []byte, plaintext io.Reader) (io.Reader, error)
	// EncryptedSize returns the stored size of plain plaintext bytes.
	EncryptedSize(plain int64) int64
	// DecryptRange returns plaintext bytes [off, off+n) of a stored
	// ciphertext of encSize bytes, reading only what that range needs.
	DecryptRange(key []byte, ciphertext io.ReaderAt, encSize, off, n int64) (io.Reader, error)
}

// sseAAD binds a segment's data key to its object.
func sseAAD(bucket, key string) []byte {
	return []byte("twinlake-sse\x00" + bucket + "\x00" + key)
}
