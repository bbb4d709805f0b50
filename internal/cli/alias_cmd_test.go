package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cliEnv runs twinlake commands through NewRoot against one client config
// directory.
type cliEnv struct {
	t   testing.TB
	dir string
}

func newCLIEnv(t testing.TB) cliEnv {
	return cliEnv{t: t, dir: t.TempDir()}
}

// runIn runs one command line with stdin; it returns stdout and stderr.
func (e cliEnv) runIn(stdin string, args ...string) (string, string, error) {
	e.t.Helper()
	var out, errOut bytes.Buffer
	root := NewRoot()
	root.SetArgs(append([]string{"--config-dir", e.dir}, args...))
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetIn(strings.NewReader(stdin))
	err := Execute(e.t.Context(), root)
	return out.String(), errOut.String(), err
}

// run runs one command line with empty stdin and returns stdout.
func (e cliEnv) run(args ...string) (string, error) {
	e.t.Helper()
	out, _, err := e.runIn("", args...)
	return out, err
}

// must runs one command line and fails the test if it fails.
func (e cliEnv) must(args ...string) string {
	e.t.Helper()
	out, errOut, err := e.runIn("", args...)
	if err != nil {
		e.t.Fatalf("twinlake %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// jsonLines decodes one JSON object per line.
func jsonLines(t testing.TB, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for line := range strings.Lines(out) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q is not a JSON object: %v", line, err)
		}
		objs = append(objs, m)
	}
	return objs
}

func TestAliasCommands(t *testing.T) {
	e := newCLIEnv(t)
	const secret = "wJalrXUtnFEMI-K7MDENG"
	tests := []struct {
		name    string
		args    []string
		wantErr string   // substring of the error; "" means success
		want    []string // substrings of stdout
		notWant []string
	}{
		{"set", []string{"alias", "set", "site1", "http://127.0.0.1:9000", "admin", secret}, "",
			[]string{"Added `site1` successfully."}, nil},
		{"set https trailing slash", []string{"alias", "set", "dr", "https://dr.example.com:9443/", "ak", secret}, "", nil, nil},
		{"set json", []string{"alias", "set", "site2", "http://127.0.0.1:9001", "admin2", secret, "--json"}, "",
			[]string{`"status":"success"`, `"alias":"site2"`, `"secretKey":"wJa****"`}, []string{secret}},
		{"list", []string{"alias", "list"}, "",
			[]string{"site1", "http://127.0.0.1:9000", "admin", "wJa****", "https://dr.example.com:9443\n"}, []string{secret}},
		{"list one", []string{"alias", "list", "site2"}, "", []string{"site2", "admin2"}, []string{"site1", secret}},
		{"list missing", []string{"alias", "list", "nope"}, "no such alias", nil, nil},
		{"bad scheme", []string{"alias", "set", "x", "ftp://h:1", "a", "b"}, "invalid URL", nil, nil},
		{"no host", []string{"alias", "set", "x", "http://", "a", "b"}, "invalid URL", nil, nil},
		{"path", []string{"alias", "set", "x", "http://h:1/s3", "a", "b"}, "without a path", nil, nil},
		{"bad name", []string{"alias", "set", "a/b", "http://h:1", "a", "b"}, "invalid alias name", nil, nil},
		{"empty secret", []string{"alias", "set", "x", "http://h:1", "a", ""}, "must not be empty", nil, nil},
		{"wrong arg count", []string{"alias", "set", "x", "http://h:1"}, "accepts 4 arg(s)", nil, nil},
		{"remove", []string{"alias", "remove", "site1"}, "", []string{"Removed `site1` successfully."}, nil},
		{"remove again", []string{"alias", "remove", "site1"}, "no such alias", nil, nil},
		{"list after remove", []string{"alias", "list"}, "", []string{"site2", "dr"}, []string{"site1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := e.run(tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("error = %v\n%s", err, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}

	st, err := os.Stat(filepath.Join(e.dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("config.json mode = %v, want 0600", st.Mode().Perm())
	}
	objs := jsonLines(t, e.must("alias", "list", "--json"))
	if len(objs) != 2 || objs[0]["alias"] != "dr" || objs[0]["url"] != "https://dr.example.com:9443" || objs[1]["alias"] != "site2" {
		t.Errorf("alias list --json = %v", objs)
	}
}

func TestAliasConfigDirFromEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TWINLAKE_CONFIG_DIR", dir)
	root := NewRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"alias", "set", "s", "http://127.0.0.1:1", "a", "secretsecret"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err != nil {
		t.Errorf("config not written to $TWINLAKE_CONFIG_DIR: %v", err)
	}
}
