package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twinlake/twinlake/internal/testsite"
)

// TestAdminIAMCommands drives every user, group, policy and access key
// command against a real site, bad input included: each refusal is one
// line naming the problem and changes nothing.
func TestAdminIAMCommands(t *testing.T) {
	site := testsite.Start(t)
	e := adminEnv{cliEnv: newCLIEnv(t)}
	e.must("alias", "set", "s1", site.URL, site.AccessKey, site.SecretKey)
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("read-logs.json", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:GetObject","s3:ListBucket"],"Resource":["arn:aws:s3:::logs","arn:aws:s3:::logs/*"]}]}`)
	unknown := write("unknown.json", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"*"},{"Effect":"Allow","Action":"s3:Fly","Resource":"*"}]}`)
	malformed := write("malformed.json", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow"`)

	e.runCases(t, []adminCase{
		{name: "user add", args: []string{"admin", "user", "add", "s1", "alice", "alice-secret"}, want: []string{"Added user `alice`"}},
		{name: "user add duplicate", args: []string{"admin", "user", "add", "s1", "alice", "other-secret"}, wantErr: "UserAlreadyExists"},
		{name: "user add short secret", args: []string{"admin", "user", "add", "s1", "bob", "short"}, wantErr: "weak secret: secret key must be 8 to 128 characters (InvalidSecretKey"},
		{name: "user add bob", args: []string{"admin", "user", "add", "s1", "bob", "bob-secret-1"}},
		{name: "user ls", args: []string{"admin", "user", "ls", "s1"}, want: []string{"alice", "bob", "enabled"}},
		{name: "user disable", args: []string{"admin", "user", "disable", "s1", "bob"}, want: []string{"disabled"}},
		{name: "user info disabled", args: []string{"admin", "user", "info", "s1", "bob"}, want: []string{"Status: disabled"}},
		{name: "user enable", args: []string{"admin", "user", "enable", "s1", "bob"}},
		{name: "user info missing", args: []string{"admin", "user", "info", "s1", "nobody"}, wantErr: "NoSuchUser"},
		{name: "policy create malformed", args: []string{"admin", "policy", "create", "s1", "bad", malformed}, wantErr: "MalformedPolicy"},
		{name: "policy create unknown action", args: []string{"admin", "policy", "create", "s1", "bad", unknown}, wantErr: `Statement[1].Action: unknown action "s3:Fly"`},
		{name: "policy create", args: []string{"admin", "policy", "create", "s1", "read-logs", good}, want: []string{"Created policy `read-logs`"}},
		{name: "policy ls", args: []string{"admin", "policy", "ls", "s1"}, want: []string{"consoleAdmin", "read-logs", "readonly", "tablesReadWrite"}, wantNot: []string{"bad"}},
		{name: "policy info", args: []string{"admin", "policy", "info", "s1", "read-logs"}, want: []string{`"s3:ListBucket"`}},
		{name: "attach missing policy", args: []string{"admin", "policy", "attach", "s1", "nope", "--user", "alice"}, wantErr: "NoSuchPolicy"},
		{name: "attach needs one entity", args: []string{"admin", "policy", "attach", "s1", "readonly"}, wantErr: "exactly one of --user or --group"},
		{name: "attach user", args: []string{"admin", "policy", "attach", "s1", "read-logs", "--user", "alice"}, want: []string{"Attached policies `read-logs` to user `alice`"}},
		{name: "group add", args: []string{"admin", "group", "add", "s1", "analysts", "alice", "bob"}},
		{name: "group add missing member", args: []string{"admin", "group", "add", "s1", "analysts", "ghost"}, wantErr: "NoSuchUser"},
		{name: "attach group", args: []string{"admin", "policy", "attach", "s1", "readonly", "--group", "analysts"}},
		{name: "group info", args: []string{"admin", "group", "info", "s1", "analysts"}, want: []string{"Members: alice,bob", "Policy: readonly"}},
		{name: "group ls", args: []string{"admin", "group", "ls", "s1"}, want: []string{"enabled   analysts"}},
		{name: "group disable", args: []string{"admin", "group", "disable", "s1", "analysts"}},
		{name: "group enable", args: []string{"admin", "group", "enable", "s1", "analysts"}},
		{name: "entities", args: []string{"admin", "policy", "entities", "s1"}, want: []string{"Policy: read-logs", "User Mappings: alice", "Group Mappings: analysts"}},
		{name: "rm attached policy", args: []string{"admin", "policy", "rm", "s1", "read-logs"}, wantErr: "PolicyInUse"},
		{name: "group rm non-empty", args: []string{"admin", "group", "rm", "s1", "analysts"}, wantErr: "GroupNotEmpty"},
		{name: "group rm member", args: []string{"admin", "group", "rm", "s1", "analysts", "bob"}, want: []string{"Removed members `bob`"}},
		{name: "user info groups", args: []string{"admin", "user", "info", "s1", "alice"}, want: []string{"PolicyName: read-logs", "MemberOf: analysts"}},
		{name: "accesskey for missing user", args: []string{"admin", "accesskey", "create", "s1", "ghost"}, wantErr: "NoSuchUser"},
		{name: "accesskey expiry past", args: []string{"admin", "accesskey", "create", "s1", "alice", "--expiry", "-1h"}, wantErr: "InvalidExpiry"},
		{name: "accesskey bad session policy", args: []string{"admin", "accesskey", "create", "s1", "alice", "--policy", unknown}, wantErr: "MalformedPolicy"},
		{name: "accesskey create", args: []string{"admin", "accesskey", "create", "s1", "alice", "--access-key", "dashkey01", "--secret-key", "dash-secret-1",
			"--policy", good, "--expiry", "720h", "--name", "grafana", "--description", "dashboards"}, want: []string{"Access Key: dashkey01", "Secret Key: dash-secret-1"}},
		{name: "accesskey create duplicate", args: []string{"admin", "accesskey", "create", "s1", "alice", "--access-key", "dashkey01"}, wantErr: "AccessKeyAlreadyExists"},
		{name: "accesskey ls", args: []string{"admin", "accesskey", "ls", "s1", "alice"}, want: []string{"dashkey01", "grafana", "expires"}},
		{name: "accesskey info", args: []string{"admin", "accesskey", "info", "s1", "dashkey01"}, want: []string{"ParentUser: alice", "Description: dashboards", "embedded:"}, wantNot: []string{"dash-secret-1"}},
		{name: "accesskey edit past expiry", args: []string{"admin", "accesskey", "edit", "s1", "dashkey01", "--expiry", "-2h"}, wantErr: "InvalidExpiry"},
		{name: "accesskey edit", args: []string{"admin", "accesskey", "edit", "s1", "dashkey01", "--name", "grafana-prod", "--expiry", "48h"}, want: []string{"Edited access key `dashkey01`"}},
		{name: "accesskey info edited", args: []string{"admin", "accesskey", "info", "s1", "dashkey01"}, want: []string{"Name: grafana-prod", "embedded:"}},
		{name: "accesskey disable", args: []string{"admin", "accesskey", "disable", "s1", "dashkey01"}},
		{name: "accesskey info disabled", args: []string{"admin", "accesskey", "info", "s1", "dashkey01"}, want: []string{"Status: disabled"}},
		{name: "accesskey enable", args: []string{"admin", "accesskey", "enable", "s1", "dashkey01"}},
		{name: "accesskey rm", args: []string{"admin", "accesskey", "rm", "s1", "dashkey01"}},
		{name: "accesskey rm missing", args: []string{"admin", "accesskey", "rm", "s1", "dashkey01"}, wantErr: "NoSuchAccessKey"},
		{name: "detach", args: []string{"admin", "policy", "detach", "s1", "read-logs", "--user", "alice"}},
		{name: "detach again", args: []string{"admin", "policy", "detach", "s1", "read-logs", "--user", "alice"}, wantErr: "PolicyNotAttached"},
		{name: "policy rm", args: []string{"admin", "policy", "rm", "s1", "read-logs"}},
		{name: "user rm", args: []string{"admin", "user", "rm", "s1", "bob"}},
		{name: "user ls after rm", args: []string{"admin", "user", "ls", "s1"}, want: []string{"alice"}, wantNot: []string{"bob"}},
	})

	// A user without an admin policy is refused with the admin JSON error;
	// consoleAdmin opens the admin API to it.
	e.must("alias", "set", "alice", site.URL, "alice", "alice-secret")
	if _, err := e.run("admin", "user", "ls", "alice"); err == nil || !strings.Contains(err.Error(), "AccessDenied") {
		t.Fatalf("non-admin user ls: %v", err)
	}
	e.must("admin", "policy", "attach", "s1", "consoleAdmin", "--user", "alice")
	if out := e.must("admin", "user", "ls", "alice"); !strings.Contains(out, "alice") {
		t.Fatalf("consoleAdmin user ls:\n%s", out)
	}
	// Everything survives a restart.
	site.Restart()
	if out := e.must("admin", "user", "info", "s1", "alice"); !strings.Contains(out, "consoleAdmin") || !strings.Contains(out, "MemberOf: analysts") {
		t.Fatalf("after restart:\n%s", out)
	}
}
