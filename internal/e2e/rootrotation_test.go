package e2e

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/twinlake/twinlake/internal/testsite"
)

func s3As(addr, access, secret, token string) *s3.Client {
	return s3.New(s3.Options{BaseEndpoint: aws.String("http://" + addr), Region: "us-east-1", UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(access, secret, token)})
}

func readKey(ctx context.Context, c *s3.Client, bucket, key string) (string, error) {
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return "", err
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	return string(b), err
}

// refusedStart runs the server with env and expects it to exit at once
// with an error naming want.
func refusedStart(t *testing.T, bin, dir, addr string, want string, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "server", "--address", addr, "--dir", dir)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err == nil || ctx.Err() != nil || !strings.Contains(string(out), want) {
		t.Fatalf("server with %v: %v, want a refusal naming %q:\n%s", env, err, want, out)
	}
	return string(out)
}

// TestRootPasswordRotationThroughTheBinary: the operator changes the root
// password of a real server process by restarting it with
// TWINLAKE_ROOT_PASSWORD_PREVIOUS; a user made by the CLI before keeps
// signing with aws-sdk-go-v2 (and assumes a role) after; without the
// previous password, or with a wrong one, the server exits with a clear
// message and the data directory is as it was.
func TestRootPasswordRotationThroughTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := testsite.BuildBinary(t)
	dir := filepath.Join(t.TempDir(), "site")
	addr := testsite.FreeAddr(t)
	const user, passA, passB = "rotation-admin", "root-password-A", "root-password-B"
	envA := []string{"TWINLAKE_ROOT_USER=" + user, "TWINLAKE_ROOT_PASSWORD=" + passA}
	envB := []string{"TWINLAKE_ROOT_USER=" + user, "TWINLAKE_ROOT_PASSWORD=" + passB}

	p := testsite.StartProcess(t, bin, dir, addr, envA...)
	op := &operator{t: t, bin: bin, cfg: filepath.Join(t.TempDir(), "client")}
	op.must("alias", "set", "site", "http://"+addr, user, passA)
	op.must("admin", "user", "add", "site", "alice", "alice-secret-1")
	op.must("admin", "policy", "attach", "site", "readwrite", "--user", "alice")
	op.must("mb", "site/data")
	ctx := context.Background()
	if _, err := s3As(addr, "alice", "alice-secret-1", "").PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String("data"), Key: aws.String("k"), Body: strings.NewReader("kept")}); err != nil {
		t.Fatal(err)
	}
	p.Kill(t)

	out := refusedStart(t, bin, dir, addr, "TWINLAKE_ROOT_PASSWORD_PREVIOUS", envB...)
	out += refusedStart(t, bin, dir, addr, "nothing was changed", append(envB, "TWINLAKE_ROOT_PASSWORD_PREVIOUS=wrong-password")...)
	for _, secret := range []string{passA, passB, "wrong-password", "alice-secret-1"} {
		if strings.Contains(out, secret) {
			t.Fatalf("the refusal shows %q:\n%s", secret, out)
		}
	}

	p = testsite.StartProcess(t, bin, dir, addr, append(envB, "TWINLAKE_ROOT_PASSWORD_PREVIOUS="+passA)...)
	if got, err := readKey(ctx, s3As(addr, "alice", "alice-secret-1", ""), "data", "k"); err != nil || got != "kept" {
		t.Fatalf("alice after the rotation: %q, %v", got, err)
	}
	role, err := sts.New(sts.Options{BaseEndpoint: aws.String("http://" + addr), Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("alice", "alice-secret-1", "")}).
		AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::000000000000:role/x"), RoleSessionName: aws.String("s")})
	if err != nil {
		t.Fatal(err)
	}
	c := role.Credentials
	if got, err := readKey(ctx, s3As(addr, *c.AccessKeyId, *c.SecretAccessKey, *c.SessionToken), "data", "k"); err != nil || got != "kept" {
		t.Fatalf("alice's session after the rotation: %q, %v", got, err)
	}
	if _, err := readKey(ctx, s3As(addr, user, passA, ""), "data", "k"); err == nil {
		t.Fatal("the old root password still signs")
	}
	p.Kill(t)
	// Once rotated, the new password alone starts the site.
	testsite.StartProcess(t, bin, dir, addr, envB...)
	if got, err := readKey(ctx, s3As(addr, "alice", "alice-secret-1", ""), "data", "k"); err != nil || got != "kept" {
		t.Fatalf("alice after a second restart: %q, %v", got, err)
	}
}
