package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/testsite"
)

// TestWatch: watch prints one event per client call on the bucket's keys
// that passes its filters (kind, prefix, suffix): a PUT with the object's
// size (not its signed chunks' length), a GET, a DELETE; keys outside the
// filters and another bucket whose name starts the same are not shown;
// an interrupt ends it without an error.
func TestWatch(t *testing.T) {
	e := newSiteEnv(t)
	e.must("mb", "s1/watched")
	e.must("mb", "s1/watched2")
	if _, err := e.run("watch", "--events", "put,copy", "s1/watched"); err == nil || !strings.Contains(err.Error(), `unknown event type "copy"`) {
		t.Fatalf("watch --events copy: %v", err)
	}
	if _, err := e.run("watch", "s1/nosuch"); err == nil || !strings.Contains(err.Error(), "NoSuchBucket") {
		t.Fatalf("watch of a missing bucket: %v", err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		root := NewRoot()
		root.SetArgs([]string{"--config-dir", e.dir, "watch", "--json", "--events", "put,delete,get", "--suffix", ".txt", "s1/watched/docs/"})
		root.SetOut(out)
		root.SetErr(&syncBuffer{})
		done <- Execute(ctx, root)
	}()
	put := func(bucket, key, body string) {
		t.Helper()
		if _, err := e.c.PutObject(t.Context(), bucket, key, strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The watch is live once a marker PUT shows up.
	testsite.Eventually(t, 15*time.Second, func() error {
		put("watched", "docs/marker.txt", "m")
		if !strings.Contains(out.String(), "docs/marker.txt") {
			return fmt.Errorf("the watch shows no event yet")
		}
		return nil
	})
	body := strings.Repeat("x", 70000)
	put("watched", "docs/a.txt", body)
	put("watched", "docs/skip.log", "not .txt")
	put("watched", "other/b.txt", "not under docs/")
	put("watched2", "docs/c.txt", "another bucket")
	if _, err := e.c.StatObject(t.Context(), "watched", "docs/a.txt", minio.StatObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	obj, err := e.c.GetObject(t.Context(), "watched", "docs/a.txt", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(obj); err != nil || len(b) != len(body) {
		t.Fatalf("GET read %d bytes: %v", len(b), err)
	}
	obj.Close()
	if err := e.c.RemoveObject(t.Context(), "watched", "docs/a.txt", minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	var got []string
	testsite.Eventually(t, 15*time.Second, func() error {
		got = got[:0]
		for _, ev := range jsonLines(t, out.String()) {
			if ev["path"] == "s1/watched/docs/marker.txt" {
				continue // the probes that the watch is live
			}
			got = append(got, fmt.Sprintf("%v %v %v", ev["event"], ev["path"], ev["size"]))
		}
		if len(got) < 4 {
			return fmt.Errorf("events so far: %q", got)
		}
		return nil
	})
	want := []string{
		"s3:ObjectCreated:Put s1/watched/docs/a.txt 70000",
		"s3:ObjectAccessed:Head s1/watched/docs/a.txt <nil>",
		"s3:ObjectAccessed:Get s1/watched/docs/a.txt 70000",
		"s3:ObjectRemoved:Delete s1/watched/docs/a.txt <nil>",
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("event %d = %q, want %q", i, got[i], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("events %q, want %d", got, len(want))
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("interrupted watch: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not end on interrupt")
	}
}
