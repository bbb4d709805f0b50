package objects

import (
	"github.com/twinlake/twinlake/internal/checksum"
	"github.com/twinlake/twinlake/internal/mpack"
)

// The records every write and read touches (a version, its latest-version
// summary) are encoded and decoded by hand: through reflection they cost a
// few microseconds each, a tenth of a replicating site's work per PUT. The
// format is the one the reflective codec writes for the same structs (a
// map of their msgpack tags, empty omitempty fields left out), so records
// written by either are read by both.

// appendVersion appends v's record to b.
func appendVersion(b []byte, v *Version) []byte {
	f := mpack.StartFields(b)
	f.Key("id")
	f.B = mpack.AppendString(f.B, v.VersionID)
	f.Key("mt")
	f.B = mpack.AppendInt(f.B, v.ModTime)
	f.Bool("dm", v.DeleteMarker)
	f.Key("sz")
	f.B = mpack.AppendInt(f.B, v.Size)
	f.String("et", v.ETag)
	f.String("ct", v.ContentType)
	f.StringMap("um", v.UserMeta)
	f.StringMap("hd", v.Headers)
	f.StringMap("ck", v.Checksums)
	f.StringMap("tg", v.Tags)
	f.String("se", v.SSE)
	if len(v.Segments) > 0 {
		f.Key("sg")
		f.B = mpack.AppendArrayHeader(f.B, len(v.Segments))
		for i := range v.Segments {
			f.B = appendSegment(f.B, &v.Segments[i])
		}
	}
	f.Bool("mp", v.Multipart)
	f.String("or", v.Origin)
	f.Bytes("kc", v.KeyCheck)
	f.String("ui", v.UploadID)
	f.Int("mm", v.MetaTime)
	f.String("lm", v.LockMode)
	f.Int("lu", v.RetainUntil)
	f.String("lh", v.LegalHold)
	f.String("acl", v.ACL)
	f.StringMap("rt", v.Targets)
	f.String("rs", v.ReplicaStatus)
	f.Int("rts", v.ReplicaTimestamp)
	f.Int("rat", v.ActivityTimestamp)
	return f.End()
}

func appendSegment(b []byte, s *Segment) []byte {
	f := mpack.StartFields(b)
	f.Int("n", int64(s.Number))
	f.Key("s")
	f.B = mpack.AppendInt(f.B, s.Size)
	f.String("e", s.ETag)
	f.String("b", s.BlobID)
	f.Bytes("i", s.Inline)
	f.StringMap("c", s.Checksum)
	f.Bytes("k", s.SealedKey)
	return f.End()
}

// decodeVersion reads a version record into v, which it resets first.
func decodeVersion(b []byte, v *Version) error {
	*v = Version{}
	_, err := mpack.ReadFields(b, func(k, b []byte) ([]byte, error) {
		var err error
		switch string(k) {
		case "id":
			v.VersionID, b, err = mpack.ReadString(b)
		case "mt":
			v.ModTime, b, err = mpack.ReadInt(b)
		case "dm":
			v.DeleteMarker, b, err = mpack.ReadBool(b)
		case "sz":
			v.Size, b, err = mpack.ReadInt(b)
		case "et":
			v.ETag, b, err = mpack.ReadString(b)
		case "ct":
			v.ContentType, b, err = readCommon(b)
		case "um":
			v.UserMeta, b, err = mpack.ReadStringMap(b)
		case "hd":
			v.Headers, b, err = mpack.ReadStringMap(b)
		case "ck":
			v.Checksums, b, err = mpack.ReadStringMap(b)
		case "tg":
			v.Tags, b, err = mpack.ReadStringMap(b)
		case "se":
			v.SSE, b, err = readCommon(b)
		case "sg":
			v.Segments, b, err = readSegments(b)
		case "mp":
			v.Multipart, b, err = mpack.ReadBool(b)
		case "or":
			v.Origin, b, err = mpack.ReadString(b)
		case "kc":
			v.KeyCheck, b, err = mpack.ReadBytes(b)
		case "ui":
			v.UploadID, b, err = mpack.ReadString(b)
		case "mm":
			v.MetaTime, b, err = mpack.ReadInt(b)
		case "lm":
			v.LockMode, b, err = readCommon(b)
		case "lu":
			v.RetainUntil, b, err = mpack.ReadInt(b)
		case "lh":
			v.LegalHold, b, err = readCommon(b)
		case "acl":
			v.ACL, b, err = readCommon(b)
		case "rt":
			v.Targets, b, err = mpack.ReadStringMapOf(b, readCommon) // statuses: a few values
		case "rs":
			v.ReplicaStatus, b, err = readCommon(b)
		case "rts":
			v.ReplicaTimestamp, b, err = mpack.ReadInt(b)
		case "rat":
			v.ActivityTimestamp, b, err = mpack.ReadInt(b)
		default:
			b, err = mpack.Skip(b)
		}
		return b, err
	})
	return err
}

// versionStamp reads only the stamp (ModTime, MetaTime) of a version
// record, stepping over the rest.
func versionStamp(b []byte) (modTime, metaTime int64, err error) {
	_, err = mpack.ReadFields(b, func(k, b []byte) ([]byte, error) {
		var err error
		switch string(k) {
		case "mt":
			modTime, b, err = mpack.ReadInt(b)
		case "mm":
			metaTime, b, err = mpack.ReadInt(b)
		default:
			b, err = mpack.Skip(b)
		}
		return b, err
	})
	return modTime, metaTime, err
}

func readSegments(b []byte) ([]Segment, []byte, error) {
	if isNil, rest := mpack.ReadNil(b); isNil {
		return nil, rest, nil
	}
	n, b, err := mpack.ReadArrayHeader(b)
	if err != nil {
		return nil, b, err
	}
	sg := make([]Segment, n)
	for i := range sg {
		if b, err = decodeSegment(b, &sg[i]); err != nil {
			return nil, b, err
		}
	}
	return sg, b, nil
}

func decodeSegment(b []byte, s *Segment) ([]byte, error) {
	return mpack.ReadFields(b, func(k, b []byte) ([]byte, error) {
		var err error
		switch string(k) {
		case "n":
			var n int64
			n, b, err = mpack.ReadInt(b)
			s.Number = int(n)
		case "s":
			s.Size, b, err = mpack.ReadInt(b)
		case "e":
			s.ETag, b, err = mpack.ReadString(b)
		case "b":
			s.BlobID, b, err = mpack.ReadString(b)
		case "i":
			s.Inline, b, err = mpack.ReadBytes(b)
		case "c":
			s.Checksum, b, err = mpack.ReadStringMap(b)
		case "k":
			s.SealedKey, b, err = mpack.ReadBytes(b)
		default:
			b, err = mpack.Skip(b)
		}
		return b, err
	})
}

// readCommon reads a string that is usually one of a few values, which
// it returns without allocating.
func readCommon(b []byte) (string, []byte, error) {
	p, b, err := mpack.ReadStringBytes(b)
	if err != nil {
		return "", b, err
	}
	switch string(p) {
	case StatusPending:
		return StatusPending, b, nil
	case StatusCompleted:
		return StatusCompleted, b, nil
	case StatusFailed:
		return StatusFailed, b, nil
	case StatusReplica:
		return StatusReplica, b, nil
	case "application/octet-stream":
		return "application/octet-stream", b, nil
	case "AES256":
		return "AES256", b, nil
	case string(checksum.TypeFullObject):
		return string(checksum.TypeFullObject), b, nil
	case string(checksum.TypeComposite):
		return string(checksum.TypeComposite), b, nil
	}
	return string(p), b, nil
}

// appendStatus appends s's record to b. A replicating site writes one per
// version sent.
func appendStatus(b []byte, s *targetStatus) []byte {
	f := mpack.StartFields(b)
	f.Key("t")
	f.B = mpack.AppendInt(f.B, s.ModTime)
	f.Int("m", s.MetaTime)
	f.Key("s")
	f.B = mpack.AppendString(f.B, s.Status)
	f.Int("rts", s.ReplicaTimestamp)
	f.Int("rat", s.ActivityTimestamp)
	return f.End()
}

// decodeStatus reads a status record into s, which it resets first.
func decodeStatus(b []byte, s *targetStatus) error {
	*s = targetStatus{}
	_, err := mpack.ReadFields(b, func(k, b []byte) ([]byte, error) {
		var err error
		switch string(k) {
		case "t":
			s.ModTime, b, err = mpack.ReadInt(b)
		case "m":
			s.MetaTime, b, err = mpack.ReadInt(b)
		case "s":
			s.Status, b, err = readCommon(b)
		case "rts":
			s.ReplicaTimestamp, b, err = mpack.ReadInt(b)
		case "rat":
			s.ActivityTimestamp, b, err = mpack.ReadInt(b)
		default:
			b, err = mpack.Skip(b)
		}
		return b, err
	})
	return err
}

// appendLatest appends s's record to b.
func appendLatest(b []byte, s *latest) []byte {
	f := mpack.StartFields(b)
	f.Key("id")
	f.B = mpack.AppendString(f.B, s.VersionID)
	f.Key("mt")
	f.B = mpack.AppendInt(f.B, s.ModTime)
	f.String("or", s.Origin)
	f.Bool("dm", s.DeleteMarker)
	f.Key("sz")
	f.B = mpack.AppendInt(f.B, s.Size)
	f.String("et", s.ETag)
	f.String("ca", s.ChecksumAlgorithm)
	f.String("cy", s.ChecksumType)
	f.String("sc", s.StorageClass)
	return f.End()
}

// decodeLatest reads a latest-version summary into s, which it resets
// first.
func decodeLatest(b []byte, s *latest) error {
	*s = latest{}
	_, err := mpack.ReadFields(b, func(k, b []byte) ([]byte, error) {
		var err error
		switch string(k) {
		case "id":
			s.VersionID, b, err = mpack.ReadString(b)
		case "mt":
			s.ModTime, b, err = mpack.ReadInt(b)
		case "or":
			s.Origin, b, err = mpack.ReadString(b)
		case "dm":
			s.DeleteMarker, b, err = mpack.ReadBool(b)
		case "sz":
			s.Size, b, err = mpack.ReadInt(b)
		case "et":
			s.ETag, b, err = mpack.ReadString(b)
		case "ca":
			s.ChecksumAlgorithm, b, err = readCommon(b)
		case "cy":
			s.ChecksumType, b, err = readCommon(b)
		case "sc":
			s.StorageClass, b, err = readCommon(b)
		default:
			b, err = mpack.Skip(b)
		}
		return b, err
	})
	return err
}
