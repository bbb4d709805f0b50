package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
)

// TestEncrypt: encrypt set sse-s3 makes a bucket encrypt new objects by
// default (the object reads back as written and reports SSE-S3), info
// shows it, clear removes it (new objects are stored plain), and sse-kms
// is refused.
func TestEncrypt(t *testing.T) {
	e := newSiteEnv(t)
	e.must("mb", "s1/secure")
	put := func(key string) minio.ObjectInfo {
		t.Helper()
		if _, err := e.c.PutObject(t.Context(), "secure", key, strings.NewReader("secret"), 6, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
		obj, err := e.c.GetObject(t.Context(), "secure", key, minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer obj.Close()
		if b, err := io.ReadAll(obj); err != nil || string(b) != "secret" {
			t.Fatalf("read %s: %q %v", key, b, err)
		}
		info, err := obj.Stat()
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	if out := e.must("encrypt", "info", "s1/secure"); !strings.Contains(out, "not enabled") {
		t.Fatalf("encrypt info before set: %s", out)
	}
	e.must("encrypt", "set", "sse-s3", "s1/secure")
	if out := e.must("encrypt", "info", "--json", "s1/secure"); !strings.Contains(out, `"algorithm":"sse-s3"`) {
		t.Fatalf("encrypt info --json: %s", out)
	}
	if got := put("enc").Metadata.Get("X-Amz-Server-Side-Encryption"); got != "AES256" {
		t.Fatalf("a new object's encryption: %q, want AES256", got)
	}
	e.must("encrypt", "clear", "s1/secure")
	if got := put("plain").Metadata.Get("X-Amz-Server-Side-Encryption"); got != "" {
		t.Fatalf("an object after clear: encryption %q", got)
	}
	if out := e.must("encrypt", "info", "s1/secure"); !strings.Contains(out, "not enabled") {
		t.Fatalf("encrypt info after clear: %s", out)
	}
	if _, err := e.run("encrypt", "set", "sse-kms", "s1/secure"); err == nil || !strings.Contains(err.Error(), "only sse-s3") {
		t.Fatalf("encrypt set sse-kms: %v", err)
	}
	if _, err := e.run("encrypt", "set", "sse-s3", "s1/nosuch"); err == nil || !strings.Contains(err.Error(), "NoSuchBucket") {
		t.Fatalf("encrypt set on a missing bucket: %v", err)
	}
}
