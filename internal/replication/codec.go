package replication

import (
	"github.com/twinlake/twinlake/internal/mpack"
	"github.com/twinlake/twinlake/internal/objects"
)

// A journal entry is written with every change and read back to send it,
// so it is encoded and decoded by hand (objects/codec.go says why), in the
// format the reflective codec writes for Entry: the two read each other's
// records.

// appendEntry appends en's record to b.
func appendEntry(b []byte, en *Entry) []byte {
	f := mpack.StartFields(b)
	f.Key("op")
	f.B = mpack.AppendString(f.B, en.Op)
	f.Key("b")
	f.B = mpack.AppendString(f.B, en.Bucket)
	f.String("k", en.Key)
	f.String("v", en.VersionID)
	f.Int("sz", en.Size)
	f.Int("at", en.At)
	f.Key("q")
	f.B = mpack.AppendInt(f.B, en.Queued)
	f.Int("pk", int64(en.Purge))
	return f.End()
}

// decodeEntry reads a journal entry into en, which it resets first.
func decodeEntry(b []byte, en *Entry) error {
	*en = Entry{}
	_, err := mpack.ReadFields(b, func(k, b []byte) ([]byte, error) {
		var err error
		switch string(k) {
		case "op":
			en.Op, b, err = readOp(b)
		case "b":
			en.Bucket, b, err = mpack.ReadString(b)
		case "k":
			en.Key, b, err = mpack.ReadString(b)
		case "v":
			en.VersionID, b, err = mpack.ReadString(b)
		case "sz":
			en.Size, b, err = mpack.ReadInt(b)
		case "at":
			en.At, b, err = mpack.ReadInt(b)
		case "q":
			en.Queued, b, err = mpack.ReadInt(b)
		case "pk":
			var n int64
			n, b, err = mpack.ReadInt(b)
			en.Purge = objects.PurgeKind(n)
		default:
			b, err = mpack.Skip(b)
		}
		return b, err
	})
	return err
}

// readOp reads an operation's name, one of a few, without allocating.
func readOp(b []byte) (string, []byte, error) {
	p, b, err := mpack.ReadStringBytes(b)
	if err != nil {
		return "", b, err
	}
	for _, op := range [...]string{OpVersion, OpPurge, OpBucket, OpBucketDelete, OpIAM} {
		if string(p) == op {
			return op, b, nil
		}
	}
	return string(p), b, nil
}
