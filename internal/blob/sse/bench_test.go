package sse

import (
	"bytes"
	"io"
	"testing"
)

const benchSize = 64 << 20

func BenchmarkEncrypt(b *testing.B) {
	plain := make([]byte, benchSize)
	key := testKey(10)
	b.SetBytes(benchSize)
	for b.Loop() {
		if _, err := io.Copy(io.Discard, EncryptReader(key, bytes.NewReader(plain))); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecrypt(b *testing.B) {
	key := testKey(10)
	enc, _ := io.ReadAll(EncryptReader(key, bytes.NewReader(make([]byte, benchSize))))
	b.SetBytes(benchSize)
	for b.Loop() {
		if _, err := io.Copy(io.Discard, DecryptReader(key, bytes.NewReader(enc))); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecryptRange(b *testing.B) {
	key := testKey(10)
	enc, _ := io.ReadAll(EncryptReader(key, bytes.NewReader(make([]byte, benchSize))))
	src := bytes.NewReader(enc)
	b.SetBytes(benchSize)
	for b.Loop() {
		r, err := DecryptRange(key, src, int64(len(enc)), 0, benchSize)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecryptSmallRange is a 4 KiB Range GET in the middle of a 64 MiB
// object: cost must be one package, not the object.
func BenchmarkDecryptSmallRange(b *testing.B) {
	key := testKey(10)
	enc, _ := io.ReadAll(EncryptReader(key, bytes.NewReader(make([]byte, benchSize))))
	src := bytes.NewReader(enc)
	b.SetBytes(4 << 10)
	for b.Loop() {
		r, err := DecryptRange(key, src, int64(len(enc)), benchSize/2+100, 4<<10)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			b.Fatal(err)
		}
	}
}
