package sigv4

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// PayloadMode says how a request's payload is protected, as declared by its
// x-amz-content-sha256 header.
type PayloadMode int

// Payload modes. The zero value is not a mode.
const (
	// PayloadSigned: x-amz-content-sha256 is the payload's SHA-256, which the
	// body reader checks at EOF.
	PayloadSigned PayloadMode = iota + 1
	// PayloadUnsigned: UNSIGNED-PAYLOAD; the body is not protected.
	PayloadUnsigned
	// PayloadStreamingSigned: STREAMING-AWS4-HMAC-SHA256-PAYLOAD; aws-chunked
	// body, every chunk signed.
	PayloadStreamingSigned
	// PayloadStreamingSignedTrailer: STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER;
	// signed chunks followed by signed trailing headers.
	PayloadStreamingSignedTrailer
	// PayloadStreamingUnsignedTrailer: STREAMING-UNSIGNED-PAYLOAD-TRAILER;
	// unsigned aws-chunked body with trailing headers, what AWS SDKs send for
	// uploads with a trailing checksum.
	PayloadStreamingUnsignedTrailer
)

// Values of x-amz-content-sha256 other than a digest.
const (
	unsignedPayload               = "UNSIGNED-PAYLOAD"
	streamingSignedPayload        = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	streamingSignedTrailerValue   = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	streamingUnsignedTrailerValue = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
)

// String returns the x-amz-content-sha256 value that selects the mode, or
// "signed" for PayloadSigned.
func (m PayloadMode) String() string {
	switch m {
	case PayloadSigned:
		return "signed"
	case PayloadUnsigned:
		return unsignedPayload
	case PayloadStreamingSigned:
		return streamingSignedPayload
	case PayloadStreamingSignedTrailer:
		return streamingSignedTrailerValue
	case PayloadStreamingUnsignedTrailer:
		return streamingUnsignedTrailerValue
	}
	return "PayloadMode(" + strconv.Itoa(int(m)) + ")"
}

// streaming reports whether the body is aws-chunked.
func (m PayloadMode) streaming() bool {
	return m >= PayloadStreamingSigned && m <= PayloadStreamingUnsignedTrailer
}

// chunkSigned reports whether chunks carry signatures.
func (m PayloadMode) chunkSigned() bool {
	return m == PayloadStreamingSigned || m == PayloadStreamingSignedTrailer
}

// hasTrailer reports whether trailing headers follow the final chunk.
func (m PayloadMode) hasTrailer() bool {
	return m == PayloadStreamingSignedTrailer || m == PayloadStreamingUnsignedTrailer
}

// payloadClaim is a parsed x-amz-content-sha256.
type payloadClaim struct {
	mode PayloadMode
	// canonical is the payload line of the canonical request.
	canonical string
	// sum is the expected digest for PayloadSigned.
	sum [sha256.Size]byte
}

// parsePayloadClaim parses an x-amz-content-sha256 value. Besides the AWS
// forms it accepts a base64 digest, which the Iceberg Java REST signer sends
// in the header while signing the hex form.
func parsePayloadClaim(v string) (payloadClaim, error) {
	switch v {
	case unsignedPayload:
		return payloadClaim{mode: PayloadUnsigned, canonical: v}, nil
	case streamingSignedPayload:
		return payloadClaim{mode: PayloadStreamingSigned, canonical: v}, nil
	case streamingSignedTrailerValue:
		return payloadClaim{mode: PayloadStreamingSignedTrailer, canonical: v}, nil
	case streamingUnsignedTrailerValue:
		return payloadClaim{mode: PayloadStreamingUnsignedTrailer, canonical: v}, nil
	}
	if sum, ok := decodeHex32(v); ok {
		return payloadClaim{mode: PayloadSigned, canonical: v, sum: sum}, nil
	}
	if len(v) == base64.StdEncoding.EncodedLen(sha256.Size) {
		var sum [sha256.Size]byte
		if n, err := base64.StdEncoding.Decode(sum[:], []byte(v)); err == nil && n == sha256.Size {
			return payloadClaim{mode: PayloadSigned, canonical: hex.EncodeToString(sum[:]), sum: sum}, nil
		}
	}
	return payloadClaim{}, ErrInvalidContentSHA256
}

// hashBody reads r's whole body, at most limit bytes, and puts it back as a
// replayable reader. It serves services that sign the payload's digest
// without sending it, which leaves no way to check the signature but to
// hash the body first.
func hashBody(r *http.Request, limit int64) (payloadClaim, error) {
	if r.ContentLength > limit {
		return payloadClaim{}, ErrPayloadTooLarge
	}
	body := r.Body
	if body == nil {
		body = http.NoBody
	}
	data, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err != nil {
		return payloadClaim{}, fmt.Errorf("sigv4: reading body to hash it: %w", err)
	}
	if int64(len(data)) > limit {
		return payloadClaim{}, ErrPayloadTooLarge
	}
	r.Body = readCloser{bytes.NewReader(data), body}
	sum := sha256.Sum256(data)
	return payloadClaim{mode: PayloadSigned, canonical: hex.EncodeToString(sum[:]), sum: sum}, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// parseDecodedLength reads x-amz-decoded-content-length, -1 when absent.
func parseDecodedLength(h http.Header) (int64, error) {
	v, ok := h["X-Amz-Decoded-Content-Length"]
	if !ok {
		return -1, nil
	}
	if len(v) != 1 {
		return 0, ErrInvalidDecodedContentLength
	}
	n, err := strconv.ParseInt(v[0], 10, 64)
	if err != nil || n < 0 || strings.HasPrefix(v[0], "+") {
		return 0, ErrInvalidDecodedContentLength
	}
	return n, nil
}

// parseDeclaredTrailers splits x-amz-trailer into lower-case names.
func parseDeclaredTrailers(h http.Header) ([]string, error) {
	var names []string
	for _, v := range h["X-Amz-Trailer"] {
		for name := range strings.SplitSeq(v, ",") {
			name = strings.ToLower(strings.TrimSpace(name))
			if name == "" {
				continue
			}
			if len(names) == maxTrailers || !isLowerToken(name) {
				return nil, fmt.Errorf("%w: bad x-amz-trailer", ErrMalformedTrailer)
			}
			names = append(names, name)
		}
	}
	return names, nil
}

// Body returns a reader over r's payload as the client meant it, checked
// as Payload requires:
//
//   - PayloadSigned: the bytes pass through; at the end the reader returns
//     ErrContentSHA256Mismatch instead of io.EOF if the digest differs.
//   - PayloadUnsigned: the body as is.
//   - Streaming modes: aws-chunked framing removed, each chunk signature
//     (and the trailer signature) verified along the chain from the seed
//     signature, the decoded length held to x-amz-decoded-content-length,
//     trailing headers collected for Trailers.
//
// Bytes are handed out as they arrive, before the check that covers them
// completes, so the caller must not commit anything it read until the
// reader returned io.EOF; any other error means the payload is not the
// signed one. Errors are sticky. Body should be called once per Result; the
// reader is not safe for concurrent use. Closing it closes r.Body.
func (res *Result) Body(r *http.Request) io.ReadCloser {
	body := r.Body
	if body == nil {
		body = http.NoBody
	}
	switch {
	case res.Payload == PayloadUnsigned, res.Payload == PayloadSigned && res.bodyHashed:
		return body
	case res.Payload == PayloadSigned:
		return &hashingReader{body: body, hash: sha256.New(), want: res.sum}
	case res.Payload.streaming():
		return newChunkedReader(body, res)
	}
	return readCloser{errReader{fmt.Errorf("sigv4: no payload mode %v", res.Payload)}, body}
}

// Trailers returns the trailing headers decoded from an aws-chunked body so
// far, keyed in canonical form (Get("x-amz-checksum-crc32") works). It is
// complete once the body reader has returned io.EOF, and nil if there were
// none. It must not be called concurrently with reading the body.
func (res *Result) Trailers() http.Header {
	return res.trailers
}

// hashingReader passes a body through and checks its SHA-256 at the end.
type hashingReader struct {
	body io.ReadCloser
	hash hash.Hash
	want [sha256.Size]byte
	err  error
}

func (h *hashingReader) Read(p []byte) (int, error) {
	if h.err != nil {
		return 0, h.err
	}
	n, err := h.body.Read(p)
	h.hash.Write(p[:n])
	if err == io.EOF {
		var got [sha256.Size]byte
		if h.hash.Sum(got[:0]); got != h.want {
			err = ErrContentSHA256Mismatch
		}
	}
	if err != nil {
		h.err = err
	}
	return n, err
}

func (h *hashingReader) Close() error { return h.body.Close() }

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
