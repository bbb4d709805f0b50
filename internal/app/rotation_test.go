package app_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/app"
	"github.com/twinlake/twinlake/internal/iam"
	"github.com/twinlake/twinlake/internal/testsite"
)

func sdkS3(site *testsite.Site, access, secret, token string) *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(site.URL), Region: "us-east-1", UsePathStyle: true, HTTPClient: site.HTTPClient,
		Credentials: credentials.NewStaticCredentialsProvider(access, secret, token),
	})
}

// withRoot runs a site on dir with the given root password (and previous
// ones).
func withRoot(dir, password string, previous ...string) testsite.Option {
	return testsite.WithApp(func(c *app.Config) {
		c.Dir, c.RootUser, c.RootPassword, c.PreviousRootPasswords = dir, "testroot", password, previous
	})
}

// readObject reads bucket/key with the given credentials.
func readObject(ctx context.Context, c *s3.Client, bucket, key string) (string, error) {
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return "", err
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	return string(b), err
}

// TestRootPasswordRotation runs real sites on one data directory: users and
// access keys created under root password A keep signing with aws-sdk-go-v2
// after the site restarts with root password B and A as the previous one,
// and may assume a role there; a restart under B without A, or with a wrong
// previous password, is refused with a clear error and destroys nothing;
// once rotated, B alone starts and A no longer does.
func TestRootPasswordRotation(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const passA, passB = "root-password-A", "root-password-B"

	site := testsite.Start(t, withRoot(dir, passA))
	adm, err := adminclient.New(site.URL, adminclient.Credentials{AccessKey: site.AccessKey, SecretKey: site.SecretKey}, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := adm.AddUser(ctx, "alice", "alice-secret-1"); err != nil {
		t.Fatal(err)
	}
	if err := adm.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{"readwrite"}, User: "alice"}); err != nil {
		t.Fatal(err)
	}
	key, err := adm.CreateAccessKey(ctx, adminclient.AccessKeyCreateRequest{User: "alice", AccessKey: "alice-key-1", SecretKey: "alice-key-secret"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sdkS3(site, site.AccessKey, site.SecretKey, "").CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("data")}); err != nil {
		t.Fatal(err)
	}
	if _, err := sdkS3(site, "alice", "alice-secret-1", "").PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String("data"), Key: aws.String("k"), Body: strings.NewReader("before rotation")}); err != nil {
		t.Fatal(err)
	}
	site.Stop()

	// Refused: B without A, and B with a wrong previous password.
	for _, prev := range [][]string{nil, {"not-the-old-password"}} {
		_, err := app.New(app.Config{Address: "127.0.0.1:0", Dir: dir, RootUser: "testroot", RootPassword: passB, PreviousRootPasswords: prev})
		if !errors.Is(err, iam.ErrRootChanged) || !strings.Contains(err.Error(), "TWINLAKE_ROOT_PASSWORD_PREVIOUS") {
			t.Fatalf("start under a new root with previous %q: %v, want a refusal naming the remedy", prev, err)
		}
		if strings.Contains(err.Error(), "not-the-old-password") || strings.Contains(err.Error(), passB) {
			t.Fatalf("the refusal shows a password: %v", err)
		}
	}
	// Nothing destroyed: A still starts and alice still signs.
	site = testsite.Start(t, withRoot(dir, passA))
	if got, err := readObject(ctx, sdkS3(site, "alice", "alice-secret-1", ""), "data", "k"); err != nil || got != "before rotation" {
		t.Fatalf("after the refusals, alice reads %q, %v", got, err)
	}
	site.Stop()

	// The rotation.
	site = testsite.Start(t, withRoot(dir, passB, passA))
	if site.SecretKey != passB {
		t.Fatalf("root secret %q", site.SecretKey)
	}
	for _, c := range []struct{ access, secret string }{{"alice", "alice-secret-1"}, {key.AccessKey, "alice-key-secret"}, {"testroot", passB}} {
		if got, err := readObject(ctx, sdkS3(site, c.access, c.secret, ""), "data", "k"); err != nil || got != "before rotation" {
			t.Fatalf("after rotation, %s reads %q, %v", c.access, got, err)
		}
	}
	if _, err := readObject(ctx, sdkS3(site, "testroot", passA, ""), "data", "k"); err == nil {
		t.Fatal("the old root password still signs")
	}
	// STS: alice's access key assumes a role and writes with it.
	stsc := sts.New(sts.Options{BaseEndpoint: aws.String(site.URL), Region: "us-east-1", HTTPClient: site.HTTPClient,
		Credentials: credentials.NewStaticCredentialsProvider(key.AccessKey, "alice-key-secret", "")})
	role, err := stsc.AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::000000000000:role/any"), RoleSessionName: aws.String("rotation")})
	if err != nil {
		t.Fatal(err)
	}
	tmp := sdkS3(site, *role.Credentials.AccessKeyId, *role.Credentials.SecretAccessKey, *role.Credentials.SessionToken)
	if _, err := tmp.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("data"), Key: aws.String("k2"), Body: strings.NewReader("after rotation")}); err != nil {
		t.Fatal(err)
	}
	// A user created after the rotation.
	adm, err = adminclient.New(site.URL, adminclient.Credentials{AccessKey: "testroot", SecretKey: passB}, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := adm.AddUser(ctx, "bob", "bob-secret-1"); err != nil {
		t.Fatal(err)
	}
	if err := adm.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{"readonly"}, User: "bob"}); err != nil {
		t.Fatal(err)
	}
	site.Stop()

	// B alone now starts; A no longer does.
	site = testsite.Start(t, withRoot(dir, passB))
	for _, c := range []struct{ access, secret, key, want string }{
		{"alice", "alice-secret-1", "k2", "after rotation"}, {"bob", "bob-secret-1", "k", "before rotation"}, {key.AccessKey, "alice-key-secret", "k", "before rotation"},
	} {
		if got, err := readObject(ctx, sdkS3(site, c.access, c.secret, ""), "data", c.key); err != nil || got != c.want {
			t.Fatalf("restarted under B, %s reads %q, %v", c.access, got, err)
		}
	}
	site.Stop()
	if _, err := app.New(app.Config{Address: "127.0.0.1:0", Dir: dir, RootUser: "testroot", RootPassword: passA}); !errors.Is(err, iam.ErrRootChanged) {
		t.Fatalf("start under the old root after the rotation: %v", err)
	}
	// No secret in the clear anywhere in the data directory.
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, s := range []string{"alice-secret-1", "alice-key-secret", "bob-secret-1", passA, passB} {
			if strings.Contains(string(b), s) {
				t.Errorf("%s holds %q in the clear", p, s)
			}
		}
		return nil
	})
}

// TestGeneratedRootReplaced: a site first started with a generated root
// credential (stored in the data directory) and later given one in the
// environment re-wraps its IAM key by itself, both being known.
func TestGeneratedRootReplaced(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	site := testsite.Start(t, testsite.WithApp(func(c *app.Config) { c.Dir, c.RootUser, c.RootPassword = dir, "", "" }))
	adm, err := adminclient.New(site.URL, adminclient.Credentials{AccessKey: site.AccessKey, SecretKey: site.SecretKey}, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := adm.AddUser(ctx, "carol", "carol-secret-1"); err != nil {
		t.Fatal(err)
	}
	if err := adm.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{"readwrite"}, User: "carol"}); err != nil {
		t.Fatal(err)
	}
	site.Stop()
	site = testsite.Start(t, withRoot(dir, "root-from-the-env"))
	if _, err := sdkS3(site, "carol", "carol-secret-1", "").CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("carols")}); err != nil {
		t.Fatalf("carol after the root came from the environment: %v", err)
	}
}
