package cli

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/twinlake/twinlake/internal/testsite"
)

// TestAliasWithSessionToken: an alias holding a temporary credential of
// STS AssumeRole with its session token signs every command with it: S3
// verbs with the session's rights, admin calls refused as the session's
// user (AccessDenied, not an unknown key), and the token never printed
// whole; without the token the same key is unknown.
func TestAliasWithSessionToken(t *testing.T) {
	site := testsite.Start(t)
	e := newCLIEnv(t)
	e.must("alias", "set", "s1", site.URL, site.AccessKey, site.SecretKey)
	e.must("admin", "user", "add", "s1", "alice", "alice-secret-1")
	e.must("admin", "policy", "attach", "s1", "readwrite", "--user", "alice")
	e.must("mb", "s1/data")

	role, err := sts.New(sts.Options{BaseEndpoint: aws.String(site.URL), Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("alice", "alice-secret-1", "")}).
		AssumeRole(t.Context(), &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::000000000000:role/x"), RoleSessionName: aws.String("cli")})
	if err != nil {
		t.Fatal(err)
	}
	c := role.Credentials
	e.must("alias", "set", "temp", site.URL, *c.AccessKeyId, *c.SecretAccessKey, "--session-token", *c.SessionToken)
	out, errOut, err := e.runIn("hello", "pipe", "temp/data/from-session")
	if err != nil {
		t.Fatalf("pipe with the session: %v\n%s%s", err, out, errOut)
	}
	if out := e.must("cat", "temp/data/from-session"); out != "hello" {
		t.Fatalf("cat = %q", out)
	}
	if _, err := e.run("admin", "user", "ls", "temp"); err == nil || !strings.Contains(err.Error(), "AccessDenied") {
		t.Fatalf("admin call as the session: %v, want AccessDenied", err)
	}
	list := e.must("alias", "list", "temp")
	if strings.Contains(list, *c.SessionToken) || !strings.Contains(list, "SessionToken : "+(*c.SessionToken)[:3]+"****") {
		t.Fatalf("alias list:\n%s", list)
	}

	t.Setenv("TWINLAKE_SESSION_TOKEN", "")
	e.must("alias", "set", "notoken", site.URL, *c.AccessKeyId, *c.SecretAccessKey)
	if _, err := e.run("ls", "notoken/data"); err == nil || !strings.Contains(err.Error(), "InvalidAccessKeyId") {
		t.Fatalf("the temporary key without its token: %v", err)
	}
	t.Setenv("TWINLAKE_SESSION_TOKEN", *c.SessionToken)
	e.must("alias", "set", "fromenv", site.URL, *c.AccessKeyId, *c.SecretAccessKey)
	if out := e.must("cat", "fromenv/data/from-session"); out != "hello" {
		t.Fatalf("cat with the token from the environment = %q", out)
	}
}
