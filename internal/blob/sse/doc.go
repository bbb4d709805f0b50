// Package sse implements SSE-S3, server-side encryption of object data at
// rest with keys the server manages.
//
// Keys are two-level. A site master key (held by a Keyring) never touches
// object data; it seals a fresh random ObjectKey per object, binding the
// sealed key to the object's identity so it cannot be reused for another
// object. The ObjectKey encrypts the object's bytes in a streaming format of
// fixed-size, individually authenticated packages (see EncryptReader), which
// lets a range read decrypt only the packages it covers.
//
// A SealedKey is version 0x01 ‖ salt (32 random bytes) ‖ AES-256-GCM of the
// ObjectKey ‖ tag. The key-encryption key and nonce are derived per seal by
// HKDF-SHA256 from the master key and salt, and the associated data is the
// version byte followed by the caller's object identity (see ObjectAAD).
//
// The package performs no storage I/O of its own: callers persist the
// SealedKey in object metadata and the encrypted bytes in the blob store.
//
// # Stream format
//
// Version 1 of the encrypted stream is
//
//	header   = magic "tle" ‖ version 0x01 ‖ nonce prefix (4 random bytes)
//	package  = AES-256-GCM(ObjectKey, nonce, plaintext[i·P : (i+1)·P], aad) ‖ tag
//	nonce    = nonce prefix ‖ uint64 big-endian package index i
//	aad      = header ‖ final flag (0x01 on the last package, else 0x00)
//
// P is PackageSize. Every package but the last holds exactly P plaintext
// bytes; the last holds 1..P, or 0 only when the whole plaintext is empty,
// so every stream has a final package and truncation at a package boundary
// is detectable. The index in the nonce detects reordering, the final flag
// detects truncation, and the header in the aad authenticates the header.
package sse
