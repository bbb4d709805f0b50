package iam

import (
	"os"
	"path/filepath"
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
