package sse

import (
	"bytes"
	"errors"
	"testing"
)

func testKeyring(t testing.TB, seed byte) *Keyring {
	t.Helper()
	k, err := NewKeyring(bytes.Repeat([]byte{seed}, MasterKeySize))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestNewKeyring(t *testing.T) {
	for _, n := range []int{0, 16, 31, 33, 64} {
		if _, err := NewKeyring(make([]byte, n)); !errors.Is(err, ErrKeySize) {
			t.Errorf("NewKeyring(%d bytes) err = %v, want ErrKeySize", n, err)
		}
	}
	master := bytes.Repeat([]byte{7}, MasterKeySize)
	k, err := NewKeyring(master)
	if err != nil {
		t.Fatal(err)
	}
	key, sealed := k.GenerateObjectKey(nil)
	master[0] ^= 1 // NewKeyring must have copied it
	if got, err := k.Unseal(sealed, nil); err != nil || got != key {
		t.Errorf("Unseal after caller mutated master: %v", err)
	}
}

func TestSealUnseal(t *testing.T) {
	k := testKeyring(t, 1)
	aad := ObjectAAD("bucket", "photos/cat.jpg", "v1")
	key, sealed := k.GenerateObjectKey(aad)
	if len(sealed) != SealedKeySize {
		t.Fatalf("sealed key is %d bytes, want %d", len(sealed), SealedKeySize)
	}
	other, _ := k.GenerateObjectKey(aad)
	if key == other || key == (ObjectKey{}) {
		t.Fatal("object keys are not fresh random keys")
	}
	if again := k.Seal(key, aad); bytes.Equal(again, sealed) {
		t.Error("sealing twice gave identical output; salt not random")
	}
	tests := []struct {
		name    string
		k       *Keyring
		sealed  SealedKey
		aad     []byte
		wantErr error
	}{
		{"same object", k, sealed, aad, nil},
		{"other version", k, sealed, ObjectAAD("bucket", "photos/cat.jpg", "v2"), ErrAuthentication},
		{"other key", k, sealed, ObjectAAD("bucket", "photos/dog.jpg", "v1"), ErrAuthentication},
		{"other bucket", k, sealed, ObjectAAD("bucket2", "photos/cat.jpg", "v1"), ErrAuthentication},
		{"no aad", k, sealed, nil, ErrAuthentication},
		{"other master", testKeyring(t, 2), sealed, aad, ErrAuthentication},
		{"short", k, sealed[:SealedKeySize-1], aad, ErrFormat},
		{"long", k, append(append(SealedKey{}, sealed...), 0), aad, ErrFormat},
		{"empty", k, nil, aad, ErrFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.k.Unseal(tt.sealed, tt.aad)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err == nil && got != key {
				t.Error("unsealed a different key")
			}
		})
	}
}

func TestUnsealTamperedByte(t *testing.T) {
	k := testKeyring(t, 1)
	aad := ObjectAAD("b", "k", "")
	_, sealed := k.GenerateObjectKey(aad)
	for i := range sealed {
		bad := append(SealedKey{}, sealed...)
		bad[i] ^= 0x80
		_, err := k.Unseal(bad, aad)
		if !errors.Is(err, ErrAuthentication) && !errors.Is(err, ErrFormat) {
			t.Errorf("byte %d flipped: err = %v", i, err)
		}
	}
}

func TestObjectAADUnambiguous(t *testing.T) {
	triples := [][3]string{
		{"a", "bc", ""}, {"ab", "c", ""}, {"a", "b", "c"}, {"", "abc", ""},
		{"abc", "", ""}, {"a", "", "bc"}, {"", "", ""}, {"a\x00", "b", ""},
	}
	seen := map[string][3]string{}
	for _, tr := range triples {
		enc := string(ObjectAAD(tr[0], tr[1], tr[2]))
		if prev, ok := seen[enc]; ok {
			t.Errorf("%q and %q encode alike", prev, tr)
		}
		seen[enc] = tr
	}
}
