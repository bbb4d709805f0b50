package objects

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// TestBucketQuota: a client write that would take its bucket past its quota
// is refused (PUT of a known or an unknown size, a copy, an upload part)
// and adds nothing to the usage; clearing the quota lifts it; a peer's
// quota arrives with the bucket; bounds are checked.
func TestBucketQuota(t *testing.T) {
	ctx := context.Background()
	l := newLayer(t)
	if err := l.CreateBucket(ctx, "quota"); err != nil {
		t.Fatal(err)
	}
	if err := l.SetBucketQuota(ctx, "quota", 100<<10); err != nil {
		t.Fatal(err)
	}
	put := func(key string, size int, known bool) error {
		body := bytes.Repeat([]byte("x"), size)
		opts := PutOptions{Size: int64(size)}
		if !known {
			opts.Size = -1
		}
		_, err := l.PutObject(ctx, "quota", key, bytes.NewReader(body), opts)
		return err
	}
	fresh := func() { l.quota.mu.Lock(); l.quota.m = nil; l.quota.mu.Unlock() } // past quotaUsageTTL
	if err := put("a", 60<<10, true); err != nil {
		t.Fatal(err)
	}
	fresh()
	if err := put("b", 60<<10, true); !errors.Is(err, ErrQuotaExceeded) {
		t.Fatalf("PUT past the quota: %v", err)
	}
	if err := put("b", 60<<10, false); !errors.Is(err, ErrQuotaExceeded) {
		t.Fatalf("PUT of an unknown size past the quota: %v", err)
	}
	if _, _, err := l.CopyObject(ctx, "quota", "a", "", "quota", "copy", CopyOptions{}); !errors.Is(err, ErrQuotaExceeded) {
		t.Fatalf("copy past the quota: %v", err)
	}
	up, err := l.CreateMultipartUpload(ctx, "quota", "mp", PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.UploadPart(ctx, "quota", "mp", up.UploadID, 1, bytes.NewReader(make([]byte, 60<<10)), PutOptions{Size: 60 << 10}); !errors.Is(err, ErrQuotaExceeded) {
		t.Fatalf("upload part past the quota: %v", err)
	}
	if err := put("small", 30<<10, true); err != nil {
		t.Fatalf("a write within the quota: %v", err)
	}
	if u, err := l.BucketUsage("quota"); err != nil || u.Objects != 2 || u.Bytes != 90<<10 {
		t.Fatalf("usage %+v %v, want the two objects written", u, err)
	}

	if err := l.SetBucketQuota(ctx, "quota", 0); err != nil {
		t.Fatal(err)
	}
	if err := put("b", 60<<10, true); err != nil {
		t.Fatalf("PUT with the quota cleared: %v", err)
	}

	b, _ := l.Bucket(ctx, "quota")
	peer := b
	peer.Quota = 1 << 20
	peer.FieldTimes = map[string]int64{FieldQuota: b.lastChange() + 10}
	if _, err := l.ApplyBucket(ctx, peer, false, peer.FieldTimes[FieldQuota]); err != nil {
		t.Fatal(err)
	}
	if got, _ := l.Bucket(ctx, "quota"); got.Quota != 1<<20 {
		t.Fatalf("a peer's newer quota: %d", got.Quota)
	}
	for _, bad := range []int64{-1, MaxQuota + 1} {
		if err := l.SetBucketQuota(ctx, "quota", bad); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("quota %d: %v", bad, err)
		}
	}
	if err := l.SetBucketQuota(ctx, "nosuch", 1); !errors.Is(err, ErrBucketNotFound) {
		t.Fatalf("quota of a missing bucket: %v", err)
	}
}
