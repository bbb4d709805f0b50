package checksum

import (
	"encoding/binary"
	"hash"
	"sync"
)

// crc64NVMEPoly is the CRC-64/NVME polynomial in reflected (LSB-first) form.
// The standard library's hash/crc64 can build a table for it but only
// accelerates its two built-in polynomials, so this file carries its own
// slicing-by-8 implementation.
const crc64NVMEPoly = 0x9a6c9329ac4bc9b5

// crc64Tables holds eight 256-entry tables for slicing-by-8: tables[0] is
// the classic byte-at-a-time table and tables[k][b] is the CRC of byte b
// followed by k zero bytes.
type crc64Tables [8][256]uint64

// nvmeTables is built once on first use and read-only thereafter.
var nvmeTables = sync.OnceValue(func() *crc64Tables {
	return buildCRC64Tables(crc64NVMEPoly)
})

func buildCRC64Tables(poly uint64) *crc64Tables {
	t := new(crc64Tables)
	for i := range 256 {
		crc := uint64(i)
		for range 8 {
			if crc&1 == 1 {
				crc = crc>>1 ^ poly
			} else {
				crc >>= 1
			}
		}
		t[0][i] = crc
	}
	for i := range 256 {
		crc := t[0][i]
		for k := 1; k < 8; k++ {
			crc = t[0][crc&0xff] ^ crc>>8
			t[k][i] = crc
		}
	}
	return t
}

// updateCRC64 extends crc (a finished CRC value: init and final XOR of all
// ones are applied here) with p.
func updateCRC64(t *crc64Tables, crc uint64, p []byte) uint64 {
	crc = ^crc
	for len(p) >= 8 {
		crc ^= binary.LittleEndian.Uint64(p)
		crc = t[7][crc&0xff] ^ t[6][crc>>8&0xff] ^ t[5][crc>>16&0xff] ^
			t[4][crc>>24&0xff] ^ t[3][crc>>32&0xff] ^ t[2][crc>>40&0xff] ^
			t[1][crc>>48&0xff] ^ t[0][crc>>56]
		p = p[8:]
	}
	for _, b := range p {
		crc = t[0][byte(crc)^b] ^ crc>>8
	}
	return ^crc
}

// crc64Digest is a hash.Hash64 for CRC-64/NVME whose Sum is big-endian.
type crc64Digest struct {
	tables *crc64Tables
	crc    uint64
}

var _ hash.Hash64 = (*crc64Digest)(nil)

func newCRC64NVME() *crc64Digest { return &crc64Digest{tables: nvmeTables()} }

func (d *crc64Digest) Write(p []byte) (int, error) {
	d.crc = updateCRC64(d.tables, d.crc, p)
	return len(p), nil
}

func (d *crc64Digest) Sum(b []byte) []byte { return binary.BigEndian.AppendUint64(b, d.crc) }
func (d *crc64Digest) Sum64() uint64       { return d.crc }
func (d *crc64Digest) Reset()              { d.crc = 0 }
func (d *crc64Digest) Size() int           { return 8 }
func (d *crc64Digest) BlockSize() int      { return 1 }
