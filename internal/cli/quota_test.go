package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/testsite"
)

// TestQuota: quota set, info and clear through the binary's commands: a
// client PUT that would take the bucket past its hard quota is refused
// with XMinioAdminBucketQuotaExceeded (once the bucket's usage, read at
// most a second before, counts what it holds); info shows the quota and
// the usage; clear lifts it; bad sizes and non-bucket targets are refused.
func TestQuota(t *testing.T) {
	e := newSiteEnv(t)
	e.must("mb", "s1/uploads")
	e.must("mb", "s1/other")
	if out := e.must("quota", "set", "s1/uploads", "--size", "100KiB"); !strings.Contains(out, "Successfully set bucket quota of 100.0KiB on `s1/uploads`") {
		t.Fatalf("quota set: %s", out)
	}
	put := func(bucket, key string, size int) error {
		_, err := e.c.PutObject(t.Context(), bucket, key, bytes.NewReader(make([]byte, size)), int64(size), minio.PutObjectOptions{})
		return err
	}
	if err := put("uploads", "a", 60<<10); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 10*time.Second, func() error {
		err := put("uploads", "b", 60<<10)
		if minio.ToErrorResponse(err).Code == "XMinioAdminBucketQuotaExceeded" {
			return nil
		}
		return errors.New("the PUT past the quota is not refused yet")
	})
	if err := put("other", "big", 200<<10); err != nil {
		t.Fatalf("a bucket without a quota: %v", err)
	}
	out := e.must("quota", "info", "s1/uploads")
	if !strings.Contains(out, "has a hard quota of 100.0KiB") {
		t.Fatalf("quota info: %s", out)
	}
	if js := e.must("quota", "info", "--json", "s1/uploads"); !strings.Contains(js, `"quota":102400`) || !strings.Contains(js, `"quotaType":"hard"`) {
		t.Fatalf("quota info --json: %s", js)
	}
	if out := e.must("quota", "clear", "s1/uploads"); !strings.Contains(out, "Successfully cleared") {
		t.Fatalf("quota clear: %s", out)
	}
	if err := put("uploads", "c", 60<<10); err != nil {
		t.Fatalf("PUT with the quota cleared: %v", err)
	}
	if out := e.must("quota", "info", "s1/uploads"); !strings.Contains(out, "has no quota") {
		t.Fatalf("quota info after clear: %s", out)
	}
	for _, c := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"quota", "set", "s1/uploads"}, "needs --size"},
		{[]string{"quota", "set", "s1/uploads", "--size", "lots"}, "want a positive size"},
		{[]string{"quota", "set", "s1/uploads/key", "--size", "1MiB"}, "a quota is a bucket's"},
		{[]string{"quota", "set", "s1/nosuch", "--size", "1MiB"}, "NoSuchBucket"},
		{[]string{"quota", "info", "s1/nosuch"}, "NoSuchBucket"},
	} {
		if _, err := e.run(c.args...); err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("twinlake %s: %v, want %q", strings.Join(c.args, " "), err, c.wantErr)
		}
	}
}
