package peerwire

import (
	"fmt"

	"github.com/twinlake/twinlake/internal/mpack"
)

// A batch of versions (POST versions) is encoded and decoded by hand: it
// carries every small replicated write, and through reflection its decode
// was a twentieth of a target's CPU. The format is the one the reflective
// codec writes for []VersionItem, so peers of either build read each
// other's batches; only the fields of these wire types are read (a field
// local to a site, such as a blob ID, is stepped over like any unknown
// one).

// AppendItems appends the MessagePack array of items to b.
func AppendItems(b []byte, items []VersionItem) []byte {
	b = mpack.AppendArrayHeader(b, len(items))
	for i := range items {
		b = appendItem(b, &items[i])
	}
	return b
}

func appendItem(b []byte, it *VersionItem) []byte {
	f := mpack.StartFields(b)
	f.Key("b")
	f.B = mpack.AppendString(f.B, it.Bucket)
	f.Key("k")
	f.B = mpack.AppendString(f.B, it.Key)
	f.Key("v")
	if it.Version == nil {
		f.B = append(f.B, 0xc0) // nil
	} else {
		f.B = appendObjectVersion(f.B, it.Version)
	}
	f.Bytes("d", it.Data)
	return f.End()
}

func appendObjectVersion(b []byte, v *ObjectVersion) []byte {
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
			s := &v.Segments[i]
			g := mpack.StartFields(f.B)
			g.Int("n", int64(s.Number))
			g.Key("s")
			g.B = mpack.AppendInt(g.B, s.Size)
			g.String("e", s.ETag)
			g.StringMap("c", s.Checksum)
			g.Bytes("k", s.SealedKey)
			f.B = g.End()
		}
	}
	f.Bool("mp", v.Multipart)
	f.String("or", v.Origin)
	f.Int("mm", v.MetaTime)
	f.Bytes("kc", v.KeyCheck)
	f.String("lm", v.LockMode)
	f.Int("lu", v.RetainUntil)
	f.String("lh", v.LegalHold)
	f.String("acl", v.ACL)
	return f.End()
}

// DecodeItems reads a batch. Every count is checked against the bytes
// left before anything is sized by it, so a body costs at most a few
// times its size to decode. The items' data alias raw, which the caller
// must not change while it uses them (a copy of each would cost an
// allocation and a copy of every object's data received).
func DecodeItems(raw []byte) ([]VersionItem, error) {
	n, b, err := mpack.ReadArrayHeader(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	items := make([]VersionItem, n)
	for i := range items {
		if b, err = decodeItem(b, &items[i]); err != nil {
			return nil, fmt.Errorf("%w: batch item %d: %w", ErrMalformed, i, err)
		}
	}
	return items, nil
}

func decodeItem(b []byte, it *VersionItem) ([]byte, error) {
	return mpack.ReadFields(b, func(k, b []byte) ([]byte, error) {
		var err error
		switch string(k) {
		case "b":
			it.Bucket, b, err = mpack.ReadString(b)
		case "k":
			it.Key, b, err = mpack.ReadString(b)
		case "v":
			if isNil, rest := mpack.ReadNil(b); isNil {
				return rest, nil // ToItems refuses the item
			}
			it.Version = &ObjectVersion{}
			b, err = decodeObjectVersion(b, it.Version)
		case "d":
			it.Data, b, err = mpack.ReadStringBytes(b)
		default:
			b, err = mpack.Skip(b)
		}
		return b, err
	})
}

func decodeObjectVersion(b []byte, v *ObjectVersion) ([]byte, error) {
	return mpack.ReadFields(b, func(k, b []byte) ([]byte, error) {
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
			v.ContentType, b, err = mpack.ReadString(b)
		case "um":
			v.UserMeta, b, err = mpack.ReadStringMap(b)
		case "hd":
			v.Headers, b, err = mpack.ReadStringMap(b)
		case "ck":
			v.Checksums, b, err = mpack.ReadStringMap(b)
		case "tg":
			v.Tags, b, err = mpack.ReadStringMap(b)
		case "se":
			v.SSE, b, err = mpack.ReadString(b)
		case "sg":
			v.Segments, b, err = decodeSegments(b)
		case "mp":
			v.Multipart, b, err = mpack.ReadBool(b)
		case "or":
			v.Origin, b, err = mpack.ReadString(b)
		case "mm":
			v.MetaTime, b, err = mpack.ReadInt(b)
		case "kc":
			v.KeyCheck, b, err = mpack.ReadBytes(b)
		case "lm":
			v.LockMode, b, err = mpack.ReadString(b)
		case "lu":
			v.RetainUntil, b, err = mpack.ReadInt(b)
		case "lh":
			v.LegalHold, b, err = mpack.ReadString(b)
		case "acl":
			v.ACL, b, err = mpack.ReadString(b)
		default:
			b, err = mpack.Skip(b)
		}
		return b, err
	})
}

func decodeSegments(b []byte) ([]Segment, []byte, error) {
	if isNil, rest := mpack.ReadNil(b); isNil {
		return nil, rest, nil
	}
	n, b, err := mpack.ReadArrayHeader(b)
	if err != nil {
		return nil, b, err
	}
	sg := make([]Segment, n)
	for i := range sg {
		s := &sg[i]
		b, err = mpack.ReadFields(b, func(k, b []byte) ([]byte, error) {
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
			case "c":
				s.Checksum, b, err = mpack.ReadStringMap(b)
			case "k":
				s.SealedKey, b, err = mpack.ReadBytes(b)
			default:
				b, err = mpack.Skip(b)
			}
			return b, err
		})
		if err != nil {
			return nil, b, err
		}
	}
	return sg, b, nil
}
