package sigv4

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

const upperHex = "0123456789ABCDEF"

// canonicalRequest holds the parts of a canonical request that do not depend
// on how the path is encoded, so that alternative path encodings can be
// tried without rebuilding the rest.
type canonicalRequest struct {
	method string
	// tail is everything after the URI line: query, headers, the signed
	// header list and the payload hash, each line separated by '\n'.
	tail []byte
}

// newCanonicalRequest builds the path-independent part of r's canonical
// request. presigned drops X-Amz-Signature from the query.
func newCanonicalRequest(r *http.Request, query url.Values, a *authorization, payloadHash string, presigned bool) canonicalRequest {
	tail := make([]byte, 0, 512)
	tail = append(tail, '\n')
	tail = appendCanonicalQuery(tail, query, presigned)
	tail = append(tail, '\n')
	tail = appendCanonicalHeaders(tail, r, a.signedHeaders)
	tail = append(tail, '\n')
	for i, name := range a.signedHeaders {
		if i > 0 {
			tail = append(tail, ';')
		}
		tail = append(tail, name...)
	}
	tail = append(tail, '\n')
	tail = append(tail, payloadHash...)
	return canonicalRequest{method: r.Method, tail: tail}
}

// appendWithURI appends the full canonical request for uri to dst.
func (c *canonicalRequest) appendWithURI(dst []byte, uri string) []byte {
	dst = append(dst, c.method...)
	dst = append(dst, '\n')
	dst = append(dst, uri...)
	return append(dst, c.tail...)
}

// appendStringToSign appends the SigV4 string to sign for a canonical
// request: algorithm, timestamp, scope and the request's hex SHA-256.
func appendStringToSign(dst []byte, amzDate, scope string, canonical []byte) []byte {
	sum := sha256.Sum256(canonical)
	dst = append(dst, algorithm+"\n"...)
	dst = append(dst, amzDate...)
	dst = append(dst, '\n')
	dst = append(dst, scope...)
	dst = append(dst, '\n')
	return hex.AppendEncode(dst, sum[:])
}

// canonicalURIs returns the canonical URI of r under the service's path
// rule, and a second candidate ("" if none) for clients that encode the
// path differently from how it arrived. Both candidates decode to the same
// bytes, so accepting either never lets a signature for one path authorize
// another.
func canonicalURIs(r *http.Request, service string) (string, string) {
	wire := wirePath(r)
	norm := normalizePath(wire)
	if service != "s3" {
		// Standard SigV4: the signer encodes the already-escaped path again.
		wire, norm = encodePath(wire), encodePath(norm)
	}
	if norm == wire {
		return wire, ""
	}
	return wire, norm
}

// wirePath returns the escaped path the client sent: the request line's
// when the request came from a server, which is exactly what was signed.
func wirePath(r *http.Request) string {
	p := r.URL.EscapedPath()
	if strings.HasPrefix(r.RequestURI, "/") {
		p, _, _ = strings.Cut(r.RequestURI, "?")
	}
	if p == "" {
		return "/"
	}
	return p
}

// normalizePath returns the S3 canonical form of an escaped path: escapes
// decoded, then every byte but the unreserved ones and '/' encoded with
// upper-case hex. An escaped '/' stays escaped: it is part of a key, not a
// separator.
func normalizePath(escaped string) string {
	if isCanonicalPath(escaped) {
		return escaped
	}
	buf := make([]byte, 0, len(escaped)+16)
	for i := 0; i < len(escaped); i++ {
		c := escaped[i]
		if b, ok := unescapeAt(escaped, i); ok {
			buf = appendEscapedByte(buf, b, false)
			i += 2
			continue
		}
		buf = appendEscapedByte(buf, c, true)
	}
	return string(buf)
}

// isCanonicalPath reports whether normalizePath would return p unchanged.
func isCanonicalPath(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '/' || isUnreserved(c):
		case c == '%':
			b, ok := unescapeAt(p, i)
			if !ok || isUnreserved(b) || !isUpperHex(p[i+1]) || !isUpperHex(p[i+2]) {
				return false
			}
			i += 2
		default:
			return false
		}
	}
	return true
}

// encodePath percent-encodes every byte of s except unreserved ones and '/'.
func encodePath(s string) string {
	return encodeString(s, true)
}

// encodeString percent-encodes every byte of s outside the RFC 3986
// unreserved set (and '/' too unless keepSlash). It returns s itself when
// nothing needs encoding.
func encodeString(s string, keepSlash bool) string {
	i := 0
	for i < len(s) && (isUnreserved(s[i]) || keepSlash && s[i] == '/') {
		i++
	}
	if i == len(s) {
		return s
	}
	buf := make([]byte, i, len(s)+16)
	copy(buf, s[:i])
	for ; i < len(s); i++ {
		buf = appendEscapedByte(buf, s[i], keepSlash)
	}
	return string(buf)
}

func appendEscapedByte(dst []byte, c byte, keepSlash bool) []byte {
	if isUnreserved(c) || keepSlash && c == '/' {
		return append(dst, c)
	}
	return append(dst, '%', upperHex[c>>4], upperHex[c&15])
}

// unescapeAt decodes the %XX escape at s[i], if there is one.
func unescapeAt(s string, i int) (byte, bool) {
	if s[i] != '%' || i+2 >= len(s) {
		return 0, false
	}
	hi, ok1 := fromHex(s[i+1])
	lo, ok2 := fromHex(s[i+2])
	return hi<<4 | lo, ok1 && ok2
}

// queryPair is one encoded query parameter.
type queryPair struct{ key, value string }

// appendCanonicalQuery appends the canonical query string: every parameter
// (but X-Amz-Signature when presigned) name and value encoded, sorted by
// encoded name then encoded value, joined with '&'.
func appendCanonicalQuery(dst []byte, query url.Values, presigned bool) []byte {
	if len(query) == 0 {
		return dst
	}
	pairs := make([]queryPair, 0, len(query))
	for k, values := range query {
		if presigned && k == amzSignature {
			continue
		}
		ek := encodeString(k, false)
		for _, v := range values {
			pairs = append(pairs, queryPair{ek, encodeString(v, false)})
		}
	}
	slices.SortFunc(pairs, func(a, b queryPair) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return strings.Compare(a.value, b.value)
	})
	for i, p := range pairs {
		if i > 0 {
			dst = append(dst, '&')
		}
		dst = append(dst, p.key...)
		dst = append(dst, '=')
		dst = append(dst, p.value...)
	}
	return dst
}

// appendCanonicalHeaders appends "name:value\n" for each signed header, in
// the order the client listed them.
func appendCanonicalHeaders(dst []byte, r *http.Request, names []string) []byte {
	for _, name := range names {
		dst = append(dst, name...)
		dst = append(dst, ':')
		dst = appendHeaderValue(dst, r, name)
		dst = append(dst, '\n')
	}
	return dst
}

// appendHeaderValue appends the canonical value of header name: its values
// trimmed, inner runs of spaces collapsed, joined with ','. Host,
// Content-Length and Transfer-Encoding come from the request fields where
// net/http moves them.
// A signed header the request lacks canonicalizes as empty.
func appendHeaderValue(dst []byte, r *http.Request, name string) []byte {
	if name == "host" {
		host := r.Host
		if host == "" {
			host = r.URL.Host
		}
		return appendCollapsed(dst, host)
	}
	values := r.Header[textproto.CanonicalMIMEHeaderKey(name)]
	if len(values) == 0 && name == "content-length" && r.ContentLength >= 0 {
		return strconv.AppendInt(dst, r.ContentLength, 10)
	}
	if len(values) == 0 && name == "transfer-encoding" {
		// A server request carries it in TransferEncoding, not Header.
		values = r.TransferEncoding
	}
	for i, v := range values {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendCollapsed(dst, v)
	}
	return dst
}

// appendCollapsed appends v trimmed of surrounding white space with every
// run of spaces inside it reduced to one.
func appendCollapsed(dst []byte, v string) []byte {
	v = strings.TrimSpace(v)
	for i := 0; i < len(v); i++ {
		if v[i] == ' ' && i > 0 && v[i-1] == ' ' {
			continue
		}
		dst = append(dst, v[i])
	}
	return dst
}

func isUnreserved(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '~'
}

func isUpperHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'F'
}

func fromHex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// decodeHex32 decodes exactly 64 hex digits (either case) without
// allocating.
func decodeHex32[T string | []byte](s T) ([sha256.Size]byte, bool) {
	var out [sha256.Size]byte
	if len(s) != 2*sha256.Size {
		return out, false
	}
	for i := range out {
		hi, ok1 := fromHex(s[2*i])
		lo, ok2 := fromHex(s[2*i+1])
		if !ok1 || !ok2 {
			return out, false
		}
		out[i] = hi<<4 | lo
	}
	return out, true
}
