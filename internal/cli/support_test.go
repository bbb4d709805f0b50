package cli

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"testing"
)

// TestSupportProfile: `twinlake support profile` writes the server's
// runtime profile in pprof's format (gzipped protobuf naming its sample
// types); a second CPU profile while one runs is refused; only an
// administrator (admin:Profiling) may take one.
func TestSupportProfile(t *testing.T) {
	e := newAdminEnv(t, nil)
	dir := t.TempDir()
	read := func(p string) string {
		t.Helper()
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s is not a gzipped profile: %v", p, err)
		}
		body, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		return string(body)
	}
	cpu := filepath.Join(dir, "cpu.pprof")
	e.must("support", "profile", "s1", "--duration", "1s", "--output", cpu)
	if body := read(cpu); !bytes.Contains([]byte(body), []byte("nanoseconds")) {
		t.Fatal("the CPU profile names no time samples")
	}
	heap := filepath.Join(dir, "heap.pprof")
	out := e.must("support", "profile", "s1", "--type", "heap", "-o", heap, "--json")
	if !bytes.Contains([]byte(out), []byte(`"type":"heap"`)) {
		t.Fatalf("json output %s", out)
	}
	if body := read(heap); !bytes.Contains([]byte(body), []byte("inuse_space")) {
		t.Fatal("the heap profile names no inuse_space samples")
	}
	goroutines := filepath.Join(dir, "g.pprof")
	e.must("support", "profile", "s1", "--type", "goroutine", "-o", goroutines)
	if body := read(goroutines); !bytes.Contains([]byte(body), []byte("net/http")) {
		t.Fatal("the goroutine profile shows no HTTP server goroutine")
	}

	// The server runs in this process: a CPU profile taken here makes
	// the server's busy.
	var sink bytes.Buffer
	if err := pprof.StartCPUProfile(&sink); err != nil {
		t.Fatal(err)
	}
	_, err := e.run("support", "profile", "s1", "--duration", "1s", "-o", filepath.Join(dir, "busy.pprof"))
	pprof.StopCPUProfile()
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("ProfileBusy")) {
		t.Fatalf("a second CPU profile: %v", err)
	}
	e.runCases(t, []adminCase{
		{name: "not admin", args: []string{"support", "profile", "u1", "--type", "heap", "-o", filepath.Join(dir, "x")}, wantErr: "AccessDenied"},
		{name: "bad type", args: []string{"support", "profile", "s1", "--type", "disk"}, wantErr: `--type "disk"`},
		{name: "too long", args: []string{"support", "profile", "s1", "--duration", "1h"}, wantErr: "--duration 1h0m0s"},
	})
}
