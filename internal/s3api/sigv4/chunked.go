package sigv4

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"net/textproto"
	"slices"
	"strings"
)

const (
	// chunkBufferSize is the read buffer; large reads of chunk data bypass it.
	chunkBufferSize = 16 << 10
	// maxChunkLine bounds a chunk header or trailer line. A signed chunk
	// header is under 100 bytes; the slack is for chunk extensions.
	maxChunkLine = 4 << 10
	// maxChunkSize bounds a chunk when the decoded length is unknown: S3's
	// largest single upload. Chunks are streamed, never buffered, so this
	// only keeps sizes sane; a known decoded length bounds them tighter.
	maxChunkSize = 5 << 30
	// maxTrailers bounds the trailing headers of one body.
	maxTrailers = 16

	chunkSignaturePrefix = ";chunk-signature="
	trailerSignatureName = "x-amz-trailer-signature"
	chunkAlgorithm       = "AWS4-HMAC-SHA256-PAYLOAD"
	trailerAlgorithm     = "AWS4-HMAC-SHA256-TRAILER"
	emptySHA256          = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

// chunkedReader decodes an aws-chunked body:
//
//	hex-size[;chunk-signature=sig]\r\n data \r\n ... 0[;chunk-signature=sig]\r\n
//	[name:value\r\n ...] [x-amz-trailer-signature:sig\r\n] \r\n
//
// It streams: memory use is the read buffer and a handful of trailers,
// whatever the input. In signed modes every chunk's signature chains from
// the previous one, starting at the request's seed signature.
type chunkedReader struct {
	body io.Closer
	br   *bufio.Reader
	res  *Result
	mode PayloadMode

	left    int64 // data bytes of the current chunk still to read
	decoded int64 // data bytes read so far

	// Signed modes only.
	data     hash.Hash             // SHA-256 of the current chunk's data
	mac      hash.Hash             // HMAC keyed with the signing key
	prevSig  [2 * sha256.Size]byte // hex signature of the previous chunk
	claimed  [sha256.Size]byte     // signature the current chunk claims
	sum, got [sha256.Size]byte     // scratch, kept here so nothing escapes per chunk
	buf      []byte                // scratch for strings to sign
	trailers []trailer             // received trailing headers, in order
	sigSeen  bool                  // trailer signature read and verified
	err      error                 // sticky
}

type trailer struct{ name, value string }

func newChunkedReader(body io.ReadCloser, res *Result) *chunkedReader {
	c := &chunkedReader{
		body: body,
		br:   bufio.NewReaderSize(body, chunkBufferSize),
		res:  res,
		mode: res.Payload,
	}
	if c.mode.chunkSigned() {
		c.data = sha256.New()
		c.mac = hmac.New(sha256.New, res.key[:])
		copy(c.prevSig[:], res.Signature)
		c.buf = make([]byte, 0, 256)
	}
	return c
}

// Read returns decoded payload bytes. See Result.Body for the contract.
func (c *chunkedReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if c.left == 0 {
		if c.err = c.nextChunk(); c.err != nil {
			return 0, c.err
		}
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.br.Read(p)
	c.left -= int64(n)
	c.decoded += int64(n)
	if c.data != nil {
		c.data.Write(p[:n])
	}
	if err == nil && c.left == 0 {
		err = c.endChunk()
	}
	if err != nil {
		c.err = incompleteOnEOF(err)
	}
	return n, c.err
}

// Close closes the request body.
func (c *chunkedReader) Close() error { return c.body.Close() }

// nextChunk reads a chunk header. On the final chunk it finishes the body
// and returns io.EOF.
func (c *chunkedReader) nextChunk() error {
	line, err := c.readLine()
	if err != nil {
		return incompleteOnEOF(err)
	}
	size, err := parseChunkHeader(line, c.mode.chunkSigned(), &c.claimed)
	if err != nil {
		return err
	}
	if want := c.res.DecodedLength; want >= 0 && size > want-c.decoded {
		return fmt.Errorf("%w: more than %d bytes", ErrDecodedLengthMismatch, want)
	}
	if c.data != nil {
		c.data.Reset()
	}
	if size == 0 {
		return c.finish()
	}
	c.left = size
	return nil
}

// endChunk consumes the CRLF after a chunk's data and verifies the chunk.
func (c *chunkedReader) endChunk() error {
	cr, err := c.br.ReadByte()
	if err != nil {
		return err
	}
	lf, err := c.br.ReadByte()
	if err != nil {
		return err
	}
	if cr != '\r' || lf != '\n' {
		return fmt.Errorf("%w: chunk data not followed by CRLF", ErrMalformedChunk)
	}
	return c.verifyChunk()
}

// finish handles what follows the final chunk header: its signature, the
// length check, the trailer section, and the end of the body.
func (c *chunkedReader) finish() error {
	if err := c.verifyChunk(); err != nil {
		return err
	}
	if want := c.res.DecodedLength; want >= 0 && c.decoded != want {
		return fmt.Errorf("%w: got %d bytes, declared %d", ErrDecodedLengthMismatch, c.decoded, want)
	}
	var err error
	if c.mode.hasTrailer() {
		err = c.readTrailers()
	} else {
		err = c.readFinalCRLF()
	}
	if err != nil {
		return err
	}
	switch _, err := c.br.ReadByte(); err {
	case io.EOF:
		return io.EOF
	case nil:
		return fmt.Errorf("%w: data after the final chunk", ErrMalformedChunk)
	default:
		return err
	}
}

// readFinalCRLF reads the empty line that ends a body without trailers.
// A body that simply ends there is accepted too: nothing is missing.
func (c *chunkedReader) readFinalCRLF() error {
	line, err := c.readLine()
	switch {
	case err == io.EOF:
		return nil
	case err != nil:
		return err
	case len(line) != 0:
		return fmt.Errorf("%w: trailing data in a body without trailers", ErrMalformedChunk)
	}
	return nil
}

// verifyChunk checks the current chunk's signature in signed modes:
// HMAC(key, "AWS4-HMAC-SHA256-PAYLOAD\n" + time + "\n" + scope + "\n" +
// previous signature + "\n" + hex(SHA-256("")) + "\n" + hex(SHA-256(data))).
func (c *chunkedReader) verifyChunk() error {
	if c.mac == nil {
		return nil
	}
	c.data.Sum(c.sum[:0])
	c.buf = c.appendSigningPrefix(c.buf[:0], chunkAlgorithm)
	c.buf = append(c.buf, emptySHA256+"\n"...)
	c.buf = hex.AppendEncode(c.buf, c.sum[:])
	return c.checkChained(&c.claimed)
}

// appendSigningPrefix appends the lines every chunk and trailer string to
// sign starts with.
func (c *chunkedReader) appendSigningPrefix(dst []byte, alg string) []byte {
	dst = append(dst, alg...)
	dst = append(dst, '\n')
	dst = append(dst, c.res.amzDate...)
	dst = append(dst, '\n')
	dst = append(dst, c.res.scope...)
	dst = append(dst, '\n')
	dst = append(dst, c.prevSig[:]...)
	return append(dst, '\n')
}

// checkChained signs c.buf, compares the result with claimed in constant
// time and, on success, makes it the previous signature of the chain.
func (c *chunkedReader) checkChained(claimed *[sha256.Size]byte) error {
	c.mac.Reset()
	c.mac.Write(c.buf)
	c.mac.Sum(c.got[:0])
	if !hmac.Equal(c.got[:], claimed[:]) {
		return ErrChunkSignatureMismatch
	}
	hex.Encode(c.prevSig[:], c.got[:])
	return nil
}

// readLine reads one CRLF-terminated line of at most maxChunkLine bytes
// and returns it without the CRLF, valid until the next read. It returns
// io.EOF only if the body ends before the line starts.
func (c *chunkedReader) readLine() ([]byte, error) { return c.readLineEnding(true) }

// readLineEnding is readLine; with crlf false a bare LF also ends a line.
func (c *chunkedReader) readLineEnding(crlf bool) ([]byte, error) {
	line, err := c.br.ReadSlice('\n')
	switch {
	case err == bufio.ErrBufferFull || len(line) > maxChunkLine:
		return nil, fmt.Errorf("%w: line too long", ErrMalformedChunk)
	case err == io.EOF && len(line) == 0:
		return nil, io.EOF
	case err == io.EOF:
		return nil, ErrIncompleteBody
	case err != nil:
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		return line[:n-1], nil
	}
	if crlf {
		return nil, fmt.Errorf("%w: line not terminated by CRLF", ErrMalformedChunk)
	}
	return line, nil
}

// parseChunkHeader parses "hex-size[;ext]". In signed modes the extension
// must be exactly ";chunk-signature=" and 64 hex digits, decoded into sig;
// otherwise extensions are ignored.
func parseChunkHeader(line []byte, signed bool, sig *[sha256.Size]byte) (int64, error) {
	sizeText, ext := line, []byte(nil)
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		sizeText, ext = line[:i], line[i:]
	}
	size, ok := parseHexSize(sizeText)
	if !ok {
		return 0, fmt.Errorf("%w: bad chunk size", ErrMalformedChunk)
	}
	if !signed {
		return size, nil
	}
	hexSig, ok := bytes.CutPrefix(ext, []byte(chunkSignaturePrefix))
	if !ok {
		return 0, fmt.Errorf("%w: missing chunk-signature", ErrMalformedChunk)
	}
	if *sig, ok = decodeHex32(hexSig); !ok {
		return 0, fmt.Errorf("%w: bad chunk-signature", ErrMalformedChunk)
	}
	return size, nil
}

// parseHexSize parses a non-empty hex chunk size no larger than
// maxChunkSize.
func parseHexSize(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		d, ok := fromHex(c)
		if !ok {
			return 0, false
		}
		if n = n<<4 | int64(d); n > maxChunkSize {
			return 0, false
		}
	}
	return n, true
}

// readTrailers reads the trailer section to the end of the body, verifying
// the trailer signature in signed mode. Besides the CRLF-terminated lines
// and final empty line AWS SDKs send, it accepts what minio-go (and so mc)
// sends: each trailer ended by a bare LF, then blank lines around the
// signature ("name:value\n\r\nx-amz-trailer-signature:sig\r\n\r\n").
// Skipping blank lines waives no check: every trailer must still be
// declared and, in signed mode, covered by the signature.
func (c *chunkedReader) readTrailers() error {
	for blank := 0; ; {
		line, err := c.readLineEnding(false)
		if err == io.EOF {
			return c.closeTrailers()
		}
		if err != nil {
			return err
		}
		if len(line) == 0 {
			if blank++; blank > maxTrailers+2 {
				return fmt.Errorf("%w: too many blank lines", ErrMalformedTrailer)
			}
			continue
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok || c.sigSeen {
			return fmt.Errorf("%w: expected name:value, and nothing after the signature", ErrMalformedTrailer)
		}
		if c.mac != nil && string(name) == trailerSignatureName {
			err = c.verifyTrailers(value)
		} else {
			err = c.addTrailer(string(name), string(bytes.TrimSpace(value)))
		}
		if err != nil {
			return err
		}
	}
}

// addTrailer records a trailing header, which x-amz-trailer must declare.
func (c *chunkedReader) addTrailer(name, value string) error {
	name = strings.ToLower(name)
	if !isLowerToken(name) || len(c.trailers) == maxTrailers || !containsString(c.res.declaredTrailers, name) {
		return fmt.Errorf("%w: undeclared or invalid trailer", ErrMalformedTrailer)
	}
	for _, t := range c.trailers {
		if t.name == name {
			return fmt.Errorf("%w: trailer %s repeated", ErrMalformedTrailer, name)
		}
	}
	c.trailers = append(c.trailers, trailer{name, value})
	if c.res.trailers == nil {
		c.res.trailers = make(map[string][]string, len(c.res.declaredTrailers))
	}
	c.res.trailers[textproto.CanonicalMIMEHeaderKey(name)] = []string{value}
	return nil
}

// verifyTrailers checks x-amz-trailer-signature:
// HMAC(key, "AWS4-HMAC-SHA256-TRAILER\n" + time + "\n" + scope + "\n" +
// final chunk signature + "\n" + hex(SHA-256(canonical trailers))), where
// the canonical trailers are "name:value\n" sorted by name.
func (c *chunkedReader) verifyTrailers(sigText []byte) error {
	claimed, ok := decodeHex32(bytes.TrimSpace(sigText))
	if !ok {
		return fmt.Errorf("%w: bad x-amz-trailer-signature", ErrMalformedTrailer)
	}
	h := sha256.New()
	for _, t := range sortedTrailers(c.trailers) {
		c.buf = append(append(append(append(c.buf[:0], t.name...), ':'), t.value...), '\n')
		h.Write(c.buf)
	}
	h.Sum(c.sum[:0])
	c.buf = c.appendSigningPrefix(c.buf[:0], trailerAlgorithm)
	c.buf = hex.AppendEncode(c.buf, c.sum[:])
	if err := c.checkChained(&claimed); err != nil {
		return err
	}
	c.sigSeen = true
	return nil
}

// closeTrailers ends the trailer section: every declared trailer must have
// arrived and, in signed mode, the signature over them.
func (c *chunkedReader) closeTrailers() error {
	for _, name := range c.res.declaredTrailers {
		if _, ok := c.res.trailers[textproto.CanonicalMIMEHeaderKey(name)]; !ok {
			return fmt.Errorf("%w: declared trailer %s missing", ErrMalformedTrailer, name)
		}
	}
	if c.mac != nil && !c.sigSeen {
		return fmt.Errorf("%w: missing %s", ErrMalformedTrailer, trailerSignatureName)
	}
	return nil
}

func sortedTrailers(ts []trailer) []trailer {
	out := slices.Clone(ts)
	slices.SortFunc(out, func(a, b trailer) int { return strings.Compare(a.name, b.name) })
	return out
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// incompleteOnEOF turns an end of body in the middle of the stream into
// ErrIncompleteBody.
func incompleteOnEOF(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return ErrIncompleteBody
	}
	return err
}
