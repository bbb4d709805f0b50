package sse

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// MasterKeySize is the length in bytes of a site master key.
const MasterKeySize = 32

// ObjectKeySize is the length in bytes of an ObjectKey.
const ObjectKeySize = 32

// SealedKeySize is the length in bytes of every SealedKey.
const SealedKeySize = 1 + sealSaltSize + ObjectKeySize + tagSize

const (
	sealVersion  = 1
	sealSaltSize = 32
)

// sealInfo separates this use of the master key from any other HKDF use.
const sealInfo = "twinlake sse-s3 object-key seal v1"

// ObjectKey is the data key that encrypts one object's bytes. Use each
// ObjectKey for a single encrypted stream.
type ObjectKey [ObjectKeySize]byte

// SealedKey is an ObjectKey encrypted and authenticated under a master key,
// bound to an object identity; it is safe to store in object metadata.
type SealedKey []byte

// Keyring seals and unseals object keys under one site master key. It is
// immutable and safe for concurrent use.
type Keyring struct {
	master [MasterKeySize]byte
}

// NewKeyring returns a Keyring for master, which must be MasterKeySize
// bytes of secret random data (ErrKeySize otherwise). It copies master.
func NewKeyring(master []byte) (*Keyring, error) {
	if len(master) != MasterKeySize {
		return nil, fmt.Errorf("%w: got %d bytes", ErrKeySize, len(master))
	}
	k := &Keyring{}
	copy(k.master[:], master)
	return k, nil
}

// ObjectAAD returns the identity a sealed key is bound to for one object
// version. Fields are length-prefixed so that no two distinct triples
// encode alike (bucket "a", key "bc" differs from bucket "ab", key "c").
func ObjectAAD(bucket, key, versionID string) []byte {
	var b []byte
	for _, f := range []string{bucket, key, versionID} {
		b = binary.BigEndian.AppendUint32(b, uint32(len(f)))
		b = append(b, f...)
	}
	return b
}

// GenerateObjectKey returns a fresh random ObjectKey and that key sealed
// for the object identified by aad (see ObjectAAD). Unseal succeeds only
// with the same Keyring master and the same aad.
func (k *Keyring) GenerateObjectKey(aad []byte) (ObjectKey, SealedKey) {
	var key ObjectKey
	rand.Read(key[:])
	return key, k.Seal(key, aad)
}

// Seal seals an existing ObjectKey for the object identified by aad; a copy
// or rename that keeps the encrypted bytes re-seals their key this way.
//
// Each call draws a random salt and derives a one-time key-encryption key
// and nonce from it, so the number of keys sealed under one master key is
// not bounded by AES-GCM's random-nonce limit.
func (k *Keyring) Seal(key ObjectKey, aad []byte) SealedKey {
	out := make([]byte, 1+sealSaltSize, SealedKeySize)
	out[0] = sealVersion
	rand.Read(out[1:])
	aead, nonce := k.sealCipher(out[1:])
	return aead.Seal(out, nonce, key[:], sealAAD(aad))
}

// Unseal returns the ObjectKey in sealed, which must have been sealed by a
// Keyring with the same master key for the same aad. It returns an error
// wrapping ErrFormat if sealed is not a SealedKey of a known version and
// ErrAuthentication if the master key or aad differ or sealed was modified.
func (k *Keyring) Unseal(sealed SealedKey, aad []byte) (ObjectKey, error) {
	if len(sealed) != SealedKeySize || sealed[0] != sealVersion {
		return ObjectKey{}, fmt.Errorf("%w: sealed key of %d bytes", ErrFormat, len(sealed))
	}
	aead, nonce := k.sealCipher(sealed[1 : 1+sealSaltSize])
	plain, err := aead.Open(nil, nonce, sealed[1+sealSaltSize:], sealAAD(aad))
	if err != nil {
		return ObjectKey{}, fmt.Errorf("%w: unsealing object key", ErrAuthentication)
	}
	var key ObjectKey
	copy(key[:], plain)
	return key, nil
}

// sealCipher derives the one-time key-encryption cipher and nonce for salt.
func (k *Keyring) sealCipher(salt []byte) (cipher.AEAD, []byte) {
	okm, err := hkdf.Key(sha256.New, k.master[:], salt, sealInfo, 32+nonceSize)
	if err != nil {
		panic("sse: hkdf: " + err.Error()) // only for lengths far beyond these
	}
	return newGCM(okm[:32]), okm[32:]
}

// sealAAD binds the format version to the caller's identity bytes.
func sealAAD(aad []byte) []byte {
	return append([]byte{sealVersion}, aad...)
}

// newGCM returns AES-256-GCM for a 32-byte key; it cannot fail for one.
func newGCM(key []byte) cipher.AEAD {
	block, err := aes.NewCipher(key)
	if err != nil {
		panic("sse: " + err.Error())
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic("sse: " + err.Error())
	}
	return aead
}
