package objects

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/meta"
)

// TestRoomRefusesNewDataOnly: while Config.Room refuses, every write of
// object data (a PUT kept inline or in a blob, a copy, an upload part, a
// received version, alone or in a batch) fails with ErrStorageFull before
// it stores anything, and what frees space or changes metadata alone (a
// delete, a delete marker, a tag set, a completed upload) goes on.
func TestRoomRefusesNewDataOnly(t *testing.T) {
	ctx := context.Background()
	b, err := blob.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	full := false
	var asked []int64
	l, err := New(meta.NewMem(), b, Config{SiteID: "site-a", InlineLimit: 8, Room: func(size int64) error {
		asked = append(asked, size)
		if full {
			return ErrStorageFull
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.CreateBucket(ctx, "bkt"); err != nil {
		t.Fatal(err)
	}
	put(t, l, "bkt", "kept", "a body kept in a blob")
	put(t, l, "bkt", "tiny", "inline")
	up, err := l.CreateMultipartUpload(ctx, "bkt", "mp", PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	part, err := l.UploadPart(ctx, "bkt", "mp", up.UploadID, 1, strings.NewReader("part one"), PutOptions{Size: 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 3 || asked[0] != 21 || asked[1] != 6 || asked[2] != 8 {
		t.Fatalf("room asked for %v, want each write's size", asked)
	}

	full = true
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrStorageFull) || !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("%s on a full site: %v, want ErrStorageFull", what, err)
		}
	}
	_, err = l.PutObject(ctx, "bkt", "new", strings.NewReader("a new body"), PutOptions{Size: 10})
	refused("PUT", err)
	_, err = l.PutObject(ctx, "bkt", "new", strings.NewReader("tiny"), PutOptions{Size: -1})
	refused("PUT of a length not known", err)
	_, _, err = l.CopyObject(ctx, "bkt", "kept", "", "bkt", "copy", CopyOptions{})
	refused("copy", err)
	_, err = l.UploadPart(ctx, "bkt", "mp", up.UploadID, 2, strings.NewReader("part two"), PutOptions{Size: 8})
	refused("upload part", err)
	body := "a version from a peer"
	sum := md5.Sum([]byte(body))
	in := &Version{VersionID: newVersionID(), ModTime: time.Now().UnixNano(), Origin: "site-b", Size: int64(len(body)),
		ETag: hex.EncodeToString(sum[:]), Segments: []Segment{{Size: int64(len(body))}}}
	_, err = l.ApplyReplica(ctx, "bkt", "peer", in, strings.NewReader(body))
	refused("received version", err)
	small := &Version{VersionID: newVersionID(), ModTime: time.Now().UnixNano(), Origin: "site-b", Size: 2,
		ETag: hex.EncodeToString(md5.New().Sum(nil)), Segments: []Segment{{Size: 2}}}
	sum = md5.Sum([]byte("hi"))
	small.ETag = hex.EncodeToString(sum[:])
	_, errs, _ := l.ApplyReplicas(ctx, []ReplicaItem{{Bucket: "bkt", Key: "peer-small", Version: small, Data: []byte("hi")}})
	refused("received small version in a batch", errs[0])
	for _, key := range []string{"new", "copy", "peer", "peer-small"} {
		if _, err := l.HeadObject(ctx, "bkt", key, ""); !errors.Is(err, ErrObjectNotFound) {
			t.Fatalf("%s after a refused write: %v", key, err)
		}
	}

	if _, err := l.PutObjectTags(ctx, "bkt", "kept", "", map[string]string{"k": "v"}); err != nil {
		t.Fatalf("tags on a full site: %v", err)
	}
	if _, err := l.CompleteMultipartUpload(ctx, "bkt", "mp", up.UploadID, []CompletePart{{Number: 1, ETag: part.Segment.ETag}}, PutOptions{}); err != nil {
		t.Fatalf("complete on a full site: %v", err)
	}
	if _, err := l.DeleteObject(ctx, "bkt", "kept", ""); err != nil {
		t.Fatalf("delete on a full site: %v", err)
	}
	if got := read(t, l, "bkt", "mp", ""); got != "part one" {
		t.Fatalf("completed upload reads %q", got)
	}
}
