package iam

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
)

// sealer encrypts with AES-256-GCM: secret keys at rest under the data key
// (datakey.go; the record's storage key is the additional data, so a sealed
// secret cannot be moved to another identity), the data key under a key
// derived (HKDF-SHA256) from the root secret, STS session tokens under
// another key derived from it.
type sealer struct{ aead cipher.AEAD }

// hkdfSalt versions every derivation from the root secret; hkdfInfo is the
// key secrets were sealed under directly before the data key, still read
// once to convert such a site (convertLegacy).
const (
	hkdfSalt = "twinlake-iam-v1"
	hkdfInfo = "iam secret keys, aes-256-gcm"
)

func newSealer(rootSecret string) (sealer, error) { return newSealerFor(rootSecret, hkdfInfo) }

// newSealerFor derives a sealer for one purpose (info); keys for different
// purposes are independent.
func newSealerFor(rootSecret, info string) (sealer, error) {
	key, err := hkdf.Key(sha256.New, []byte(rootSecret), []byte(hkdfSalt), info, 32)
	if err != nil {
		return sealer{}, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return sealer{}, err
	}
	aead, err := cipher.NewGCM(block)
	return sealer{aead}, err
}

// seal returns nonce || ciphertext.
func (s sealer) seal(secret, aad string) []byte {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(secret)+s.aead.Overhead())
	rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, []byte(secret), []byte(aad))
}

func (s sealer) open(sealed []byte, aad string) (string, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return "", fmt.Errorf("%w: %s", ErrSealed, aad)
	}
	pt, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(aad))
	if err != nil {
		return "", fmt.Errorf("%w: %s", ErrSealed, aad)
	}
	return string(pt), nil
}
