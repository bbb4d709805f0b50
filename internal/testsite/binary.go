package testsite

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// raceEnv names the environment variable that, set to 1, builds the
// binary with the race detector: every server a test starts then reports
// the data races it meets, and the test fails on the first one.
const raceEnv = "TWINLAKE_TEST_RACE"

// BuildBinary builds cmd/twinlake into a temporary directory and returns
// its path, for tests that drive the real binary.
func BuildBinary(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "twinlake")
	args := []string{"build", "-o", bin}
	if os.Getenv(raceEnv) == "1" {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "./cmd/twinlake")...)
	cmd.Dir = moduleRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/twinlake: %v\n%s", err, out)
	}
	return bin
}

// moduleRoot walks up from the package directory to the go.mod.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// FreeAddr returns a loopback address with a port free at the time of the
// call.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Process is a twinlake server process started from the built binary.
type Process struct {
	cmd  *exec.Cmd
	log  *LockedBuffer
	done chan struct{}
}

// StartProcess runs "twinlake server" on dir and addr with env added to the
// environment, and waits until it answers its readiness probe. It is
// killed at test cleanup.
func StartProcess(t testing.TB, bin, dir, addr string, env ...string) *Process {
	t.Helper()
	return StartProcessArgs(t, bin, dir, addr, nil, env...)
}

// StartProcessArgs is StartProcess with more server flags (--drives, say).
func StartProcessArgs(t testing.TB, bin, dir, addr string, args []string, env ...string) *Process {
	t.Helper()
	p := spawn(t, bin, dir, addr, args, env)
	cmd := p.cmd
	t.Cleanup(func() { p.Kill(t) })
	probe := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := probe.Get("http://" + addr + "/twinlake/health/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-p.done:
			t.Fatalf("server exited during startup: %v\n%s", cmd.ProcessState, p.log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not ready after 20s: %v\n%s", err, p.log)
		}
	}
}

// SpawnProcess is StartProcessArgs without waiting for the server to be
// ready (one that may never be, or must fail to start). It is killed at
// test cleanup.
func SpawnProcess(t testing.TB, bin, dir, addr string, args []string, env ...string) *Process {
	t.Helper()
	p := spawn(t, bin, dir, addr, args, env)
	t.Cleanup(func() { p.Kill(t) })
	return p
}

// spawn runs "twinlake server" on dir and addr with more flags and env,
// without waiting for it.
func spawn(t testing.TB, bin, dir, addr string, args, env []string) *Process {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"server", "--address", addr, "--dir", dir, "--log-level", "warn"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	p := &Process{cmd: cmd, log: &LockedBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	go func() { cmd.Wait(); close(p.done) }()
	// Registered before the kill: it reads the log once the process is gone.
	t.Cleanup(func() {
		if race := raceReport(p.Log()); race != "" {
			t.Errorf("server %s met a data race:\n%s", addr, race)
		}
	})
	return p
}

// raceReport returns the first data race report in a server's output
// (a binary built with the race detector prints one as it finds it, so a
// killed process has printed it too), or "" when there is none.
func raceReport(log string) string {
	const mark = "WARNING: DATA RACE"
	i := strings.Index(log, mark)
	if i < 0 {
		return ""
	}
	report := log[i:]
	if end := strings.Index(report[len(mark):], "=================="); end >= 0 {
		report = report[:len(mark)+end]
	}
	return report
}

// Kill sends SIGKILL and waits for the process to be gone.
func (p *Process) Kill(t testing.TB) {
	select {
	case <-p.done:
		return
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("kill: %v", err)
	}
	<-p.done
}

// Pause stops the process with SIGSTOP: it holds its sockets and answers
// nothing until Resume.
func (p *Process) Pause(t testing.TB) { p.signal(t, syscall.SIGSTOP) }

// Resume continues a paused process with SIGCONT.
func (p *Process) Resume(t testing.TB) { p.signal(t, syscall.SIGCONT) }

func (p *Process) signal(t testing.TB, sig syscall.Signal) {
	if p.Exited() {
		return
	}
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("signal %v: %v", sig, err)
	}
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Log returns what the process printed so far.
func (p *Process) Log() string { return p.log.String() }

// LockedBuffer is a buffer several goroutines may write at once: a
// process's two output streams, or a site's log.
type LockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
