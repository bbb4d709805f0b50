package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startDemo runs `twinlake demo` until the returned stop is called.
func startDemo(t *testing.T, dir string, ports [2]int) (out *syncBuffer, stop func()) {
	t.Helper()
	out = &syncBuffer{}
	root := NewRoot()
	root.SetOut(out)
	root.SetErr(out)
	root.SetArgs([]string{"demo", "--dir", dir, "--ports", fmt.Sprintf("%d,%d", ports[0], ports[1])})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), "twinlake demo is running") {
		select {
		case err := <-done:
			cancel()
			t.Fatalf("demo ended: %v\n%s", err, out)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("demo not running after 60s:\n%s", out)
		}
	}
	return out, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("demo: %v", err)
		}
	}
}

// TestDemoWiresTwoSites: the README's first command. `twinlake demo` starts
// both sites, makes dr the Tables replica, joins them with site replication
// (through the admin API, as an operator would) and writes the aliases;
// run again on the same directory it resumes without joining twice. Its
// banner states the roles as they are: after `table replicate failover dr`
// and a restart, dr is no longer named the Tables replica.
func TestDemoWiresTwoSites(t *testing.T) {
	t.Setenv("TWINLAKE_CONFIG_DIR", t.TempDir())
	t.Setenv("TWINLAKE_ROOT_USER", "")
	t.Setenv("TWINLAKE_ROOT_PASSWORD", "")
	dir := t.TempDir()
	ports := [2]int{freePort(t), freePort(t)}
	for run := range 3 {
		failedOver := run == 2
		out, stop := startDemo(t, dir, ports)
		wants := []string{fmt.Sprintf("127.0.0.1:%d", ports[0]), `(alias "primary", Tables primary)`, "credentials:",
			fmt.Sprintf("console:     http://127.0.0.1:%d/twinlake/console/", ports[1])}
		if failedOver {
			wants = append(wants, `(alias "dr", Tables primary)`, "neither is a Tables replica")
		} else {
			wants = append(wants, `(alias "dr", Tables replica)`, "dr is the Tables replica", "table replicate failover dr")
		}
		for _, want := range wants {
			if !strings.Contains(out.String(), want) {
				t.Errorf("run %d: banner lacks %q:\n%s", run, want, out)
			}
		}
		if failedOver && strings.Contains(out.String(), "failover dr") {
			t.Errorf("run %d: banner still offers to fail over dr:\n%s", run, out)
		}
		got := runCLI(t, "admin", "replicate", "info", "primary", "--json")
		if !strings.Contains(got, `"enabled":true`) || !strings.Contains(got, `"dr"`) {
			t.Errorf("run %d: replicate info: %s", run, got)
		}
		if got := runCLI(t, "admin", "config", "get", "dr", "tables", "--json"); !strings.Contains(got, `"replica_catalog"`) || failedOver == replicaOn(got) {
			t.Errorf("run %d: dr tables config: %s", run, got)
		}
		runCLI(t, "mb", "primary/demo-bucket"+fmt.Sprint(run))
		waitWithin(t, 20*time.Second, "the bucket on dr", func() bool { return strings.Contains(runCLI(t, "ls", "dr"), "demo-bucket"+fmt.Sprint(run)) })
		if run == 1 {
			runCLI(t, "table", "replicate", "failover", "dr")
			waitWithin(t, 20*time.Second, "dr promoted", func() bool {
				return !replicaOn(runCLI(t, "admin", "config", "get", "dr", "tables", "--json"))
			})
		}
		stop()
	}
}

// replicaOn reports whether `admin config get ALIAS tables --json` output
// has replica_catalog on.
func replicaOn(jsonOut string) bool {
	for _, line := range strings.Split(jsonOut, "\n") {
		if strings.Contains(line, `"replica_catalog"`) {
			return strings.Contains(line, `"on"`)
		}
	}
	return strings.Contains(jsonOut, `"key":"replica_catalog","value":"on"`)
}

// runCLI runs the root command and returns its output; it fails the test
// on an error.
func runCLI(t *testing.T, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	root := NewRoot()
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		t.Fatalf("twinlake %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}
