package iam

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadOrCreateRoot(t *testing.T) {
	dir := t.TempDir()
	c1, created, err := LoadOrCreateRoot(dir, "", "")
	if err != nil || !created || len(c1.SecretKey) < 30 {
		t.Fatalf("first start: %+v created=%v err=%v", c1, created, err)
	}
	st, err := os.Stat(filepath.Join(dir, RootFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("credential file mode: %v %v", st.Mode(), err)
	}
	c2, created, err := LoadOrCreateRoot(dir, "", "")
	if err != nil || created || c2 != c1 {
		t.Fatalf("second start: %+v created=%v err=%v", c2, created, err)
	}
	if _, _, err := LoadOrCreateRoot(dir, "admin", "short"); err == nil {
		t.Fatal("weak password accepted")
	}
	if _, _, err := LoadOrCreateRoot(dir, "admin", ""); err == nil {
		t.Fatal("user without password accepted")
	}
	c3, _, err := LoadOrCreateRoot(dir, "admin", "longenough")
	if err != nil || c3.AccessKey != "admin" {
		t.Fatalf("env credential: %+v %v", c3, err)
	}
	s := NewStore(c3)
	if sk, ok := s.SecretKey("admin"); !ok || sk != "longenough" || !s.IsAdmin("admin") {
		t.Fatal("store lookup failed")
	}
	if _, ok := s.SecretKey("nobody"); ok {
		t.Fatal("unknown key found")
	}
}

// TestGeneratedCredentialsAreTypeable: generated secrets are 40 letters
// and digits, so none starts with '-' and reads as a flag on a command
// line (a base64url secret did, one time in 64), and randomFrom draws
// every letter equally often.
func TestGeneratedCredentialsAreTypeable(t *testing.T) {
	for range 2000 {
		s := randomSecret()
		if len(s) != 40 || strings.Trim(s, secretLetters) != "" {
			t.Fatalf("secret %q: want 40 letters and digits", s)
		}
		if k := randomKey(20); len(k) != 20 || strings.Trim(k, keyLetters) != "" {
			t.Fatalf("access key %q", k)
		}
	}
	// 255 letters: 256%255 == 1, so a plain modulo would draw the first
	// letter twice as often as each other one.
	alphabet := make([]byte, 255)
	for i := range alphabet {
		alphabet[i] = byte(i + 1)
	}
	const perLetter = 400
	drawn := randomFrom(string(alphabet), 255*perLetter)
	counts := make([]int, 256)
	for i := range len(drawn) {
		counts[drawn[i]]++
	}
	// 6 standard deviations of a fair draw: sqrt(400) = 20.
	if n := counts[1]; n < perLetter-120 || n > perLetter+120 {
		t.Fatalf("the first letter drawn %d times, want about %d", n, perLetter)
	}
}
