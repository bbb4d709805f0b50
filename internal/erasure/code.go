package erasure

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/klauspost/reedsolomon"
)

// A shard stream is a header followed by one record per block of the
// object: a CRC-32C of the shard's piece of the block, then the piece.
// Every block but the last is BlockSize bytes of the object; a block of n
// bytes gives each shard ceil(n/Data) bytes (the last data shard padded
// with zeros), so the offset of any block in any shard is known from the
// block size alone and a range of the object is read without reading the
// blocks before it.
//
// Header (16 bytes): "TLEC", format version, data, parity, shard index,
// block size (uint32, big-endian), CRC-32C of the 12 bytes before it.
// Footer (12 bytes, after the last block): the object's size (uint64,
// big-endian) and its CRC-32C, so that a shard stream says on its own what
// it holds and a reader or a heal needs nothing but the shards.
const (
	headerSize    = 16
	footerSize    = 12
	formatVersion = 1
	crcSize       = 4
	magic         = "TLEC"
)

// Block sizes a code accepts. 1 MiB is the default: large enough that
// the per-block work is small next to the coding, small enough that a
// range read decodes little it does not return.
const (
	MinBlockSize     = 4 << 10
	MaxBlockSize     = 16 << 20
	DefaultBlockSize = 1 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt marks a shard whose header or block checksum does not match.
var ErrCorrupt = errors.New("erasure: shard corrupt")

// Code codes objects in one layout and block size. It is safe for
// concurrent use; each Writer, Reader and Rebuild has its own buffers.
type Code struct {
	layout    Layout
	blockSize int
	enc       reedsolomon.Encoder // nil when the layout has no parity
}

// Option changes how a Code is built.
type Option func(*[]reedsolomon.Option)

// WithoutSIMD makes the code use the library's portable Go paths only: for
// benchmarks that show what the SIMD paths are worth.
func WithoutSIMD() Option {
	return func(o *[]reedsolomon.Option) {
		*o = append(*o, reedsolomon.WithSSSE3(false), reedsolomon.WithAVX2(false),
			reedsolomon.WithAVX512(false), reedsolomon.WithGFNI(false), reedsolomon.WithAVXGFNI(false))
	}
}

// New returns the code for layout l and blockSize (0 for DefaultBlockSize).
func New(l Layout, blockSize int, opts ...Option) (*Code, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if blockSize == 0 {
		blockSize = DefaultBlockSize
	}
	if blockSize < MinBlockSize || blockSize > MaxBlockSize {
		return nil, fmt.Errorf("erasure: block size %d outside [%d, %d]", blockSize, MinBlockSize, MaxBlockSize)
	}
	c := &Code{layout: l, blockSize: blockSize}
	if l.Parity > 0 {
		var ro []reedsolomon.Option
		for _, o := range opts {
			o(&ro)
		}
		// The shards of one block are small (block size / Data); more
		// goroutines than that warrants cost more than they save.
		ro = append(ro, reedsolomon.WithAutoGoroutines(blockSize/l.Data))
		enc, err := reedsolomon.New(l.Data, l.Parity, ro...)
		if err != nil {
			return nil, fmt.Errorf("erasure: %w", err)
		}
		c.enc = enc
	}
	return c, nil
}

// Layout is the code's layout.
func (c *Code) Layout() Layout { return c.layout }

// BlockSize is the code's block size.
func (c *Code) BlockSize() int { return c.blockSize }

// chunk is how many bytes each shard holds of a block of n bytes.
func (c *Code) chunk(n int) int { return (n + c.layout.Data - 1) / c.layout.Data }

// blocks is how many blocks an object of size bytes has.
func (c *Code) blocks(size int64) int64 {
	return (size + int64(c.blockSize) - 1) / int64(c.blockSize)
}

// blockLen is the object bytes in block b of an object of size bytes.
func (c *Code) blockLen(b, size int64) int {
	return int(min(int64(c.blockSize), size-b*int64(c.blockSize)))
}

// blockOffset is where block b starts in a shard stream.
func (c *Code) blockOffset(b int64) int64 {
	return headerSize + b*int64(crcSize+c.chunk(c.blockSize))
}

// ShardSize is the length of each shard stream of an object of size bytes.
func (c *Code) ShardSize(size int64) int64 {
	return c.footerOffset(size) + footerSize
}

// footerOffset is where the footer starts in a shard stream.
func (c *Code) footerOffset(size int64) int64 {
	n := c.blocks(size)
	if n == 0 {
		return headerSize
	}
	return c.blockOffset(n-1) + crcSize + int64(c.chunk(c.blockLen(n-1, size)))
}

func footer(size int64) []byte {
	f := make([]byte, footerSize)
	binary.BigEndian.PutUint64(f, uint64(size))
	binary.BigEndian.PutUint32(f[8:], crc32.Checksum(f[:8], castagnoli))
	return f
}

// ParseFooter reads the object size from a shard stream's footer.
func ParseFooter(f []byte) (int64, error) {
	if len(f) != footerSize || crc32.Checksum(f[:8], castagnoli) != binary.BigEndian.Uint32(f[8:]) {
		return 0, fmt.Errorf("%w: footer", ErrCorrupt)
	}
	size := binary.BigEndian.Uint64(f)
	if size > 1<<62 {
		return 0, fmt.Errorf("%w: footer size %d", ErrCorrupt, size)
	}
	return int64(size), nil
}

// StreamSize reads the size of the object whose shard stream of length
// n is src, checking that the stream has exactly the length that size
// gives: a shard cut short or grown is not taken for a smaller or larger
// object.
func (c *Code) StreamSize(src io.ReaderAt, n int64) (int64, error) {
	if n < headerSize+footerSize {
		return 0, fmt.Errorf("%w: stream of %d bytes", ErrCorrupt, n)
	}
	f := make([]byte, footerSize)
	if err := readFull(src, f, n-footerSize); err != nil {
		return 0, err
	}
	size, err := ParseFooter(f)
	if err != nil {
		return 0, err
	}
	if c.ShardSize(size) != n {
		return 0, fmt.Errorf("%w: stream of %d bytes for an object of %d", ErrCorrupt, n, size)
	}
	return size, nil
}

// header is shard index's stream header.
func (c *Code) header(index int) []byte {
	h := make([]byte, headerSize)
	copy(h, magic)
	h[4] = formatVersion
	h[5], h[6], h[7] = byte(c.layout.Data), byte(c.layout.Parity), byte(index)
	binary.BigEndian.PutUint32(h[8:12], uint32(c.blockSize))
	binary.BigEndian.PutUint32(h[12:16], crc32.Checksum(h[:12], castagnoli))
	return h
}

// ShardHeader is what a shard stream's header says.
type ShardHeader struct {
	Layout    Layout
	Index     int
	BlockSize int
}

// ParseHeader reads a shard stream's header.
func ParseHeader(h []byte) (ShardHeader, error) {
	if len(h) < headerSize {
		return ShardHeader{}, fmt.Errorf("%w: header of %d bytes", ErrCorrupt, len(h))
	}
	if string(h[:4]) != magic {
		return ShardHeader{}, fmt.Errorf("%w: not a shard", ErrCorrupt)
	}
	if crc32.Checksum(h[:12], castagnoli) != binary.BigEndian.Uint32(h[12:16]) {
		return ShardHeader{}, fmt.Errorf("%w: header checksum", ErrCorrupt)
	}
	if h[4] != formatVersion {
		return ShardHeader{}, fmt.Errorf("%w: format version %d", ErrCorrupt, h[4])
	}
	sh := ShardHeader{
		Layout:    Layout{Data: int(h[5]), Parity: int(h[6])},
		Index:     int(h[7]),
		BlockSize: int(binary.BigEndian.Uint32(h[8:12])),
	}
	if err := sh.Layout.Validate(); err != nil || sh.Index >= sh.Layout.Shards() ||
		sh.BlockSize < MinBlockSize || sh.BlockSize > MaxBlockSize {
		return ShardHeader{}, fmt.Errorf("%w: header %+v out of bounds", ErrCorrupt, sh)
	}
	return sh, nil
}

// blockBuf holds one block's shards: the data shards as consecutive
// pieces of one buffer (so a block is filled by plain copies and read
// back the same way), the parity shards beside it.
type blockBuf struct {
	data   []byte
	shards [][]byte
	room   int // the largest block it holds
}

// newBlockBuf returns the buffers for blocks of up to n bytes (at most the
// block size): an object smaller than a block gets buffers of its size,
// not a block's.
func (c *Code) newBlockBuf(n int) *blockBuf {
	ch := c.chunk(n)
	b := &blockBuf{data: make([]byte, ch*c.layout.Data), shards: make([][]byte, c.layout.Shards()), room: n}
	for i := c.layout.Data; i < c.layout.Shards(); i++ {
		b.shards[i] = make([]byte, ch)
	}
	return b
}

// cut points the shards at the pieces of a block of n bytes, zeroing the
// padding of the last data shard.
func (b *blockBuf) cut(c *Code, n int) {
	ch := c.chunk(n)
	clear(b.data[n : ch*c.layout.Data])
	for i := range c.layout.Data {
		b.shards[i] = b.data[i*ch : (i+1)*ch]
	}
	for i := c.layout.Data; i < c.layout.Shards(); i++ {
		b.shards[i] = b.shards[i][:ch]
	}
}
