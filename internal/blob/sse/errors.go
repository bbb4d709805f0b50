package sse

import "errors"

// Every error below is returned wrapped with %w and context; classify with
// errors.Is. None of them is retryable: they describe the stored bytes or
// the caller's arguments, not a transient condition. I/O errors from the
// underlying reader are passed through unchanged.

// ErrKeySize is returned by NewKeyring when the master key is not
// MasterKeySize bytes.
var ErrKeySize = errors.New("sse: master key must be 32 bytes")

// ErrAuthentication is returned when a sealed key or a ciphertext package
// fails authentication: the bytes were modified, packages were reordered or
// moved between objects, the wrong key was used, or a sealed key was
// presented with another object's identity.
var ErrAuthentication = errors.New("sse: message authentication failed")

// ErrTruncated is returned when encrypted data ends early: shorter than a
// header and one package, cut at a package boundary before the final
// package, or a ReaderAt holding fewer bytes than the encrypted size given.
// (A cut inside a package cannot be told apart from tampering and is
// reported as ErrAuthentication.)
var ErrTruncated = errors.New("sse: encrypted data truncated")

// ErrTrailingData is returned by the sequential decrypter when bytes follow
// the package marked final.
var ErrTrailingData = errors.New("sse: data after the final package")

// ErrFormat is returned for a stream header or sealed key that is not in a
// format version this package writes.
var ErrFormat = errors.New("sse: unknown encryption format")

// ErrInvalidSize is returned when an encrypted size is one no plaintext
// size encrypts to (for example a final package shorter than its tag).
var ErrInvalidSize = errors.New("sse: impossible encrypted size")

// ErrInvalidRange is returned by DecryptRange when the requested plaintext
// range is negative or extends past the end of the plaintext.
var ErrInvalidRange = errors.New("sse: range outside plaintext")
