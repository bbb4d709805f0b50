package peerhttp

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// errMsgpackBounds is a MessagePack body whose declared sizes exceed it.
var errMsgpackBounds = errors.New("malformed MessagePack: a length exceeds the body")

// checkMsgpack walks one MessagePack value (and everything nested in it)
// and checks that no string, binary, array or map claims more than the
// bytes left, and that nothing follows the value. The decoder allocates
// what a length prefix claims before reading the elements, so a body from
// the network passes this check first: allocations then stay bounded by
// the body's size.
func checkMsgpack(b []byte) error {
	pos, pending := 0, 1
	need := func(n uint64) bool { return n <= uint64(len(b)-pos) }
	read := func(size int) (uint64, bool) {
		if !need(uint64(size)) {
			return 0, false
		}
		var v uint64
		switch size {
		case 1:
			v = uint64(b[pos])
		case 2:
			v = uint64(binary.BigEndian.Uint16(b[pos:]))
		case 4:
			v = uint64(binary.BigEndian.Uint32(b[pos:]))
		}
		pos += size
		return v, true
	}
	// skip consumes n bytes; items adds n values still to read.
	skip := func(n uint64) bool {
		if !need(n) {
			return false
		}
		pos += int(n)
		return true
	}
	items := func(n uint64) bool {
		if !need(n) { // each value takes at least one byte
			return false
		}
		pending += int(n)
		return true
	}
	for pending > 0 {
		if pos >= len(b) {
			return errMsgpackBounds
		}
		c := b[pos]
		pos++
		pending--
		ok := true
		switch {
		case c <= 0x7f, c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3:
		case c&0xf0 == 0x80:
			ok = items(2 * uint64(c&0x0f))
		case c&0xf0 == 0x90:
			ok = items(uint64(c & 0x0f))
		case c&0xe0 == 0xa0:
			ok = skip(uint64(c & 0x1f))
		default:
			ok = checkTyped(c, read, skip, items)
		}
		if !ok {
			return errMsgpackBounds
		}
	}
	if pos != len(b) {
		return errMsgpackBounds
	}
	return nil
}

// Sizes of the MessagePack type codes 0xc4..0xdf: the length prefix of
// bin and str, the length prefix of ext, the payload of fixed-size values.
var (
	msgpackLenOf  = map[byte]int{0xc4: 1, 0xc5: 2, 0xc6: 4, 0xd9: 1, 0xda: 2, 0xdb: 4}
	msgpackExtLen = map[byte]int{0xc7: 1, 0xc8: 2, 0xc9: 4}
	msgpackFixed  = map[byte]uint64{0xca: 4, 0xcb: 8, 0xcc: 1, 0xcd: 2, 0xce: 4, 0xcf: 8, 0xd0: 1, 0xd1: 2, 0xd2: 4,
		0xd3: 8, 0xd4: 2, 0xd5: 3, 0xd6: 5, 0xd7: 9, 0xd8: 17}
)

// checkTyped handles the MessagePack type codes 0xc4..0xdf.
func checkTyped(c byte, read func(int) (uint64, bool), skip, items func(uint64) bool) bool {
	if size, isBytes := msgpackLenOf[c]; isBytes { // bin, str
		n, ok := read(size)
		return ok && skip(n)
	}
	if size, isExt := msgpackExtLen[c]; isExt {
		n, ok := read(size)
		return ok && skip(n+1)
	}
	if n, isFixed := msgpackFixed[c]; isFixed {
		return skip(n)
	}
	switch c {
	case 0xdc, 0xdd, 0xde, 0xdf:
		size := 2
		if c == 0xdd || c == 0xdf {
			size = 4
		}
		n, ok := read(size)
		if c >= 0xde {
			n *= 2
		}
		return ok && items(n)
	}
	return false // 0xc1 is never used
}

// decodeMsgpack decodes a body from the network into v: checkMsgpack
// first, so allocations stay bounded by the body's size, then the decoder,
// which panics on some well-formed inputs (a nil where a struct such as
// time.Time is expected, found by FuzzDecodeIAM); such a body is an error
// like any other malformed one, never a panic in the handler.
func decodeMsgpack(raw []byte, v any) (err error) {
	if err := checkMsgpack(raw); err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("malformed MessagePack body: %v", p)
		}
	}()
	return msgpack.Unmarshal(raw, v)
}
