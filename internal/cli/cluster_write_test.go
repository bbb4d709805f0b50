package cli

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/encrypt"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/testsite"
)

// writeCase is a PUT sent raw, its body protected in one of the ways
// SigV4 allows, whole or spoiled.
type writeCase struct {
	name  string
	mode  string // x-amz-content-sha256: "signed", UNSIGNED-PAYLOAD or a STREAMING- mode
	extra http.Header
	// spoil changes the body (or its encoding) after signing.
	spoil func(wire []byte) []byte
	query string // after the key
}

// signedPut sends c's PUT of body to node's key, signed as access/secret,
// and returns the answer's status and error code.
func signedPut(t *testing.T, node, key string, body []byte, c writeCase, access, secret string) (int, string) {
	t.Helper()
	now := time.Now().UTC()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, "http://"+node+"/data/"+key+c.query, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range c.extra {
		req.Header[k] = v
	}
	payloadHash := c.mode
	wire := body
	streaming := strings.HasPrefix(c.mode, "STREAMING-")
	switch {
	case c.mode == "signed":
		sum := sha256.Sum256(body)
		payloadHash = hex.EncodeToString(sum[:])
	case streaming:
		req.Header.Set("Content-Encoding", "aws-chunked")
		req.Header.Set("X-Amz-Decoded-Content-Length", strconv.Itoa(len(body)))
		if strings.HasSuffix(c.mode, "-TRAILER") {
			req.Header.Set("X-Amz-Trailer", "x-amz-checksum-crc32")
		}
	}
	req.Header.Set("X-Amz-Content-Sha256", payloadHash)
	creds := aws.Credentials{AccessKeyID: access, SecretAccessKey: secret}
	if streaming {
		// The encoded length is signed: compute it before signing, with
		// placeholder signatures of the right length.
		req.ContentLength = int64(len(encodeChunks(body, c.mode, nil, "", now)))
	} else {
		req.ContentLength = int64(len(body))
	}
	if err := v4.NewSigner().SignHTTP(t.Context(), creds, req, payloadHash, "s3", "us-east-1", now); err != nil {
		t.Fatal(err)
	}
	if streaming {
		seed := req.Header.Get("Authorization")
		seed = seed[strings.LastIndex(seed, "Signature=")+len("Signature="):]
		wire = encodeChunks(body, c.mode, signingKey(secret, now), seed, now)
	}
	if c.spoil != nil {
		wire = c.spoil(bytes.Clone(wire))
	}
	req.Body = io.NopCloser(bytes.NewReader(wire))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s through %s: %v", c.name, node, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	code := ""
	if i := bytes.Index(raw, []byte("<Code>")); i >= 0 {
		code = string(raw[i+6:])
		code = code[:strings.Index(code, "<")]
	}
	return resp.StatusCode, code
}

func signingKey(secret string, now time.Time) []byte {
	mac := func(key []byte, s string) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(s))
		return m.Sum(nil)
	}
	k := mac([]byte("AWS4"+secret), now.Format("20060102"))
	for _, s := range []string{"us-east-1", "s3", "aws4_request"} {
		k = mac(k, s)
	}
	return k
}

// encodeChunks encodes body as aws-chunked in 64 KiB chunks, signed along
// the chain from seed under key when the mode signs them (key nil: with
// placeholder signatures), with a CRC32 trailer when the mode has one.
func encodeChunks(body []byte, mode string, key []byte, seed string, now time.Time) []byte {
	signed := strings.HasPrefix(mode, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD")
	scope := now.Format("20060102") + "/us-east-1/s3/aws4_request"
	prev := seed
	sign := func(alg, last string) string {
		if key == nil {
			return strings.Repeat("0", 64)
		}
		m := hmac.New(sha256.New, key)
		m.Write([]byte(alg + "\n" + now.Format("20060102T150405Z") + "\n" + scope + "\n" + prev + "\n" + last))
		prev = hex.EncodeToString(m.Sum(nil))
		return prev
	}
	empty := sha256.Sum256(nil)
	var out bytes.Buffer
	for off := 0; ; off += 64 << 10 {
		chunk := body[min(off, len(body)):min(off+64<<10, len(body))]
		fmt.Fprintf(&out, "%x", len(chunk))
		if signed {
			sum := sha256.Sum256(chunk)
			out.WriteString(";chunk-signature=" + sign("AWS4-HMAC-SHA256-PAYLOAD", hex.EncodeToString(empty[:])+"\n"+hex.EncodeToString(sum[:])))
		}
		out.WriteString("\r\n")
		out.Write(chunk)
		if len(chunk) == 0 {
			break
		}
		out.WriteString("\r\n")
	}
	if strings.HasSuffix(mode, "-TRAILER") {
		trailer := "x-amz-checksum-crc32:" + crc32Base64(body) + "\n"
		out.WriteString(strings.TrimSuffix(trailer, "\n") + "\r\n")
		if signed {
			sum := sha256.Sum256([]byte(trailer))
			out.WriteString("x-amz-trailer-signature:" + sign("AWS4-HMAC-SHA256-TRAILER", hex.EncodeToString(sum[:])) + "\r\n")
		}
	}
	out.WriteString("\r\n")
	return out.Bytes()
}

// crc32Base64 is the x-amz-checksum-crc32 of b.
func crc32Base64(b []byte) string {
	crc := crc32.ChecksumIEEE(b)
	return base64.StdEncoding.EncodeToString([]byte{byte(crc >> 24), byte(crc >> 16), byte(crc >> 8), byte(crc)})
}

// flipAt returns a spoil that flips a byte of the body at a fraction of
// its length (past the chunk header).
func flipAt(frac float64) func([]byte) []byte {
	return func(w []byte) []byte {
		i := int(float64(len(w)) * frac)
		w[i] ^= 0x20
		return w
	}
}

// writesThroughEveryNode: a PUT's data that a node writes to the drives
// itself (the leader checking and committing it) is taken, or refused, as
// when the leader reads the body: every payload mode, good and spoiled
// (a digest, a chunk or a trailer that does not match, a Content-MD5 or a
// checksum header that does not), a body cut short, a conditional PUT
// refused, an encrypted one (whose offer the leader declines), an
// upload's parts; and each node that does not lead wrote the data of the
// PUTs that were taken.
func writesThroughEveryNode(t *testing.T, e cliEnv, clients []*minio.Client, nodes []string, dead, leader int, accessLog, access, secret string) {
	ctx := t.Context()
	body := make([]byte, 2<<20+12345)
	rand.Read(body)
	md5Sum := md5.Sum(body)
	badMD5 := md5.Sum([]byte("other"))
	badCRC := crc32Base64([]byte("other"))
	cases := []writeCase{
		{name: "signed", mode: "signed"},
		{name: "signed-spoiled", mode: "signed", spoil: flipAt(0.5)},
		{name: "unsigned", mode: "UNSIGNED-PAYLOAD", extra: http.Header{"Content-Md5": {base64.StdEncoding.EncodeToString(md5Sum[:])}}},
		{name: "unsigned-bad-md5", mode: "UNSIGNED-PAYLOAD", extra: http.Header{"Content-Md5": {base64.StdEncoding.EncodeToString(badMD5[:])}}},
		{name: "unsigned-bad-crc", mode: "UNSIGNED-PAYLOAD", extra: http.Header{"X-Amz-Checksum-Crc32": {badCRC}}},
		{name: "chunks", mode: "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"},
		{name: "chunks-spoiled", mode: "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", spoil: flipAt(0.6)},
		{name: "chunks-trailer", mode: "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"},
		{name: "unsigned-trailer", mode: "STREAMING-UNSIGNED-PAYLOAD-TRAILER"},
		{name: "unsigned-trailer-spoiled", mode: "STREAMING-UNSIGNED-PAYLOAD-TRAILER", spoil: flipAt(0.3)},
		{name: "if-none-match", mode: "signed", extra: http.Header{"If-None-Match": {"*"}}},
		// As AWS SDKs send bodies over 2 MB: the node asks its client
		// for the body only when it is wanted.
		{name: "expect-continue", mode: "UNSIGNED-PAYLOAD", extra: http.Header{"Expect": {"100-continue"}}},
	}
	writesHere := func() map[string]int64 { return hereCounts(t, e, leader, "writesHere") }
	// The key if-none-match writes to exists: the PUT is refused before
	// its body is wanted.
	if _, err := clients[leader].PutObject(ctx, "data", "w-exists", bytes.NewReader([]byte("x")), 1, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	before := writesHere()
	type outcome struct {
		status int
		code   string
	}
	want := map[string]outcome{}
	for _, i := range append([]int{leader}, followers(len(nodes), dead, leader)...) {
		for _, c := range cases {
			key := fmt.Sprintf("w-%s-%d", c.name, i)
			if c.name == "if-none-match" {
				key = "w-exists"
			}
			status, code := signedPut(t, nodes[i], key, body, c, access, secret)
			got := outcome{status, code}
			if i == leader {
				want[c.name] = got
				if ok := !strings.Contains(c.name, "spoiled") && !strings.Contains(c.name, "bad") && c.name != "if-none-match"; ok != (status == http.StatusOK) {
					t.Fatalf("%s through the leader: %d %s", c.name, status, code)
				}
			} else if got != want[c.name] {
				t.Errorf("%s through %s: %d %s, the leader answered %d %s", c.name, nodes[i], status, code, want[c.name].status, want[c.name].code)
			}
			if c.name == "if-none-match" {
				continue
			}
			stored, err := getObject(ctx, clients[i], "data", key)
			switch {
			case status == http.StatusOK && !bytes.Equal(stored, body):
				t.Errorf("%s through %s: stored %d bytes (%v), want the %d sent", c.name, nodes[i], len(stored), err, len(body))
			case status != http.StatusOK && minio.ToErrorResponse(err).Code != "NoSuchKey":
				t.Errorf("%s through %s refused, yet its key reads %d bytes (%v)", c.name, nodes[i], len(stored), err)
			}
		}
		// A body cut short: nothing is stored.
		cut := fmt.Sprintf("w-cut-%d", i)
		putCut(t, nodes[i], cut, body, access, secret)
		if _, err := getObject(ctx, clients[i], "data", cut); minio.ToErrorResponse(err).Code != "NoSuchKey" {
			t.Errorf("a PUT cut short through %s: its key reads %v", nodes[i], err)
		}
		// Encrypted at rest (the node encrypts under the data key the
		// leader made) and in parts.
		sealed := fmt.Sprintf("w-sealed-%d", i)
		if _, err := clients[i].PutObject(ctx, "data", sealed, bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{ServerSideEncryption: encrypt.NewSSE()}); err != nil {
			t.Fatalf("an encrypted PUT through %s: %v", nodes[i], err)
		}
		parts := fmt.Sprintf("w-parts-%d", i)
		big := bytes.Repeat(body, 6)[:12<<20]
		if _, err := clients[i].PutObject(ctx, "data", parts, bytes.NewReader(big), int64(len(big)), minio.PutObjectOptions{PartSize: 5 << 20}); err != nil {
			t.Fatalf("an upload in parts through %s: %v", nodes[i], err)
		}
		for key, want := range map[string][]byte{sealed: body, parts: big} {
			if got, err := getObject(ctx, clients[leader], "data", key); err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s written through %s: %d bytes, %v", key, nodes[i], len(got), err)
			}
		}
	}
	after := writesHere()
	for _, i := range followers(len(nodes), dead, leader) {
		// Through each: the 6 good raw PUTs, the encrypted one and the
		// upload's 3 parts.
		if n := nodes[i]; after[n]-before[n] < 10 {
			t.Errorf("%s wrote %d PUTs' data itself, want at least 10", n, after[n]-before[n])
		}
	}
	if n := nodes[leader]; after[n] != before[n] {
		t.Errorf("the leader counts %d writes of its own as offered to it", after[n]-before[n])
	}
	// The leader's access log counts a body a node wrote as received.
	raw, err := os.ReadFile(accessLog)
	if err != nil {
		t.Fatal(err)
	}
	logged := map[string]int64{}
	for _, line := range strings.Split(string(raw), "\n") {
		var entry struct {
			Key     string `json:"key"`
			API     string `json:"api"`
			BytesIn int64  `json:"bytesIn"`
		}
		if json.Unmarshal([]byte(line), &entry) == nil && entry.API == "PutObject" {
			logged[entry.Key] = entry.BytesIn
		}
	}
	for _, i := range append([]int{leader}, followers(len(nodes), dead, leader)...) {
		if key := fmt.Sprintf("w-signed-%d", i); logged[key] != int64(len(body)) {
			t.Errorf("the access log has %s with %d bytes in, want %d", key, logged[key], len(body))
		}
	}
}

// hereCounts is, by node address, the count admin info (through node n
// alias "n<i>") tells in --json as field: readsHere or writesHere.
func hereCounts(t *testing.T, e cliEnv, i int, field string) map[string]int64 {
	t.Helper()
	var info struct {
		Nodes []map[string]any `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(e.must("admin", "info", fmt.Sprintf("n%d", i), "--json")), &info); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, n := range info.Nodes {
		v, _ := n[field].(float64)
		got[n["address"].(string)] = int64(v)
	}
	return got
}

// followers are the live nodes that do not lead.
func followers(n, dead, leader int) []int {
	var out []int
	for i := range n {
		if i != dead && i != leader {
			out = append(out, i)
		}
	}
	return out
}

// putCut sends a signed PUT of body (UNSIGNED-PAYLOAD) to node's key,
// sends half of it, and closes the connection.
func putCut(t *testing.T, node, key string, body []byte, access, secret string) {
	t.Helper()
	conn := startPut(t, node, key, body, len(body)/2, access, secret)
	time.Sleep(300 * time.Millisecond)
	conn.Close()
}

// startPut sends the headers of a signed PUT of body (UNSIGNED-PAYLOAD)
// to node's key and its first sent bytes, and returns the connection.
func startPut(t *testing.T, node, key string, body []byte, sent int, access, secret string) net.Conn {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, "http://"+node+"/data/"+key, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(body))
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	if err := v4.NewSigner().SignHTTP(t.Context(), aws.Credentials{AccessKeyID: access, SecretAccessKey: secret}, req, "UNSIGNED-PAYLOAD", "s3", "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", node)
	if err != nil {
		t.Fatal(err)
	}
	var head bytes.Buffer
	fmt.Fprintf(&head, "PUT /data/%s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", key, node, len(body))
	req.Header.Write(&head)
	head.WriteString("\r\n")
	conn.Write(head.Bytes())
	conn.Write(body[:sent])
	return conn
}

// offeredWriteNodeKilled: a node killed (-9) while it writes the body of a
// PUT the leader took its offer for leaves no object, and once it is back
// no shard of that body anywhere: the leader removed the blob from the
// live nodes under its intent, and the heal scan removes what the killed
// node had written of it as an orphan. So does the leader killed then.
func offeredWriteNodeKilled(t *testing.T, e cliEnv, cl *testsite.Cluster, clients []*minio.Client, leader int, access, secret string) {
	nodes := cl.Addrs
	// The leader may have changed since the caller read it (a session
	// lost under the full suite's load, with the tests' 2 s lease): the
	// node killed first must be one that does not lead.
	testsite.Eventually(t, 30*time.Second, func() error {
		info, err := tryClusterInfo(e, fmt.Sprintf("n%d", leader))
		if err != nil {
			return err
		}
		for i, n := range nodes {
			if info[n] == "leader" {
				leader = i
				return nil
			}
		}
		return fmt.Errorf("no leader: %v", info)
	})
	f := (leader + 1) % len(nodes)
	body := make([]byte, 8<<20)
	rand.Read(body)
	// A quarter of the body, then nothing: by the kill the leader has
	// called the node, which writes what came.
	conn := startPut(t, nodes[f], "killed-writer", body, 2<<20, access, secret)
	time.Sleep(time.Second)
	cl.KillNode(f)
	conn.Close()
	testsite.Eventually(t, 20*time.Second, func() error {
		if _, err := clients[leader].StatObject(t.Context(), "data", "killed-writer", minio.StatObjectOptions{}); minio.ToErrorResponse(err).Code != "NoSuchKey" {
			return fmt.Errorf("the PUT whose writer was killed: %v", err)
		}
		return nil
	})
	cl.Start()
	if removed := scanUntilClean(t, e, leader); removed == 0 {
		t.Fatal("the heal scan found nothing the killed node had written of the body")
	}

	// The leader killed while a node writes such a body: the node gives
	// the write up and answers its client that the leader is changing;
	// the next leader has no object, and no shard of it stays.
	conn = startPut(t, nodes[f], "killed-leader", body, 2<<20, access, secret)
	defer conn.Close()
	time.Sleep(time.Second)
	cl.KillNode(leader)
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("the answer to a PUT whose leader was killed: %v", err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("the answer to a PUT whose leader was killed: %s", resp.Status)
	}
	testsite.Eventually(t, 30*time.Second, func() error {
		if _, err := clients[f].StatObject(t.Context(), "data", "killed-leader", minio.StatObjectOptions{}); minio.ToErrorResponse(err).Code != "NoSuchKey" {
			return fmt.Errorf("the PUT whose leader was killed: %v", err)
		}
		return nil
	})
	cl.Start()
	scanUntilClean(t, e, f)
}

// scanUntilClean runs heal scans through node n alias "n<i>" until one
// finds no orphan, nothing missing and nothing degraded, and returns how
// many orphans the scans removed. It starts once every node's drive
// answers (a node just started may not yet: a scan leaves such a drive
// out, and the drive watcher's own scan could then remove the orphans
// first).
func scanUntilClean(t *testing.T, e cliEnv, i int) float64 {
	t.Helper()
	testsite.Eventually(t, 60*time.Second, func() error {
		var info struct{ Nodes []adminclient.NodeInfo }
		if err := json.Unmarshal([]byte(e.must("admin", "info", fmt.Sprintf("n%d", i), "--json")), &info); err != nil {
			return err
		}
		for _, n := range info.Nodes {
			if n.Drive != "ok" {
				return fmt.Errorf("node %s: drive %s", n.Address, n.Drive)
			}
		}
		return nil
	})
	removed := 0.0
	testsite.Eventually(t, 60*time.Second, func() error {
		out, err := healScanJSON(t, e, fmt.Sprintf("n%d", i))
		if err != nil {
			return err
		}
		removed += out["removed"].(float64)
		// A scan that left out a drive not answering yet (a node just
		// started) checked nothing there: not clean.
		if out["orphans"] != 0.0 || out["missingCount"] != 0.0 || out["degraded"] != 0.0 || out["unanswered"] != 0.0 {
			return fmt.Errorf("heal: %v", out)
		}
		return nil
	})
	return removed
}

// healScanJSON runs a heal scan through alias with --json and returns its
// report whatever its exit status: 1 while data is missing or blobs were
// left unchecked on a drive that did not answer (a node just started).
// A run that printed no report is an error, for Eventually to retry.
func healScanJSON(t *testing.T, e cliEnv, alias string) (map[string]any, error) {
	t.Helper()
	out, err := e.run("admin", "heal", alias, "--scan", "--json")
	if !strings.Contains(out, `"blobFiles"`) {
		return nil, fmt.Errorf("heal scan printed no report (%v): %s", err, out)
	}
	return checkJSONStyle(t, out)[0], nil
}
