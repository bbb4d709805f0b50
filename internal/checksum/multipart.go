package checksum

import (
	"crypto/md5" //nolint:gosec // MD5 is the S3 ETag, not a security choice.
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// HeaderType is the request and response header naming a multipart
// upload's checksum Type.
const HeaderType = "x-amz-checksum-type"

// Type is how a multipart object's additional checksum is formed.
type Type string

const (
	// TypeComposite is a checksum of the concatenated part digests,
	// written with a "-N" part-count suffix.
	TypeComposite Type = "COMPOSITE"
	// TypeFullObject is the checksum of the whole object's bytes, as if it
	// had been uploaded in one piece; only CRC algorithms can form it from
	// part values.
	TypeFullObject Type = "FULL_OBJECT"
)

// ParseType returns the Type named by s, ignoring case, or an error
// wrapping ErrUnknownType.
func ParseType(s string) (Type, error) {
	switch t := Type(strings.ToUpper(strings.TrimSpace(s))); t {
	case TypeComposite, TypeFullObject:
		return t, nil
	}
	return "", fmt.Errorf("%w: %q", ErrUnknownType, s)
}

// DefaultType returns the Type S3 uses for a when the client names none:
// FULL_OBJECT for CRC64NVME, which has no composite form, else COMPOSITE.
func DefaultType(a Algorithm) Type {
	if a == CRC64NVME {
		return TypeFullObject
	}
	return TypeComposite
}

// Supports reports whether t can be formed for algorithm a.
func (t Type) Supports(a Algorithm) bool {
	info, ok := a.info()
	switch {
	case !ok:
		return false
	case t == TypeComposite:
		return info.composite
	case t == TypeFullObject:
		return info.crcWidth != 0
	}
	return false
}

// MultipartETag returns the S3 ETag of a completed multipart upload (without
// quotes): the hex MD5 of the concatenated raw part MD5s, then "-" and the
// part count. Part ETags may be quoted. It returns an error wrapping
// ErrNoParts or ErrInvalidETag.
func MultipartETag(partMD5Hex []string) (string, error) {
	if len(partMD5Hex) == 0 {
		return "", ErrNoParts
	}
	h := md5.New() //nolint:gosec // see import.
	for i, e := range partMD5Hex {
		raw, err := hex.DecodeString(strings.Trim(e, `"`))
		if err != nil || len(raw) != md5.Size {
			return "", fmt.Errorf("%w: part %d: %q", ErrInvalidETag, i+1, e)
		}
		h.Write(raw)
	}
	return hex.EncodeToString(h.Sum(nil)) + "-" + strconv.Itoa(len(partMD5Hex)), nil
}

// Composite returns the COMPOSITE checksum of a multipart object from its
// parts' wire values in part order: the algorithm's checksum of the
// concatenated raw part digests, base64, then "-" and the part count. It
// returns an error wrapping ErrUnsupportedType (CRC64NVME), ErrNoParts,
// ErrUnknownAlgorithm or ErrInvalidChecksum.
func Composite(a Algorithm, partChecksums []string) (string, error) {
	if !a.Valid() {
		return "", fmt.Errorf("%w: %q", ErrUnknownAlgorithm, string(a))
	}
	if !TypeComposite.Supports(a) {
		return "", fmt.Errorf("%w: %s with %s", ErrUnsupportedType, TypeComposite, a)
	}
	if len(partChecksums) == 0 {
		return "", ErrNoParts
	}
	h := a.New()
	for i, v := range partChecksums {
		raw, err := a.Decode(v)
		if err != nil {
			return "", fmt.Errorf("part %d: %w", i+1, err)
		}
		h.Write(raw)
	}
	return Encode(h.Sum(nil)) + "-" + strconv.Itoa(len(partChecksums)), nil
}

// Part is one part's contribution to a FULL_OBJECT checksum.
type Part struct {
	Checksum string // wire value of the part's CRC
	Size     int64  // part length in bytes
}

// FullObjectCRC returns the FULL_OBJECT checksum of a multipart object (no
// suffix): the CRC of the whole object, combined from the parts' CRCs and
// sizes in part order without rereading data. It returns an error wrapping
// ErrUnsupportedType for non-CRC algorithms, ErrNoParts,
// ErrUnknownAlgorithm or ErrInvalidChecksum.
func FullObjectCRC(a Algorithm, parts []Part) (string, error) {
	info, ok := a.info()
	if !ok {
		return "", fmt.Errorf("%w: %q", ErrUnknownAlgorithm, string(a))
	}
	if info.crcWidth == 0 {
		return "", fmt.Errorf("%w: %s with %s", ErrUnsupportedType, TypeFullObject, a)
	}
	if len(parts) == 0 {
		return "", ErrNoParts
	}
	m := crcMath{width: info.crcWidth, poly: info.crcPoly}
	var crc uint64
	for i, p := range parts {
		raw, err := a.Decode(p.Checksum)
		if err != nil {
			return "", fmt.Errorf("part %d: %w", i+1, err)
		}
		if p.Size < 0 {
			return "", fmt.Errorf("checksum: part %d: negative size %d", i+1, p.Size)
		}
		crc = m.combine(crc, beUint(raw), p.Size)
	}
	return Encode(m.bytes(crc)), nil
}

func beUint(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}

func (m crcMath) bytes(v uint64) []byte {
	out := binary.BigEndian.AppendUint64(nil, v)
	return out[8-m.width/8:]
}
