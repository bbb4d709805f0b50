package sigv4

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The signatures of the AWS documentation's chunked upload example: 66560
// bytes of 'a' in chunks of 65536, 1024 and 0 bytes.
const (
	exampleSeedSignature = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"
	exampleChunk1        = "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648"
	exampleChunk2        = "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497"
	exampleFinalChunk    = "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"
	// The AWS Common Runtime's signature for trailers first:1st, second:2nd
	// and third:3rd after that final chunk.
	exampleTrailerSignature = "df5735bd9f3295cd9386572292562fefc93ba94e80a0a1ddcbd652c4e0a75e6c"
)

func exampleChunkedBody() []byte {
	a := func(n int) string { return strings.Repeat("a", n) }
	return []byte("10000;chunk-signature=" + exampleChunk1 + "\r\n" + a(65536) + "\r\n" +
		"400;chunk-signature=" + exampleChunk2 + "\r\n" + a(1024) + "\r\n" +
		"0;chunk-signature=" + exampleFinalChunk + "\r\n\r\n")
}

func exampleStreamingRequest(body []byte) *http.Request {
	r := httptest.NewRequest("PUT", "/examplebucket/chunkObject.txt", bytes.NewReader(body))
	r.Host = "s3.amazonaws.com"
	r.Header.Set("X-Amz-Date", exampleAmzDate)
	r.Header.Set("X-Amz-Storage-Class", "REDUCED_REDUNDANCY")
	r.Header.Set("X-Amz-Content-Sha256", streamingSignedPayload)
	r.Header.Set("Content-Encoding", "aws-chunked")
	r.Header.Set("X-Amz-Decoded-Content-Length", "66560")
	r.Header.Set("Authorization", exampleAuth("content-encoding;content-length;host;x-amz-content-sha256;"+
		"x-amz-date;x-amz-decoded-content-length;x-amz-storage-class", exampleSeedSignature))
	return r
}

func TestStreamingAWSExample(t *testing.T) {
	want := bytes.Repeat([]byte("a"), 66560)
	enc := chunkEncoding{chunkSize: 65536, seed: exampleSeedSignature,
		signer: newChunkSigner(exampleSecret, exampleAmzDate, "us-east-1", "s3")}
	if !bytes.Equal(enc.encode(want), exampleChunkedBody()) {
		t.Fatal("test encoder does not reproduce the AWS example")
	}
	for _, size := range []int{1, 7, 4096, 65536, 1 << 20} {
		r := exampleStreamingRequest(exampleChunkedBody())
		res, err := newTestVerifier(exampleTime()).Verify(r, "s3")
		wantErr(t, err, nil)
		if res.Payload != PayloadStreamingSigned || res.DecodedLength != 66560 || res.Signature != exampleSeedSignature {
			t.Fatalf("result %+v", res)
		}
		got, err := readAllSized(res.Body(r), size)
		wantErr(t, err, nil)
		if !bytes.Equal(got, want) {
			t.Fatalf("read size %d: decoded %d bytes", size, len(got))
		}
	}
}

// exampleStreamResult is the Result Verify yields for the AWS example, in
// the given mode.
func exampleStreamResult(mode PayloadMode, decoded int64, trailers ...string) *Result {
	res := &Result{
		Payload:          mode,
		DecodedLength:    decoded,
		Signature:        exampleSeedSignature,
		amzDate:          exampleAmzDate,
		scope:            "20130524/us-east-1/s3/aws4_request",
		declaredTrailers: trailers,
	}
	copy(res.key[:], testSigningKey(exampleSecret, "20130524", "us-east-1", "s3"))
	return res
}

func TestStreamingTrailerAWSVector(t *testing.T) {
	trailers := [][2]string{{"first", "1st"}, {"second", "2nd"}, {"third", "3rd"}}
	s := newChunkSigner(exampleSecret, exampleAmzDate, "us-east-1", "s3")
	if got := s.trailer(exampleFinalChunk, trailers); got != exampleTrailerSignature {
		t.Fatalf("test encoder trailer signature %s", got)
	}
	body := bytes.TrimSuffix(exampleChunkedBody(), []byte("\r\n"))
	body = append(body, "first:1st\r\nsecond: 2nd \r\nthird:3rd\r\nx-amz-trailer-signature:"+exampleTrailerSignature+"\r\n\r\n"...)
	res := exampleStreamResult(PayloadStreamingSignedTrailer, 66560, "first", "second", "third")
	got, err := io.ReadAll(res.Body(&http.Request{Body: io.NopCloser(bytes.NewReader(body))}))
	wantErr(t, err, nil)
	if len(got) != 66560 || res.Trailers().Get("Second") != "2nd" || len(res.Trailers()) != 3 {
		t.Fatalf("decoded %d bytes, trailers %v", len(got), res.Trailers())
	}
}

func crc32Trailer(data []byte) [2]string {
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc32.ChecksumIEEE(data))
	return [2]string{"x-amz-checksum-crc32", base64.StdEncoding.EncodeToString(sum[:])}
}

// streamCase describes a streaming upload for signedStream.
type streamCase struct {
	mode      PayloadMode
	data      []byte
	chunkSize int
	trailers  [][2]string // sent
	declare   string      // x-amz-trailer; defaults to the names sent
	decoded   string      // x-amz-decoded-content-length; defaults to len(data)
	mutate    func([]byte) []byte
}

// signedStream builds a streaming upload the way a client does: headers
// signed by the AWS SDK, then the body framed by the test encoder chained
// from that signature. mutate alters the body in transit.
func signedStream(t *testing.T, c streamCase) *http.Request {
	t.Helper()
	r := newClientRequest(t, "PUT", "http://twinlake.test/bucket/object", nil)
	r.Header.Set("X-Amz-Content-Sha256", c.mode.String())
	r.Header.Set("Content-Encoding", "aws-chunked")
	if c.decoded == "" {
		c.decoded = strconv.Itoa(len(c.data))
	}
	if c.decoded != "absent" {
		r.Header.Set("X-Amz-Decoded-Content-Length", c.decoded)
	}
	if c.declare == "" {
		var names []string
		for _, tr := range c.trailers {
			names = append(names, tr[0])
		}
		c.declare = strings.Join(names, ",")
	}
	if c.declare != "" {
		r.Header.Set("X-Amz-Trailer", c.declare)
	}
	enc := chunkEncoding{chunkSize: max(c.chunkSize, 1), trailers: c.trailers, seed: strings.Repeat("0", 64)}
	if c.mode.chunkSigned() {
		enc.signer = newChunkSigner(exampleSecret, testTime().Format(amzDateLayout), "eu-west-3", "s3")
	}
	r.ContentLength = int64(len(enc.encode(c.data)))
	sdkSign(t, r, c.mode.String(), "s3", testTime())
	_, enc.seed, _ = strings.Cut(r.Header.Get("Authorization"), "Signature=")
	body := enc.encode(c.data)
	r.Body = io.NopCloser(bytes.NewReader(body))
	sr := toServer(t, r)
	if c.mutate != nil {
		sr.Body = io.NopCloser(bytes.NewReader(c.mutate(body)))
	}
	return sr
}

// replaceOnce returns a mutation replacing the first old with new.
func replaceOnce(old, new string) func([]byte) []byte {
	return func(b []byte) []byte { return bytes.Replace(b, []byte(old), []byte(new), 1) }
}

func truncate(n int) func([]byte) []byte {
	return func(b []byte) []byte { return b[:n] }
}

func TestStreamingBodies(t *testing.T) {
	data := make([]byte, 200<<10)
	for i := range data {
		data[i] = byte(i * 7 / 3)
	}
	small := []byte("0123456789abcdef")
	crc := crc32Trailer(data)
	cases := []struct {
		name       string
		c          streamCase
		verifyErr  error
		readErr    error
		wantTrails int
	}{
		{name: "signed", c: streamCase{mode: PayloadStreamingSigned, data: data, chunkSize: 64 << 10}},
		{name: "signed one-byte chunks", c: streamCase{mode: PayloadStreamingSigned, data: small, chunkSize: 1}},
		{name: "signed empty", c: streamCase{mode: PayloadStreamingSigned}},
		{name: "signed trailer", c: streamCase{mode: PayloadStreamingSignedTrailer, data: data, chunkSize: 64 << 10,
			trailers: [][2]string{crc}}, wantTrails: 1},
		{name: "signed trailer, two trailers", c: streamCase{mode: PayloadStreamingSignedTrailer, data: small, chunkSize: 5,
			trailers: [][2]string{{"x-amz-checksum-sha256", "x"}, crc32Trailer(small)}}, wantTrails: 2},
		{name: "unsigned trailer", c: streamCase{mode: PayloadStreamingUnsignedTrailer, data: data, chunkSize: 64 << 10,
			trailers: [][2]string{crc}}, wantTrails: 1},
		{name: "unsigned trailer without decoded length", c: streamCase{mode: PayloadStreamingUnsignedTrailer, data: data,
			chunkSize: 64 << 10, trailers: [][2]string{crc}, decoded: "absent"}, wantTrails: 1},
		{name: "unsigned trailer, no final CRLF", c: streamCase{mode: PayloadStreamingUnsignedTrailer, data: small, chunkSize: 8,
			trailers: [][2]string{crc32Trailer(small)}, mutate: func(b []byte) []byte { return bytes.TrimSuffix(b, []byte("\r\n")) }}, wantTrails: 1},
		{name: "unsigned chunk extension ignored", c: streamCase{mode: PayloadStreamingUnsignedTrailer, data: small, chunkSize: 16,
			trailers: [][2]string{crc32Trailer(small)}, mutate: replaceOnce("10\r\n", "10;ext=1\r\n")}, wantTrails: 1},

		{name: "signed without decoded length", c: streamCase{mode: PayloadStreamingSigned, data: small, decoded: "absent"},
			verifyErr: ErrMissingDecodedContentLength},
		{name: "bad decoded length", c: streamCase{mode: PayloadStreamingSigned, data: small, decoded: "-1"},
			verifyErr: ErrInvalidDecodedContentLength},
		{name: "declared length too short", c: streamCase{mode: PayloadStreamingSigned, data: data, chunkSize: 64 << 10,
			decoded: strconv.Itoa(len(data) - 1)}, readErr: ErrDecodedLengthMismatch},
		{name: "declared length too long", c: streamCase{mode: PayloadStreamingSigned, data: data, chunkSize: 64 << 10,
			decoded: strconv.Itoa(len(data) + 1)}, readErr: ErrDecodedLengthMismatch},
		{name: "unsigned declared length too long", c: streamCase{mode: PayloadStreamingUnsignedTrailer, data: small,
			chunkSize: 4, trailers: [][2]string{crc}, decoded: "17"}, readErr: ErrDecodedLengthMismatch},
		{name: "tampered data", c: streamCase{mode: PayloadStreamingSigned, data: data, chunkSize: 64 << 10,
			mutate: func(b []byte) []byte { b[100<<10] ^= 1; return b }}, readErr: ErrChunkSignatureMismatch},
		{name: "tampered chunk signature", c: streamCase{mode: PayloadStreamingSigned, data: small, chunkSize: 4,
			mutate: func(b []byte) []byte { b[len("4;chunk-signature=")] ^= 1; return b }}, readErr: ErrChunkSignatureMismatch},
		{name: "tampered final chunk", c: streamCase{mode: PayloadStreamingSigned, data: small, chunkSize: 16,
			mutate: func(b []byte) []byte { b[len(b)-5] ^= 1; return b }}, readErr: ErrChunkSignatureMismatch},
		{name: "swapped chunks", c: streamCase{mode: PayloadStreamingSigned, data: small, chunkSize: 8,
			mutate: swapFirstChunks}, readErr: ErrChunkSignatureMismatch},
		{name: "missing chunk signature", c: streamCase{mode: PayloadStreamingSigned, data: small, chunkSize: 16,
			mutate: func(b []byte) []byte { return append([]byte("10\r\n"), b[bytes.IndexByte(b, '\n')+1:]...) }}, readErr: ErrMalformedChunk},
		{name: "truncated in data", c: streamCase{mode: PayloadStreamingSigned, data: data, chunkSize: 64 << 10,
			mutate: truncate(50 << 10)}, readErr: ErrIncompleteBody},
		{name: "truncated in chunk header", c: streamCase{mode: PayloadStreamingSigned, data: small, chunkSize: 16,
			mutate: truncate(20)}, readErr: ErrIncompleteBody},
		{name: "truncated before final chunk", c: streamCase{mode: PayloadStreamingSigned, data: small, chunkSize: 16,
			mutate: func(b []byte) []byte { return b[:bytes.LastIndex(b, []byte("0;chunk"))] }}, readErr: ErrIncompleteBody},
		{name: "unsigned truncated in trailer", c: streamCase{mode: PayloadStreamingUnsignedTrailer, data: small, chunkSize: 8,
			trailers: [][2]string{crc32Trailer(small)}, mutate: func(b []byte) []byte { return b[:len(b)-6] }}, readErr: ErrIncompleteBody},
		{name: "data after the end", c: streamCase{mode: PayloadStreamingSigned, data: small, chunkSize: 16,
			mutate: func(b []byte) []byte { return append(b, 'x') }}, readErr: ErrMalformedChunk},
		{name: "chunk not followed by CRLF", c: streamCase{mode: PayloadStreamingUnsignedTrailer, data: small, chunkSize: 16,
			trailers: [][2]string{crc32Trailer(small)}, mutate: replaceOnce("f\r\n0", "fX\n0")}, readErr: ErrMalformedChunk},
		{name: "bad chunk size", c: streamCase{mode: PayloadStreamingUnsignedTrailer, data: small, chunkSize: 16,
			trailers: [][2]string{crc32Trailer(small)}, mutate: replaceOnce("10\r\n", "1g\r\n")}, readErr: ErrMalformedChunk},
		{name: "signed trailer tampered", c: streamCase{mode: PayloadStreamingSignedTrailer, data: small, chunkSize: 16,
			trailers: [][2]string{crc32Trailer(small)}, mutate: replaceOnce("crc32:", "crc32:A")}, readErr: ErrChunkSignatureMismatch},
		{name: "signed trailer unsigned", c: streamCase{mode: PayloadStreamingSignedTrailer, data: small, chunkSize: 16,
			trailers: [][2]string{crc32Trailer(small)}, mutate: dropTrailerSignature}, readErr: ErrMalformedTrailer},
		{name: "undeclared trailer", c: streamCase{mode: PayloadStreamingUnsignedTrailer, data: small, chunkSize: 16,
			trailers: [][2]string{crc32Trailer(small), {"x-amz-meta-late", "1"}}, declare: "x-amz-checksum-crc32"}, readErr: ErrMalformedTrailer},
		{name: "declared trailer missing", c: streamCase{mode: PayloadStreamingUnsignedTrailer, data: small, chunkSize: 16,
			trailers: [][2]string{crc32Trailer(small)}, declare: "x-amz-checksum-crc32,x-amz-checksum-sha1"}, readErr: ErrMalformedTrailer},
		{name: "repeated trailer", c: streamCase{mode: PayloadStreamingUnsignedTrailer, data: small, chunkSize: 16,
			trailers: [][2]string{crc32Trailer(small), crc32Trailer(small)}, declare: "x-amz-checksum-crc32"}, readErr: ErrMalformedTrailer},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := signedStream(t, tc.c)
			res, err := newTestVerifier(testTime()).Verify(r, "s3")
			wantErr(t, err, tc.verifyErr)
			if err != nil {
				return
			}
			if res.Payload != tc.c.mode {
				t.Fatalf("payload %v", res.Payload)
			}
			// Read elsewhere, with the checks sent as JSON, the same
			// body ends the same way.
			there := elsewhere(t, res)
			gotThere, errThere := readAllSized(there.Body(signedStream(t, tc.c)), 3000)
			wantErr(t, errThere, tc.readErr)
			got, err := readAllSized(res.Body(r), 3000)
			wantErr(t, err, tc.readErr)
			if err != nil {
				return
			}
			if !bytes.Equal(gotThere, got) || !maps.EqualFunc(there.Trailers(), res.Trailers(), slices.Equal) {
				t.Fatalf("read elsewhere: %d bytes, trailers %v; here %d bytes, trailers %v", len(gotThere), there.Trailers(), len(got), res.Trailers())
			}
			if !bytes.Equal(got, tc.c.data) || len(res.Trailers()) != tc.wantTrails {
				t.Fatalf("decoded %d of %d bytes, trailers %v", len(got), len(tc.c.data), res.Trailers())
			}
			if tc.c.trailers != nil && res.Trailers().Get(tc.c.trailers[0][0]) != tc.c.trailers[0][1] {
				t.Fatalf("trailers %v", res.Trailers())
			}
		})
	}
}

// elsewhere is the Result that reads a body as res does, made from its
// PayloadCheck sent as JSON.
func elsewhere(t *testing.T, res *Result) *Result {
	t.Helper()
	pc, ok := res.PayloadCheck()
	if !ok {
		t.Fatal("no payload check")
	}
	raw, err := json.Marshal(pc)
	if err != nil {
		t.Fatal(err)
	}
	var back PayloadCheck
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	there, err := back.Result()
	if err != nil {
		t.Fatal(err)
	}
	return there
}

// swapFirstChunks exchanges the first two (equal-sized) chunks with their
// signatures, which only the chaining detects.
func swapFirstChunks(b []byte) []byte {
	end1 := bytes.Index(b, []byte("\r\n8;")) + 2
	end2 := bytes.Index(b, []byte("\r\n0;")) + 2
	return append(append(append([]byte(nil), b[end1:end2]...), b[:end1]...), b[end2:]...)
}

func dropTrailerSignature(b []byte) []byte {
	i := bytes.Index(b, []byte(trailerSignatureName))
	return append(b[:i:i], "\r\n"...)
}

func TestPayloadSignedBodyMismatch(t *testing.T) {
	body := []byte("the signed payload")
	r := newClientRequest(t, "PUT", "http://twinlake.test/bucket/k", body)
	r.Header.Set("X-Amz-Content-Sha256", sha256Hex(body))
	sdkSign(t, r, sha256Hex(body), "s3", testTime())
	sr := toServer(t, r)
	sr.Body = io.NopCloser(strings.NewReader("THE signed payload"))
	res, err := newTestVerifier(testTime()).Verify(sr, "s3")
	wantErr(t, err, nil)
	// Read elsewhere: the same checks.
	for body, want := range map[string]error{"THE signed payload": ErrContentSHA256Mismatch, string(body): nil} {
		_, err := readAllSized(elsewhere(t, res).Body(&http.Request{Body: io.NopCloser(strings.NewReader(body))}), 5)
		wantErr(t, err, want)
	}
	rd := res.Body(sr)
	got, err := readAllSized(rd, 5)
	wantErr(t, err, ErrContentSHA256Mismatch)
	if len(got) != len(body) {
		t.Fatalf("passed through %d bytes", len(got))
	}
	if _, err := rd.Read(make([]byte, 1)); err != ErrContentSHA256Mismatch {
		t.Fatalf("error not sticky: %v", err)
	}
}

// endless repeats a pattern forever.
type endless struct {
	pattern []byte
	off     int
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.pattern[e.off%len(e.pattern)]
		e.off++
	}
	return len(p), nil
}

// TestChunkedReaderBoundsHostileInput feeds endless hostile streams and
// checks that each is refused quickly with little memory.
func TestChunkedReaderBoundsHostileInput(t *testing.T) {
	cases := []struct {
		name    string
		mode    PayloadMode
		decoded int64
		prefix  string
		pattern string
		want    error
	}{
		{"endless chunk header", PayloadStreamingUnsignedTrailer, -1, "", "f", ErrMalformedChunk},
		{"endless chunk extension", PayloadStreamingUnsignedTrailer, -1, "1;", "x", ErrMalformedChunk},
		{"endless signature", PayloadStreamingSigned, 10, "1;chunk-signature=", "a", ErrMalformedChunk},
		{"chunk over the declared length", PayloadStreamingSigned, 10, "b;chunk-signature=" + strings.Repeat("a", 64) + "\r\n", "x", ErrDecodedLengthMismatch},
		{"chunk over the size limit", PayloadStreamingUnsignedTrailer, -1, "140000001\r\n", "x", ErrMalformedChunk},
		{"endless trailer line", PayloadStreamingUnsignedTrailer, -1, "0\r\nx-amz-checksum-crc32:", "A", ErrMalformedChunk},
		{"endless trailers", PayloadStreamingUnsignedTrailer, -1, "0\r\n", "x-amz-checksum-crc32:AAAAAA==\r\n", ErrMalformedTrailer},
		{"endless chunks", PayloadStreamingUnsignedTrailer, 1 << 20, "", "1\r\nx\r\n", ErrDecodedLengthMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := exampleStreamResult(c.mode, c.decoded, "x-amz-checksum-crc32")
			body := io.MultiReader(strings.NewReader(c.prefix), &endless{pattern: []byte(c.pattern)})
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := io.Copy(io.Discard, res.Body(&http.Request{Body: io.NopCloser(body)}))
			runtime.ReadMemStats(&after)
			wantErr(t, err, c.want)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
				t.Fatalf("allocated %d bytes", grew)
			}
		})
	}
}

// TestPayloadCheckRefusals: a body Verify hashed already cannot be read
// elsewhere, and a check that lacks what its mode needs makes no Result.
func TestPayloadCheckRefusals(t *testing.T) {
	if _, ok := (&Result{Payload: PayloadSigned, bodyHashed: true}).PayloadCheck(); ok {
		t.Error("a body hashed by Verify offered elsewhere")
	}
	key := make([]byte, 32)
	sig := strings.Repeat("a", 64)
	for name, pc := range map[string]PayloadCheck{
		"no mode":             {},
		"signed without sum":  {Mode: PayloadSigned},
		"chunks without key":  {Mode: PayloadStreamingSigned, Signature: sig, AmzDate: "20260314T150926Z", Scope: "s"},
		"chunks without seed": {Mode: PayloadStreamingSignedTrailer, Key: key, AmzDate: "20260314T150926Z", Scope: "s"},
		"short key":           {Mode: PayloadStreamingSigned, Key: key[:8], Signature: sig, AmzDate: "20260314T150926Z", Scope: "s"},
		"no decoded length":   {Mode: PayloadStreamingSigned, Key: key, Signature: sig, AmzDate: "20260314T150926Z", Scope: "s", DecodedLength: -1},
		"bad decoded length":  {Mode: PayloadStreamingUnsignedTrailer, DecodedLength: -2},
	} {
		if _, err := pc.Result(); err == nil {
			t.Errorf("%s: a Result", name)
		}
	}
}
