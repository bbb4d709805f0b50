package sigv4

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strconv"
	"strings"
)

// This file is a client-side aws-chunked encoder for the tests, written from
// the AWS documentation ("Transferring Payload in Multiple Chunks" and
// "Signature calculations for trailing headers") with none of the code under
// test, so that a shared mistake cannot make both sides agree.

// testSigningKey derives a SigV4 signing key.
func testSigningKey(secret, date, region, service string) []byte {
	mac := func(key []byte, data string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(data))
		return h.Sum(nil)
	}
	return mac(mac(mac(mac([]byte("AWS4"+secret), date), region), service), "aws4_request")
}

// chunkSigner signs the chunks of one request.
type chunkSigner struct {
	key     []byte
	amzDate string
	scope   string
}

func newChunkSigner(secret, amzDate, region, service string) *chunkSigner {
	date := amzDate[:8]
	return &chunkSigner{
		key:     testSigningKey(secret, date, region, service),
		amzDate: amzDate,
		scope:   date + "/" + region + "/" + service + "/aws4_request",
	}
}

func (s *chunkSigner) hmacHex(lines ...string) string {
	h := hmac.New(sha256.New, s.key)
	h.Write([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(h.Sum(nil))
}

func (s *chunkSigner) chunk(prev string, data []byte) string {
	return s.hmacHex("AWS4-HMAC-SHA256-PAYLOAD", s.amzDate, s.scope, prev, sha256Hex(nil), sha256Hex(data))
}

func (s *chunkSigner) trailer(prev string, trailers [][2]string) string {
	sorted := append([][2]string(nil), trailers...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i][0] < sorted[j][0] })
	var canon strings.Builder
	for _, t := range sorted {
		canon.WriteString(t[0] + ":" + t[1] + "\n")
	}
	return s.hmacHex("AWS4-HMAC-SHA256-TRAILER", s.amzDate, s.scope, prev, sha256Hex([]byte(canon.String())))
}

// chunkEncoding describes how to frame a payload.
type chunkEncoding struct {
	chunkSize int
	signer    *chunkSigner // nil: unsigned chunks
	seed      string       // the request signature, first link of the chain
	trailers  [][2]string  // nil: no trailer section
}

// encode frames data as aws-chunked.
func (e chunkEncoding) encode(data []byte) []byte {
	var b bytes.Buffer
	prev := e.seed
	writeChunk := func(chunk []byte) {
		b.WriteString(strconv.FormatInt(int64(len(chunk)), 16))
		if e.signer != nil {
			prev = e.signer.chunk(prev, chunk)
			b.WriteString(";chunk-signature=" + prev)
		}
		b.WriteString("\r\n")
		if len(chunk) > 0 {
			b.Write(chunk)
			b.WriteString("\r\n")
		}
	}
	for off := 0; off < len(data); off += e.chunkSize {
		writeChunk(data[off:min(off+e.chunkSize, len(data))])
	}
	writeChunk(nil)
	for _, t := range e.trailers {
		b.WriteString(t[0] + ":" + t[1] + "\r\n")
	}
	if e.trailers != nil && e.signer != nil {
		b.WriteString("x-amz-trailer-signature:" + e.signer.trailer(prev, e.trailers) + "\r\n")
	}
	b.WriteString("\r\n")
	return b.Bytes()
}
