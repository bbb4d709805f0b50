package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// leafCommands lists every runnable command of the tree by its path
// without "twinlake", leaving out the ones that start servers.
func leafCommands(root *cobra.Command) [][]string {
	var out [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			p := append(append([]string{}, path...), sub.Name())
			if len(p) == 1 && (sub.Name() == "server" || sub.Name() == "demo") {
				continue // they start servers
			}
			if sub.HasSubCommands() {
				walk(sub, p)
				continue
			}
			out = append(out, p)
		}
	}
	walk(root, nil)
	return out
}

// Every command, with --json, answers a failure with one JSON line in mc's
// shape ({"status":"error","error":{"message","code"...}}) on standard
// output, camelCase throughout, and a one-line error: here every command is
// pointed at an alias that does not exist, with as many arguments as it
// takes.
func TestEveryCommandFailsInJSON(t *testing.T) {
	e := newSiteEnv(t)
	cmds := leafCommands(NewRoot())
	if len(cmds) < 60 {
		t.Fatalf("found only %d commands: %v", len(cmds), cmds)
	}
	for _, path := range cmds {
		name := strings.Join(path, " ")
		t.Run(name, func(t *testing.T) {
			var out, errMsg string
			for n := 1; n <= 4; n++ {
				args := append(append([]string{}, path...), "--json")
				for i := range n {
					args = append(args, []string{"nosuch/bucket/key", "nosuch/bucket/key2", "nosuch", "x"}[i])
				}
				o, _, err := e.runIn("", args...)
				if err == nil {
					return // a command that needs no site (alias set) succeeded
				}
				out, errMsg = o, err.Error()
				if !strings.Contains(errMsg, "arg(s)") && !strings.Contains(errMsg, "accepts") {
					break
				}
			}
			if strings.Contains(errMsg, "\n") {
				t.Errorf("error is not one line: %q", errMsg)
			}
			lines := checkJSONStyle(t, out)
			last := lines[len(lines)-1]
			body, _ := last["error"].(map[string]any)
			if last["status"] != "error" || body == nil || body["message"] == "" {
				t.Errorf("last line %v is not an error object", last)
			}
		})
	}
}

// The failures people meet first each get one line saying what to do, and
// --json carries the server's code and request ID.
func TestReadableErrors(t *testing.T) {
	e := newSiteEnv(t)
	e.must("alias", "set", "down", "http://127.0.0.1:1", "AKDOWN", "secretsecret")
	e.must("alias", "set", "badkey", e.site.URL, "AKNOBODY", "secretsecret")
	e.must("alias", "set", "badsecret", e.site.URL, e.site.AccessKey, "not-the-secret")
	tests := []struct {
		args      []string
		want      []string
		notWant   []string
		code      string
		withReqID bool
	}{
		{args: []string{"ls", "down/bkt"}, want: []string{"cannot reach http://127.0.0.1:1: connection refused", "is the site running"},
			notWant: []string{"dial tcp"}, code: "Unreachable"},
		{args: []string{"admin", "info", "down"}, want: []string{"cannot reach http://127.0.0.1:1", "is the site running"},
			notWant: []string{"dial tcp"}, code: "Unreachable"},
		{args: []string{"ls", "badkey/bkt"}, want: []string{"InvalidAccessKeyId", "check it with 'twinlake alias list'"}, code: "InvalidAccessKeyId", withReqID: true},
		{args: []string{"ls", "badsecret/bkt"}, want: []string{"SignatureDoesNotMatch", "secret key is wrong"}, code: "SignatureDoesNotMatch", withReqID: true},
		{args: []string{"ls", "s1/nosuchbucket"}, want: []string{"NoSuchBucket", "'twinlake ls ALIAS' lists the buckets"}, code: "NoSuchBucket", withReqID: true},
		{args: []string{"ls", "nosuch/bkt"}, want: []string{`no such alias "nosuch"`, "twinlake alias set nosuch"}, code: "NoSuchAlias"},
		{args: []string{"admin", "user", "info", "s1", "nobody"}, want: []string{"nobody"}, withReqID: true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := e.run(tt.args...)
			if err == nil {
				t.Fatal("succeeded")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("not one line: %q", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(msg, w) {
					t.Errorf("error %q has %q", msg, w)
				}
			}
			out, _, _ := e.runIn("", append(tt.args, "--json")...)
			lines := checkJSONStyle(t, out)
			body, _ := lines[len(lines)-1]["error"].(map[string]any)
			if tt.code != "" && body["code"] != tt.code {
				t.Errorf("--json code = %v, want %s (%s)", body["code"], tt.code, out)
			}
			if id, _ := body["requestId"].(string); tt.withReqID && id == "" {
				t.Errorf("--json error has no request ID: %s", out)
			}
		})
	}
}
