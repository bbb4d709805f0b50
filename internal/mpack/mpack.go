// Package mpack appends and reads the MessagePack values twinlake's hot
// records are made of (maps of short string keys to strings, integers,
// booleans, byte strings and string maps) without reflection.
//
// The records written through it stay ordinary MessagePack, read and
// written as well by the reflective codec (vmihailenco/msgpack) the rest of
// the store uses, so records written before and after it mix freely. The
// readers accept what that codec accepts for the same Go types: any
// integer width, str or bin for strings and byte strings, and nil for the
// zero value.
package mpack

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrShort is returned when the input ends inside a value.
var ErrShort = errors.New("msgpack: unexpected end of input")

// AppendMapHeader appends the header of a map of n entries.
func AppendMapHeader(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x80|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xde), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xdf), uint32(n))
}

// AppendArrayHeader appends the header of an array of n elements.
func AppendArrayHeader(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xdc), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xdd), uint32(n))
}

// AppendString appends s as a str.
func AppendString(b []byte, s string) []byte {
	switch n := len(s); {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n <= math.MaxUint8:
		b = append(b, 0xd9, byte(n))
	case n <= math.MaxUint16:
		b = binary.BigEndian.AppendUint16(append(b, 0xda), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
	}
	return append(b, s...)
}

// AppendBytes appends p as a bin; nil as nil.
func AppendBytes(b []byte, p []byte) []byte {
	if p == nil {
		return append(b, 0xc0)
	}
	switch n := len(p); {
	case n <= math.MaxUint8:
		b = append(b, 0xc4, byte(n))
	case n <= math.MaxUint16:
		b = binary.BigEndian.AppendUint16(append(b, 0xc5), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xc6), uint32(n))
	}
	return append(b, p...)
}

// AppendInt appends n in the fewest bytes that hold it.
func AppendInt(b []byte, n int64) []byte {
	switch {
	case n >= 0 && n <= math.MaxInt8:
		return append(b, byte(n))
	case n >= 0 && n <= math.MaxUint8:
		return append(b, 0xcc, byte(n))
	case n >= 0 && n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(n))
	case n >= 0 && n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(n))
	case n >= 0:
		return binary.BigEndian.AppendUint64(append(b, 0xcf), uint64(n))
	case n >= -32:
		return append(b, byte(n))
	case n >= math.MinInt8:
		return append(b, 0xd0, byte(n))
	case n >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(n))
	case n >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
}

// AppendBool appends v.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 0xc3)
	}
	return append(b, 0xc2)
}

// AppendStringMap appends m as a map of str to str; nil as nil.
func AppendStringMap(b []byte, m map[string]string) []byte {
	if m == nil {
		return append(b, 0xc0)
	}
	b = AppendMapHeader(b, len(m))
	for k, v := range m {
		b = AppendString(AppendString(b, k), v)
	}
	return b
}

// lengthOf reads the length that follows a header byte: size bytes,
// big-endian.
func lengthOf(b []byte, size int) (int, []byte, error) {
	if len(b) < size {
		return 0, b, ErrShort
	}
	var n uint64
	switch size {
	case 1:
		n = uint64(b[0])
	case 2:
		n = uint64(binary.BigEndian.Uint16(b))
	case 4:
		n = uint64(binary.BigEndian.Uint32(b))
	}
	return int(n), b[size:], nil
}

// header reads a map or array header: fix is the fixed form's base (0x80
// or 0x90), c16 the code of its 16-bit form (the 32-bit one follows). A
// nil reads as 0, as the reflective codec reads it into an empty value.
// Each element takes at least per bytes, so a count the rest of the input
// cannot hold is refused before anything is sized by it.
func header(b []byte, fix, c16 byte, per int, what string) (int, []byte, error) {
	if len(b) == 0 {
		return 0, b, ErrShort
	}
	c, rest := b[0], b[1:]
	var n int
	var err error
	switch {
	case c&0xf0 == fix:
		n = int(c & 0x0f)
	case c == c16:
		n, rest, err = lengthOf(rest, 2)
	case c == c16+1:
		n, rest, err = lengthOf(rest, 4)
	case c == 0xc0:
		return 0, rest, nil
	default:
		return 0, b, fmt.Errorf("msgpack: code %#x where a %s was expected", c, what)
	}
	if err != nil {
		return 0, b, err
	}
	if n > len(rest)/per {
		return 0, b, ErrShort
	}
	return n, rest, nil
}

// ReadMapHeader reads a map header and returns its count of entries.
func ReadMapHeader(b []byte) (int, []byte, error) { return header(b, 0x80, 0xde, 2, "map") }

// ReadArrayHeader reads an array header and returns its count of elements.
func ReadArrayHeader(b []byte) (int, []byte, error) { return header(b, 0x90, 0xdc, 1, "array") }

// ReadStringBytes reads a str or bin and returns its bytes, which alias b;
// nil for a nil.
func ReadStringBytes(b []byte) ([]byte, []byte, error) {
	if len(b) == 0 {
		return nil, b, ErrShort
	}
	c, rest := b[0], b[1:]
	var n int
	var err error
	switch {
	case c&0xe0 == 0xa0:
		n = int(c & 0x1f)
	case c == 0xd9 || c == 0xc4:
		n, rest, err = lengthOf(rest, 1)
	case c == 0xda || c == 0xc5:
		n, rest, err = lengthOf(rest, 2)
	case c == 0xdb || c == 0xc6:
		n, rest, err = lengthOf(rest, 4)
	case c == 0xc0:
		return nil, rest, nil
	default:
		return nil, b, fmt.Errorf("msgpack: code %#x where a string was expected", c)
	}
	if err != nil {
		return nil, b, err
	}
	if n > len(rest) {
		return nil, b, ErrShort
	}
	return rest[:n:n], rest[n:], nil
}

// ReadString reads a str or bin as a string.
func ReadString(b []byte) (string, []byte, error) {
	p, rest, err := ReadStringBytes(b)
	return string(p), rest, err
}

// ReadBytes reads a bin or str into a copy; nil for a nil.
func ReadBytes(b []byte) ([]byte, []byte, error) {
	p, rest, err := ReadStringBytes(b)
	if p == nil || err != nil {
		return nil, rest, err
	}
	return append(make([]byte, 0, len(p)), p...), rest, nil
}

// ReadInt reads an integer of any width; nil reads as 0. A uint64 above
// the largest int64 wraps, as the reflective codec reads it.
func ReadInt(b []byte) (int64, []byte, error) {
	if len(b) == 0 {
		return 0, b, ErrShort
	}
	c, rest := b[0], b[1:]
	if c <= 0x7f || c >= 0xe0 {
		return int64(int8(c)), rest, nil
	}
	size := 0
	switch c {
	case 0xc0:
		return 0, rest, nil
	case 0xcc, 0xd0:
		size = 1
	case 0xcd, 0xd1:
		size = 2
	case 0xce, 0xd2:
		size = 4
	case 0xcf, 0xd3:
		size = 8
	default:
		return 0, b, fmt.Errorf("msgpack: code %#x where an integer was expected", c)
	}
	if len(rest) < size {
		return 0, b, ErrShort
	}
	var n int64
	switch c {
	case 0xcc:
		n = int64(rest[0])
	case 0xd0:
		n = int64(int8(rest[0]))
	case 0xcd:
		n = int64(binary.BigEndian.Uint16(rest))
	case 0xd1:
		n = int64(int16(binary.BigEndian.Uint16(rest)))
	case 0xce:
		n = int64(binary.BigEndian.Uint32(rest))
	case 0xd2:
		n = int64(int32(binary.BigEndian.Uint32(rest)))
	default: // 0xcf, 0xd3
		n = int64(binary.BigEndian.Uint64(rest))
	}
	return n, rest[size:], nil
}

// ReadBool reads a boolean; nil reads as false.
func ReadBool(b []byte) (bool, []byte, error) {
	if len(b) == 0 {
		return false, b, ErrShort
	}
	switch b[0] {
	case 0xc3:
		return true, b[1:], nil
	case 0xc2, 0xc0:
		return false, b[1:], nil
	}
	return false, b, fmt.Errorf("msgpack: code %#x where a boolean was expected", b[0])
}

// ReadStringMap reads a map of strings to strings; nil for a nil.
func ReadStringMap(b []byte) (map[string]string, []byte, error) {
	return ReadStringMapOf(b, ReadString)
}

// ReadNil reports whether b starts with a nil, and returns b past it if
// so (for a value whose nil reads as something other than an empty one).
func ReadNil(b []byte) (bool, []byte) {
	if len(b) > 0 && b[0] == 0xc0 {
		return true, b[1:]
	}
	return false, b
}

// ReadStringMapOf reads a map of strings to strings, its values read by
// val; nil for a nil.
func ReadStringMapOf(b []byte, val func([]byte) (string, []byte, error)) (map[string]string, []byte, error) {
	if isNil, rest := ReadNil(b); isNil {
		return nil, rest, nil
	}
	n, rest, err := ReadMapHeader(b)
	if err != nil {
		return nil, b, err
	}
	m := make(map[string]string, n)
	for range n {
		var k []byte
		var v string
		if k, rest, err = ReadStringBytes(rest); err != nil {
			return nil, b, err
		}
		if v, rest, err = val(rest); err != nil {
			return nil, b, err
		}
		m[string(k)] = v
	}
	return m, rest, nil
}

// maxDepth bounds the nesting Skip follows: deeper input is refused
// rather than followed down the stack.
const maxDepth = 64

// Skip steps over one value of any type, for a key a newer build wrote.
func Skip(b []byte) ([]byte, error) { return skip(b, 0) }

func skip(b []byte, depth int) ([]byte, error) {
	if depth > maxDepth {
		return b, errors.New("msgpack: value nested too deeply")
	}
	if len(b) == 0 {
		return b, ErrShort
	}
	c, rest := b[0], b[1:]
	var fixed, lenSize int // a payload of fixed bytes, or of a length read first
	switch {
	case c <= 0x7f || c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3:
		return rest, nil
	case c&0xe0 == 0xa0:
		fixed = int(c & 0x1f)
	case c&0xf0 == 0x80, c == 0xde, c == 0xdf:
		n, r, err := ReadMapHeader(b)
		if err != nil {
			return b, err
		}
		return skipN(r, 2*n, depth)
	case c&0xf0 == 0x90, c == 0xdc, c == 0xdd:
		n, r, err := ReadArrayHeader(b)
		if err != nil {
			return b, err
		}
		return skipN(r, n, depth)
	case c == 0xcc || c == 0xd0:
		fixed = 1
	case c == 0xcd || c == 0xd1:
		fixed = 2
	case c == 0xce || c == 0xd2 || c == 0xca:
		fixed = 4
	case c == 0xcf || c == 0xd3 || c == 0xcb:
		fixed = 8
	case c == 0xd4, c == 0xd5, c == 0xd6, c == 0xd7, c == 0xd8: // fixext 1, 2, 4, 8, 16 and its type
		fixed = 1 + 1<<(c-0xd4)
	case c == 0xc4 || c == 0xd9:
		lenSize = 1
	case c == 0xc5 || c == 0xda:
		lenSize = 2
	case c == 0xc6 || c == 0xdb:
		lenSize = 4
	case c == 0xc7, c == 0xc8, c == 0xc9: // ext 8, 16, 32: length, then type
		n, r, err := lengthOf(rest, 1<<(c-0xc7))
		if err != nil {
			return b, err
		}
		fixed, rest = n+1, r
	default: // 0xc1: never used
		return b, fmt.Errorf("msgpack: invalid code %#x", c)
	}
	if lenSize > 0 {
		n, r, err := lengthOf(rest, lenSize)
		if err != nil {
			return b, err
		}
		fixed, rest = n, r
	}
	if fixed > len(rest) {
		return b, ErrShort
	}
	return rest[fixed:], nil
}

func skipN(b []byte, n, depth int) ([]byte, error) {
	for range n {
		var err error
		if b, err = skip(b, depth+1); err != nil {
			return b, err
		}
	}
	return b, nil
}

// BeginMap appends the header of a map whose count is not known yet, in
// its 16-bit form, and returns where it starts, for EndMap.
func BeginMap(b []byte) ([]byte, int) { return append(b, 0xde, 0, 0), len(b) }

// EndMap sets the count of the map BeginMap started at at to n (at most
// 65535 entries).
func EndMap(b []byte, at, n int) { binary.BigEndian.PutUint16(b[at+1:], uint16(n)) }

// Fields appends a map of named fields, as the reflective codec writes a
// struct: a field tagged omitempty is left out when empty, through the
// methods below; any other is written with Key and an Append function.
type Fields struct {
	B     []byte
	at, n int
}

// StartFields starts a map of fields at the end of b.
func StartFields(b []byte) Fields {
	b, at := BeginMap(b)
	return Fields{B: b, at: at}
}

// Key appends the name of a field whose value the caller appends next.
func (f *Fields) Key(k string) {
	f.B = AppendString(f.B, k)
	f.n++
}

// String appends the field k unless v is empty.
func (f *Fields) String(k, v string) {
	if v != "" {
		f.Key(k)
		f.B = AppendString(f.B, v)
	}
}

// Int appends the field k unless v is 0.
func (f *Fields) Int(k string, v int64) {
	if v != 0 {
		f.Key(k)
		f.B = AppendInt(f.B, v)
	}
}

// Bool appends the field k unless v is false.
func (f *Fields) Bool(k string, v bool) {
	if v {
		f.Key(k)
		f.B = AppendBool(f.B, v)
	}
}

// Bytes appends the field k unless v is empty.
func (f *Fields) Bytes(k string, v []byte) {
	if len(v) > 0 {
		f.Key(k)
		f.B = AppendBytes(f.B, v)
	}
}

// StringMap appends the field k unless m is empty.
func (f *Fields) StringMap(k string, m map[string]string) {
	if len(m) > 0 {
		f.Key(k)
		f.B = AppendStringMap(f.B, m)
	}
}

// End sets the map's count and returns the whole input with it appended.
func (f *Fields) End() []byte {
	EndMap(f.B, f.at, f.n)
	return f.B
}

// ReadFields reads a map of named fields: field is called with each name
// (aliasing b) and the input at its value, and returns the input past the
// value; Skip steps over a name it does not know.
func ReadFields(b []byte, field func(k, b []byte) ([]byte, error)) ([]byte, error) {
	n, b, err := ReadMapHeader(b)
	if err != nil {
		return b, err
	}
	for range n {
		var k []byte
		if k, b, err = ReadStringBytes(b); err != nil {
			return b, err
		}
		if b, err = field(k, b); err != nil {
			return b, err
		}
	}
	return b, nil
}
