package peerhttp

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/twinlake/twinlake/internal/iam"
	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/replication"
	"github.com/twinlake/twinlake/internal/replication/peerwire"
)

// FuzzDecodeVersionHeader: any header is a version or a bad request.
func FuzzDecodeVersionHeader(f *testing.F) {
	good, _ := msgpack.Marshal(peerwire.FromVersion(&objects.Version{VersionID: "null", ModTime: 1, Size: 3, ETag: "e",
		Segments: []objects.Segment{{Size: 3}}}))
	f.Add(base64.StdEncoding.EncodeToString(good), int64(3))
	f.Add("", int64(0))
	f.Add("!!", int64(-1))
	f.Fuzz(func(t *testing.T, h string, n int64) {
		v, err := decodeVersionHeader(h, n)
		if err != nil {
			if !errors.Is(err, errBadRequest) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		var total int64
		for _, s := range v.Segments {
			if s.Size < 0 {
				t.Fatal("negative segment accepted")
			}
			total += s.Size
		}
		if !v.DeleteMarker && total != n {
			t.Fatalf("segments %d vs body %d accepted", total, n)
		}
	})
}

// FuzzDecodeBatch: a batch body decodes or fails, never panics.
func FuzzDecodeBatch(f *testing.F) {
	good, _ := msgpack.Marshal([]replication.VersionItem{{Bucket: "b", Key: "k",
		Version: &objects.Version{VersionID: "null", Size: 1, Segments: []objects.Segment{{Size: 1}}}, Data: []byte("x")}})
	f.Add(good)
	f.Add([]byte{0x91, 0xc0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := decodeBatch(data); err != nil && !errors.Is(err, errBadRequest) {
			t.Fatalf("unexpected error %v", err)
		}
	})
}

// FuzzDecodeIAM feeds arbitrary bodies of the IAM record call through the
// same checks the server applies and into a real IAM store: nothing
// panics, a body that is not a record is a bad request, and whatever the
// store accepts is a well-formed record it can export again.
func FuzzDecodeIAM(f *testing.F) {
	good, _ := msgpack.Marshal(peerwire.IAMRecord{})
	f.Add(good)
	f.Add([]byte{0x80})
	f.Add([]byte{0xde, 0xff, 0xff})
	store, err := iam.Open(meta.NewMem(), iam.Credential{AccessKey: "fuzzroot", SecretKey: "fuzz-root-secret"}, iam.Config{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var rec peerwire.IAMRecord
		if err := decodeMsgpack(data, &rec); err != nil {
			return
		}
		tr := rec.ToIAM()
		if _, err := store.Apply(context.Background(), tr); err != nil {
			return
		}
		if _, ok, err := store.Export(tr.Kind, tr.Name); !ok || err != nil {
			t.Fatalf("accepted %s/%s but cannot export it: %v %v", tr.Kind, tr.Name, ok, err)
		}
	})
}
