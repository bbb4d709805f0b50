package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/twinlake/twinlake/internal/testsite"
)

// TestStorageFullKeepsTheSiteUp fills a site's file system (a tmpfs the
// test mounts; it skips where it may not) through the binary. Without a
// reserve, the metadata store met a full disk and stopped the process,
// which then could not start again. With one, new data is refused with
// 507 XMinioStorageFull before the reserve is touched; the site stays up,
// reads and lists; deletes free space and new writes are taken again; and
// a site killed while full starts again with everything acknowledged.
func TestStorageFullKeepsTheSiteUp(t *testing.T) {
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=320m"); err != nil {
		t.Skipf("mount a tmpfs to fill: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	bin := testsite.BuildBinary(t)
	dir, addr := filepath.Join(mnt, "site"), testsite.FreeAddr(t)
	args := []string{"--min-free-space", "128MiB"}
	p := testsite.StartProcessArgs(t, bin, dir, addr, args, runbookEnv...)
	c, err := minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4(rootUser, rootSecret, ""), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.MakeBucket(ctx, "fill", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	full := func(err error) bool {
		var er minio.ErrorResponse
		return errors.As(err, &er) && er.Code == "XMinioStorageFull" && er.StatusCode == http.StatusInsufficientStorage
	}
	put := func(key string, size int) error {
		_, err := c.PutObject(ctx, "fill", key, bytes.NewReader(bytes.Repeat([]byte{byte(len(key))}, size)), int64(size),
			minio.PutObjectOptions{DisableMultipart: true})
		return err
	}

	// Fill with 4 MiB objects, then 4 KiB ones (kept in the metadata
	// store), until each is refused.
	var kept []string
	for _, step := range []struct {
		prefix string
		size   int
	}{{"big", 4 << 20}, {"small", 4 << 10}} {
		for i := 0; ; i++ {
			if i == 2000 {
				t.Fatalf("%d %s objects taken, none refused", i, step.prefix)
			}
			key := fmt.Sprintf("%s-%04d", step.prefix, i)
			err := put(key, step.size)
			if err == nil {
				kept = append(kept, key)
				continue
			}
			if !full(err) {
				t.Fatalf("PUT %s on a full site: %v, want 507 XMinioStorageFull", key, err)
			}
			break
		}
	}
	// The reserve is there for the metadata store, which writes the
	// small objects' data again when it flushes its memtable (up to 32
	// MiB): part of it is used, never all.
	free := freeBytes(t, mnt)
	t.Logf("%d objects taken, %d MiB left free", len(kept), free>>20)
	if free < 16<<20 {
		t.Fatalf("%d MiB left free of the 128 MiB reserve", free>>20)
	}
	if p.Exited() {
		t.Fatalf("the site stopped when its disk filled:\n%s", p.Log())
	}
	// A multipart upload's part is refused the same way.
	core := minio.Core{Client: c}
	id, err := core.NewMultipartUpload(ctx, "fill", "parts", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.PutObjectPart(ctx, "fill", "parts", id, 1, bytes.NewReader(make([]byte, 5<<20)), 5<<20, minio.PutObjectPartOptions{}); !full(err) {
		t.Fatalf("upload part on a full site: %v", err)
	}
	if err := core.AbortMultipartUpload(ctx, "fill", "parts", id); err != nil {
		t.Fatal(err)
	}

	// It reads and lists what it holds.
	checkKept := func(keys []string) {
		t.Helper()
		n := 0
		for o := range c.ListObjects(ctx, "fill", minio.ListObjectsOptions{}) {
			if o.Err != nil {
				t.Fatal(o.Err)
			}
			n++
		}
		if n != len(keys) {
			t.Fatalf("listed %d objects, want the %d acknowledged", n, len(keys))
		}
		for _, key := range []string{keys[0], keys[len(keys)-1]} {
			obj, err := c.GetObject(ctx, "fill", key, minio.GetObjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(obj)
			obj.Close()
			if err != nil || len(b) == 0 || b[0] != byte(len(key)) {
				t.Fatalf("GET %s: %d bytes, %v", key, len(b), err)
			}
		}
	}
	checkKept(kept)

	// Killed while full, it starts again with everything acknowledged.
	p.Kill(t)
	p = testsite.StartProcessArgs(t, bin, dir, addr, args, runbookEnv...)
	checkKept(kept)

	// Deletes work, free space, and writes are taken again once the site
	// has looked at its free space again (at most a second later).
	keys := make(chan minio.ObjectInfo, len(kept))
	for _, k := range kept[:len(kept)/2] {
		keys <- minio.ObjectInfo{Key: k}
	}
	close(keys)
	for e := range c.RemoveObjects(ctx, "fill", keys, minio.RemoveObjectsOptions{}) {
		t.Fatalf("delete %s on a full site: %v", e.ObjectName, e.Err)
	}
	kept = kept[len(kept)/2:]
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := put("after", 4<<20)
		if err == nil {
			break
		}
		if !full(err) || time.Now().After(deadline) {
			t.Fatalf("PUT after freeing space: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	checkKept(append(kept, "after"))
}

// TestStorageFullAcrossNodes fills a 4-node site whose nodes each have a
// small file system (tmpfs the test mounts; it skips where it may not):
// once the drives are down to their reserve, a write through any node is
// refused with 507 XMinioStorageFull (it was 500 InternalError), and every
// node stays up, reads and deletes.
func TestStorageFullAcrossNodes(t *testing.T) {
	base := t.TempDir()
	for i := range 4 {
		dir := filepath.Join(base, fmt.Sprint("node", i))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		// The voters' etcd members take about 125 MiB of it, and a drive
		// keeps 256 MiB free.
		if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=440m"); err != nil {
			t.Skipf("mount a tmpfs to fill: %v", err)
		}
		t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	}
	bin := testsite.BuildBinary(t)
	cl := testsite.StartCluster(t, bin, base, 4, clusterEnv()...)
	client := func(i int) *minio.Client {
		c, err := minio.New(cl.Addrs[i], &minio.Options{Creds: credentials.NewStaticV4(rootUser, rootSecret, ""), Region: "us-east-1"})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ctx := context.Background()
	c := client(1)
	if err := c.MakeBucket(ctx, "fill", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("full"), 2<<20)
	put := func(c *minio.Client, key string) error {
		_, err := c.PutObject(ctx, "fill", key, bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{DisableMultipart: true})
		return err
	}
	full := func(err error) bool {
		var er minio.ErrorResponse
		return errors.As(err, &er) && er.Code == "XMinioStorageFull" && er.StatusCode == http.StatusInsufficientStorage
	}
	taken := 0
	for ; ; taken++ {
		if taken == 60 {
			t.Fatal("60 objects of 8 MiB taken, none refused")
		}
		err := put(c, fmt.Sprintf("big-%02d", taken))
		if err == nil {
			continue
		}
		if !full(err) {
			t.Fatalf("PUT on a full site: %v, want 507 XMinioStorageFull", err)
		}
		break
	}
	for i := range 4 {
		if cl.Node(i).Exited() {
			t.Fatalf("node %d stopped when the drives filled", i)
		}
		if err := put(client(i), fmt.Sprintf("via-%d", i)); !full(err) {
			t.Fatalf("PUT through node %d on a full site: %v", i, err)
		}
	}
	obj, err := client(2).GetObject(ctx, "fill", "big-00", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(obj)
	obj.Close()
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("GET big-00 on a full site: %d bytes, %v", len(got), err)
	}
	if err := client(3).RemoveObject(ctx, "fill", "big-00", minio.RemoveObjectOptions{}); err != nil {
		t.Fatalf("delete on a full site: %v", err)
	}
	t.Logf("%d objects of 8 MiB taken before the drives were full", taken)
}

func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	return int64(fs.Bavail) * fs.Bsize
}
