package app

import (
	"encoding/base64"
	"fmt"
	"io"
	"strings"

	"github.com/twinlake/twinlake/internal/blob/sse"
	"github.com/twinlake/twinlake/internal/objects"
)

// sseCipher adapts package sse to the object layer's Cipher seam.
type sseCipher struct{ ring *sse.Keyring }

var (
	_ objects.Cipher         = sseCipher{}
	_ objects.CustomerCipher = sseCipher{}
)

// ForCustomerKey seals data keys under an SSE-C client key: the same
// sealing and stream format as SSE-S3, with the client's key in the place
// of the site master key.
func (c sseCipher) ForCustomerKey(key []byte) (objects.Cipher, error) {
	ring, err := sse.NewKeyring(key)
	if err != nil {
		return nil, err
	}
	return sseCipher{ring}, nil
}

func (c sseCipher) NewKey(aad []byte) ([]byte, []byte, error) {
	k, sealed := c.ring.GenerateObjectKey(aad)
	return k[:], sealed, nil
}

func (c sseCipher) Unseal(sealed, aad []byte) ([]byte, error) {
	k, err := c.ring.Unseal(sse.SealedKey(sealed), aad)
	if err != nil {
		return nil, err
	}
	return k[:], nil
}

func (c sseCipher) Encrypt(key []byte, plaintext io.Reader) (io.Reader, error) {
	k, err := objectKey(key)
	if err != nil {
		return nil, err
	}
	return sse.EncryptReader(k, plaintext), nil
}

func (c sseCipher) EncryptedSize(n int64) int64 { return sse.EncryptedSize(n) }

func (c sseCipher) DecryptRange(key []byte, ct io.ReaderAt, encSize, off, n int64) (io.Reader, error) {
	k, err := objectKey(key)
	if err != nil {
		return nil, err
	}
	return sse.DecryptRange(k, ct, encSize, off, n)
}

func objectKey(b []byte) (sse.ObjectKey, error) {
	var k sse.ObjectKey
	if len(b) != len(k) {
		return k, fmt.Errorf("app: data key of %d bytes", len(b))
	}
	copy(k[:], b)
	return k, nil
}

// parseKMSKey reads TWINLAKE_KMS_SECRET_KEY: base64 of 32 bytes, optionally
// prefixed by a key name and a colon.
func parseKMSKey(v string) ([]byte, error) {
	if _, after, ok := strings.Cut(v, ":"); ok {
		v = after
	}
	key, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("TWINLAKE_KMS_SECRET_KEY must be base64 of 32 bytes (optionally NAME:BASE64)")
	}
	return key, nil
}
