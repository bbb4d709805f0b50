package sigv4

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func FuzzParseAuthorization(f *testing.F) {
	cred := "Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request"
	for _, seed := range []string{
		"AWS4-HMAC-SHA256 " + cred + ", SignedHeaders=host;range;x-amz-date, Signature=" + validSig,
		"AWS4-HMAC-SHA256 " + cred + ",SignedHeaders=host,Signature=" + validSig,
		"AWS4-HMAC-SHA256 Signature=" + validSig + ",SignedHeaders=host,Credential=a/b/20130524/r/s/aws4_request",
		"AWS4-HMAC-SHA256 Credential=/20130524///aws4_request,SignedHeaders=;,Signature=",
		"AWS AKIAIOSFODNN7EXAMPLE:frJIUN8DYpKDtOLCwo//yllqDzg=",
		"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		a, err := parseAuthorization(header)
		if err != nil {
			if !errors.Is(err, ErrAuthorizationHeaderMalformed) && !errors.Is(err, ErrUnsupportedAlgorithm) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		if a.accessKey == "" || !a.signs("host") || len(a.signature) != 64 || !isScopeDate(a.scope.date) ||
			a.scope.region == "" || a.scope.service == "" || strings.Contains(a.scope.service, "/") {
			t.Fatalf("accepted an invalid header as %+v", a)
		}
		again, err := parseAuthorization(formatAuthorization(a))
		if err != nil || !reflect.DeepEqual(a, again) {
			t.Fatalf("round trip: %+v -> %+v, %v", a, again, err)
		}
	})
}

// chunkedErrors are the errors a body reader may return on bad input.
var chunkedErrors = []error{ErrMalformedChunk, ErrIncompleteBody, ErrDecodedLengthMismatch, ErrChunkSignatureMismatch, ErrMalformedTrailer}

func FuzzChunkedReader(f *testing.F) {
	data := []byte("0123456789abcdefghijklmnopqrstuvwxyz")
	signer := newChunkSigner(exampleSecret, exampleAmzDate, "us-east-1", "s3")
	crc := crc32Trailer(data)
	for i, enc := range []chunkEncoding{
		{chunkSize: 16, signer: signer, seed: exampleSeedSignature},
		{chunkSize: 7, signer: signer, seed: exampleSeedSignature, trailers: [][2]string{crc}},
		{chunkSize: 64, trailers: [][2]string{crc, {"x-amz-checksum-sha256", "x"}}},
	} {
		f.Add(uint8(i), int64(len(data)), enc.encode(data))
		f.Add(uint8(i+3*8), int64(-1), enc.encode(data[:5]))
	}
	f.Add(uint8(0), int64(66560), exampleChunkedBody())
	f.Fuzz(func(t *testing.T, shape uint8, declared int64, body []byte) {
		mode := PayloadStreamingSigned + PayloadMode(shape%3)
		declared = max(declared, -1)
		res := exampleStreamResult(mode, declared, "x-amz-checksum-crc32", "x-amz-checksum-sha256")
		rd := res.Body(&http.Request{Body: io.NopCloser(bytes.NewReader(body))})
		buf := make([]byte, 1+int(shape/3))
		var n int64
		var err error
		for err == nil {
			var k int
			k, err = rd.Read(buf)
			n += int64(k)
		}
		if n > int64(len(body)) {
			t.Fatalf("decoded %d bytes from %d", n, len(body))
		}
		if err == io.EOF {
			if declared >= 0 && n != declared {
				t.Fatalf("decoded %d bytes, declared %d", n, declared)
			}
			return
		}
		if !isOneOf(err, chunkedErrors) {
			t.Fatalf("unclassified error %v", err)
		}
		if _, again := rd.Read(buf); again != err {
			t.Fatalf("error not sticky: %v then %v", err, again)
		}
	})
}

func FuzzNormalizePath(f *testing.F) {
	for _, seed := range []string{"/", "/a b/%2f/%41", "/100%", "/%zz%C3%a9", "/test$file.text"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, p string) {
		n := normalizePath(p)
		if normalizePath(n) != n || !isCanonicalPath(n) {
			t.Fatalf("%q normalized to non-canonical %q", p, n)
		}
		if decodePath(n) != decodePath(p) {
			t.Fatalf("%q and its normal form %q name different keys", p, n)
		}
	})
}

// decodePath decodes the valid escapes of p, leaving '/' from %2F marked so
// it stays distinct from a separator.
func decodePath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if c, ok := unescapeAt(p, i); ok {
			if c == '/' {
				b.WriteString("\x00/")
			} else {
				b.WriteByte(c)
			}
			i += 2
			continue
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

func isOneOf(err error, targets []error) bool {
	for _, target := range targets {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// FuzzPayloadCheck: a payload check as another node sends it, whatever its
// JSON, makes a Result or an error, never a panic, and the Result's body
// reader ends in io.EOF or an error of its own.
func FuzzPayloadCheck(f *testing.F) {
	res := exampleStreamResult(PayloadStreamingSignedTrailer, 36, "x-amz-checksum-crc32")
	pc, _ := res.PayloadCheck()
	raw, _ := json.Marshal(pc)
	f.Add(raw, []byte("0123456789abcdefghijklmnopqrstuvwxyz"))
	f.Add([]byte(`{"mode":1,"sum":"AAAA"}`), []byte("x"))
	f.Add([]byte(`{"mode":2,"decodedLength":-5}`), []byte(""))
	f.Fuzz(func(t *testing.T, check, body []byte) {
		var pc PayloadCheck
		if json.Unmarshal(check, &pc) != nil {
			return
		}
		res, err := pc.Result()
		if err != nil {
			return
		}
		rd := res.Body(&http.Request{Body: io.NopCloser(bytes.NewReader(body))})
		_, err = io.Copy(io.Discard, rd)
		if err != nil && !isOneOf(err, append(chunkedErrors, ErrContentSHA256Mismatch)) {
			t.Fatalf("unclassified error %v", err)
		}
	})
}
