package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/admin"
	"github.com/twinlake/twinlake/internal/admin/admintest"
	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/config"
	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/trace"
)

// adminEnv is an admin API on loopback with alias "s1" (root) and "u1"
// (signed in, not an administrator) configured for it.
type adminEnv struct {
	cliEnv
	site *admintest.Site
}

func newAdminEnv(t *testing.T, cfg func(*admin.Config)) adminEnv {
	t.Helper()
	e := adminEnv{cliEnv: newCLIEnv(t), site: admintest.Start(t, cfg)}
	e.must("alias", "set", "s1", e.site.URL, admintest.RootAccessKey, admintest.RootSecretKey)
	e.must("alias", "set", "u1", e.site.URL, admintest.UserAccessKey, admintest.UserSecretKey)
	return e
}

// adminCase is one admin command line and what it must print or fail with.
type adminCase struct {
	name    string
	args    []string
	wantErr string   // substring of the error; "" means success
	want    []string // substrings of stdout
	wantNot []string // substrings stdout must not have
	stderr  string   // substring of stderr
}

func (e adminEnv) runCases(t *testing.T, cases []adminCase) {
	t.Helper()
	for _, c := range cases {
		ok := t.Run(c.name, func(t *testing.T) {
			out, errOut, err := e.runIn("", c.args...)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("twinlake %s: error = %v, want one line containing %q", strings.Join(c.args, " "), err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("twinlake %s: %v\nstderr: %s", strings.Join(c.args, " "), err, errOut)
			}
			checkOutput(t, out, c.want, c.wantNot)
			if !strings.Contains(errOut, c.stderr) {
				t.Errorf("twinlake %s: stderr lacks %q:\n%s", strings.Join(c.args, " "), c.stderr, errOut)
			}
		})
		if !ok {
			return // later cases depend on this one's effect
		}
	}
}

// checkOutput checks that out has every want and no wantNot substring.
func checkOutput(t *testing.T, out string, want, wantNot []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	for _, w := range wantNot {
		if strings.Contains(out, w) {
			t.Errorf("output has %q:\n%s", w, out)
		}
	}
}

func TestAdminInfo(t *testing.T) {
	e := newAdminEnv(t, nil)
	e.runCases(t, []adminCase{
		{name: "human", args: []string{"admin", "info", "s1"}, want: []string{
			"Site:       site-a\n", "Deployment: 6f1c1a52-", "Uptime:     1h2m5s\n", "Objects:    42\n",
			"Usage:      5.0MiB\n", "Disk:       60.0GiB free of 100.0GiB",
		}},
		{name: "not admin", args: []string{"admin", "info", "u1"}, wantErr: "AccessDenied"},
		{name: "no alias", args: []string{"admin", "info", "nope"}, wantErr: "no such alias"},
		{name: "alias only", args: []string{"admin", "info"}, wantErr: "accepts 1 arg"},
	})
	out := e.must("admin", "info", "s1", "--json")
	var got adminclient.ServerInfo
	if err := json.Unmarshal([]byte(out), &got); err != nil || !reflect.DeepEqual(got, admintest.Info()) {
		t.Fatalf("--json = %q (%v)", out, err)
	}
}

func TestAdminConfig(t *testing.T) {
	e := newAdminEnv(t, func(c *admin.Config) {
		s, err := config.New(meta.NewMem(), config.Config{LookupEnv: func(k string) (string, bool) {
			return "250ms", k == "TWINLAKE_TABLES_REPLICA_CATALOG_SCAN_INTERVAL"
		}})
		if err != nil {
			t.Fatal(err)
		}
		c.Settings = s
	})
	e.runCases(t, []adminCase{
		{name: "get defaults", args: []string{"admin", "config", "get", "s1", "tables"}, want: []string{
			"replica_catalog=off\n", "replica_catalog_consistency=strict\n", "replica_catalog_scan_interval=250ms\n",
			"replica_catalog_retry_interval=5m\n", "replica_catalog_txn_stale_timeout=15m\n",
		}},
		{name: "set role", args: []string{"admin", "config", "set", "s1", "tables", "replica_catalog=on"},
			want: []string{"Applied tables replica_catalog=on."}},
		{name: "role is on", args: []string{"admin", "config", "get", "s1", "tables"}, want: []string{"replica_catalog=on\n"}},
		{name: "set several", args: []string{"admin", "config", "set", "s1", "replication", "max_retries=3", "retry_base_delay=200ms"},
			want: []string{"Applied replication max_retries=3 retry_base_delay=200ms."}},
		{name: "env override noted", args: []string{"admin", "config", "set", "s1", "tables", "replica_catalog_scan_interval=1m"},
			want:   []string{"replica_catalog_scan_interval=250ms"},
			stderr: "TWINLAKE_TABLES_REPLICA_CATALOG_SCAN_INTERVAL overrides it"},
		{name: "reset to default", args: []string{"admin", "config", "set", "s1", "replication", "max_retries="},
			want: []string{"max_retries=10"}},
		{name: "every problem at once", args: []string{"admin", "config", "set", "s1", "tables", "bogus=1", "replica_catalog=maybe"},
			wantErr: `unknown key "bogus"; replica_catalog: invalid value "maybe" (want on or off) (InvalidConfig, HTTP 400)`},
		{name: "role unchanged by refused set", args: []string{"admin", "config", "get", "s1", "tables"}, want: []string{"replica_catalog=on\n"}},
		{name: "bad argument", args: []string{"admin", "config", "set", "s1", "tables", "replica_catalog"}, wantErr: "want key=value"},
		{name: "unknown subsystem", args: []string{"admin", "config", "get", "s1", "nope"}, wantErr: "UnknownConfigSubsystem"},
		{name: "not admin", args: []string{"admin", "config", "set", "u1", "tables", "replica_catalog=off"}, wantErr: "AccessDenied"},
		{name: "set needs a pair", args: []string{"admin", "config", "set", "s1", "tables"}, wantErr: "requires at least 3 arg"},
	})
	if e.site.Settings.Int(config.SubsysReplication, config.ReplicationMaxRetries) != 10 ||
		e.site.Settings.Duration(config.SubsysReplication, config.ReplicationRetryBaseDelay) != 200*time.Millisecond {
		t.Fatal("server settings differ from what the commands reported")
	}

	out := e.must("admin", "config", "get", "s1", "tables", "--json")
	var got adminclient.SubsysConfig
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.Subsys != "tables" || len(got.Keys) < 5 ||
		got.Keys[0] != (adminclient.ConfigKV{Key: "replica_catalog", Value: "on", Source: "stored", Help: got.Keys[0].Help}) {
		t.Fatalf("--json = %s (%v)", out, err)
	}
}

// syncBuffer is a bytes.Buffer a command writes while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startTrace runs `twinlake admin trace ARGS` until the returned stop is
// called; stop returns the command's error.
func (e adminEnv) startTrace(t *testing.T, args ...string) (*syncBuffer, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	root := NewRoot()
	root.SetArgs(append([]string{"--config-dir", e.dir, "admin", "trace"}, args...))
	root.SetOut(out)
	root.SetErr(out)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	stop := func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(5 * time.Second):
			t.Fatal("trace did not end when interrupted")
			return nil
		}
	}
	t.Cleanup(func() { cancel() })
	return out, stop
}

// waitFor polls cond until it holds or five seconds pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitWithin(t, 5*time.Second, what, cond)
}

// waitWithin polls cond until it holds or d passes.
func waitWithin(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestAdminTrace(t *testing.T) {
	e := newAdminEnv(t, nil)
	events := []trace.Event{
		{Type: trace.TablesScan, FuncName: "catalogScanner.txn", Path: "/wh/ns/t1", Msg: "held"},
		{Type: trace.S3, FuncName: "s3.ReplicationRequest", Path: "/wh/data/f1", StatusCode: 403, Duration: 1500 * time.Microsecond,
			Msg: "not the replica", Error: "warehouse replication rejected", Attrs: map[string]string{"source": "site-b"}},
		{Type: trace.TablesScan, FuncName: "catalogScanner.cycle", Path: "/wh", Duration: 2 * time.Millisecond,
			Msg: "verified 3 tables", Attrs: map[string]string{"verified": "3"}},
		{Type: trace.Storage, FuncName: "storage.WriteShard", Path: "/d1/0a1b", BytesIn: 4096},
	}
	for _, tc := range []struct {
		name    string
		args    []string
		want    []string
		wantNot []string
	}{
		{"plain", []string{"s1"},
			[]string{" catalogScanner.txn /wh/ns/t1 - 0s\n", " s3.ReplicationRequest /wh/data/f1 403 1.5ms\n", " catalogScanner.cycle /wh - 2ms\n"},
			[]string{"msg=", "error=", "source=", "storage.WriteShard"}},
		{"all", []string{"--all", "s1"},
			[]string{" s3.ReplicationRequest /wh/data/f1 403 1.5ms\n", " storage.WriteShard /d1/0a1b - 0s\n"}, nil},
		{"verbose filtered", []string{"-v", "--call", "tables-scan", "--funcname", "catalogScanner.cycle", "s1"},
			[]string{` catalogScanner.cycle /wh - 2ms msg="verified 3 tables" verified="3"` + "\n"},
			[]string{"catalogScanner.txn", "s3.ReplicationRequest"}},
		{"status filter", []string{"-v", "--funcname", "s3.ReplicationRequest", "--status-code", "403", "s1"},
			[]string{` s3.ReplicationRequest /wh/data/f1 403 1.5ms msg="not the replica" error="warehouse replication rejected" source="site-b"`},
			[]string{"catalogScanner"}},
		{"json", []string{"--json", "--call", "s3,tables-scan", "-v", "s1"},
			[]string{`"funcname":"s3.ReplicationRequest"`, `"type":"tables-scan"`, `"msg":"verified 3 tables"`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stop := e.startTrace(t, tc.args...)
			waitFor(t, "the trace subscription", func() bool { return e.site.Trace.Enabled(trace.TablesScan) })
			for _, ev := range events {
				e.site.Trace.Publish(ev)
			}
			last := tc.want[len(tc.want)-1]
			waitFor(t, "the last expected event", func() bool { return strings.Contains(out.String(), last) })
			if err := stop(); err != nil {
				t.Fatalf("interrupted trace returned %v", err)
			}
			got := out.String()
			checkOutput(t, got, tc.want, tc.wantNot)
			if strings.Contains(tc.name, "json") {
				for _, obj := range jsonLines(t, got) {
					if obj["funcname"] == nil || obj["time"] == nil {
						t.Errorf("JSON event lacks funcname or time: %v", obj)
					}
				}
			}
			waitFor(t, "the subscription to end", func() bool { return !e.site.Trace.Enabled(trace.All) })
		})
	}
	e.runCases(t, []adminCase{
		{name: "unknown type", args: []string{"admin", "trace", "--call", "s3,bogus", "s1"}, wantErr: `unknown trace type "bogus"`},
		{name: "bad glob", args: []string{"admin", "trace", "--path", "[", "s1"}, wantErr: "BadRequest"},
		{name: "all and call", args: []string{"admin", "trace", "--all", "--call", "s3", "s1"}, wantErr: "--all and --call"},
		{name: "not admin", args: []string{"admin", "trace", "u1"}, wantErr: "AccessDenied"},
	})
}
