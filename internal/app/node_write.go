package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twinlake/twinlake/internal/blob/sse"
	"github.com/twinlake/twinlake/internal/checksum"
	"github.com/twinlake/twinlake/internal/nodeapi"
	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/replication/peerhttp"
	"github.com/twinlake/twinlake/internal/s3api"
)

// Writes stored where they arrive. A PUT of at least byRefWriteMin bytes
// that a node passes to the leader carries the node's signed offer to write
// the body itself (nodeapi.HeaderWriteOffer), and asks the leader to
// continue (Expect: 100-continue) before its body is sent. The leader
// serves it as any other (checks the signature, the policies, the quota,
// the conditions) until it comes to the data: a PUT's or an upload part's
// that it would write to a blob (objects.ElsewhereBody). There it writes
// the blob's intent, as for its own writes, and instead of reading the
// body it calls the node (nodeapi.PathWrites + the offer's token) with the
// blob's ID, the checks of the payload (the client's signing key sealed
// under the node secret), the body's deadlines and, for data encrypted at
// rest, the data key it made for it (sealed the same way; the leader keeps
// the key's form sealed by the site or client key, as for its own writes).
// The node reads the body from its client with those checks, hashes it,
// encrypts it if told to and writes it to the site's drives as the leader
// would have, and answers its size and digests, which the leader checks
// and commits as its own. So a PUT's bytes cross the network once, from
// the node the client reached to the drives, not twice through the leader.
// A leader that declines the offer (data it keeps inline, another call
// than a PUT's data) reads the body: asked to continue, the node sends it
// as it came.

// byRefWriteMin is the smallest body a node offers to write.
const byRefWriteMin = 1 << 20

// offerContinueWait is how long a node that offered to write a body waits
// for the leader to ask for it instead before it sends it anyway; a body
// the leader took is then held back until the pass ends.
const offerContinueWait = 10 * time.Minute

// maxWriteCall bounds the leader's call to write a body.
const maxWriteCall = 64 << 10

// offersWrite reports whether a node passing r to the leader offers to
// write its body: a PUT of a known length of at least byRefWriteMin bytes
// outside the site's own paths, or a peer's version with its data.
func offersWrite(r *http.Request) bool {
	return r.Method == http.MethodPut && r.ContentLength >= byRefWriteMin &&
		(!strings.HasPrefix(r.URL.Path, "/twinlake/") || r.URL.Path == peerhttp.PathVersion)
}

// The states of a body offered to the leader.
const (
	offerOpen     = iota // neither taken nor sent yet
	offerTaken           // the leader called to have it written here
	offerStreamed        // the leader asked for it: sent to it
)

// offeredWrite is a PUT's body this node offered the leader to write.
type offeredWrite struct {
	body   *passBody           // the client's
	client http.ResponseWriter // the client's: its connection's deadlines
	state  atomic.Int32
	ctx    context.Context // ends with the pass
	// done is closed when the leader's call that took the body is over
	// with it: the pass waits for that, so that nothing reads the
	// client's body after its handler returned.
	done chan struct{}
}

// settle waits, if the leader took the body, until its call is over.
func (o *offeredWrite) settle() {
	if o.state.Load() == offerTaken {
		<-o.done
	}
}

// Read sends the body to the leader, which asked for it, unless the
// leader took it to have it written here: then it holds back until the
// pass ends.
func (o *offeredWrite) Read(p []byte) (int, error) {
	if o.state.CompareAndSwap(offerOpen, offerStreamed) || o.state.Load() == offerStreamed {
		return o.body.Read(p)
	}
	<-o.ctx.Done()
	return 0, errOfferTaken
}

func (o *offeredWrite) Close() error { return nil }

var errOfferTaken = errors.New("node: the body is being written here, as the leader asked")

// newToken names an offered write.
func newToken() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// writeCall is the leader's call to a node to write the body it offered.
type writeCall struct {
	// Blob is the one blob to write the whole body to, in a call to a
	// node whose offer is of level 1.
	Blob string               `json:"blob,omitempty"`
	How  s3api.Elsewhere      `json:"how"` // its Check.Key sealed
	Algs []checksum.Algorithm `json:"algs,omitempty"`
	// Blobs are the blobs to write, one after another, in a call to a
	// node whose offer is of level 2 or more.
	Blobs []writeBlob `json:"blobs,omitempty"`
}

// writeBlob is one blob a writeCall names: the next Size bytes of the
// body (all the rest: negative), encrypted under DataKey, sealed, if set.
type writeBlob struct {
	ID      string `json:"id"`
	Size    int64  `json:"size"`
	DataKey []byte `json:"dataKey,omitempty"`
}

// dataKeyAAD binds the sealed data key of a blob written under token to
// them, apart from the signing key sealed for the same token.
func dataKeyAAD(token, blob string) []byte { return []byte(token + "\x00data-key\x00" + blob) }

// writeAnswer is a node's answer to a writeCall: what it wrote, or why it
// did not.
type writeAnswer struct {
	Stored   objects.StoredElsewhere   `json:"stored"`          // a level 1 call's blob
	Blobs    []objects.StoredElsewhere `json:"blobs,omitempty"` // or a call's Blobs
	Trailers http.Header               `json:"trailers,omitempty"`
	// BodyError names the end of reading the body that has an answer
	// of its own (s3api.BodyErrorName); Error tells any other failure.
	BodyError string `json:"bodyError,omitempty"`
	Error     string `json:"error,omitempty"`
	// Full is set with Error when the drives were out of room
	// (syscall.ENOSPC), which the client is told as such.
	Full bool `json:"full,omitempty"`
	// Skipped is set when writes on the node left drives out (a drive
	// silent: blob.Store.TakeSkipped), which the leader's drive watcher
	// is to heal.
	Skipped bool `json:"skipped,omitempty"`
}

// storeWrite answers the leader's call to write a body this node offered:
// it reads the body from its client with the call's checks and writes it
// to the blob named, on the site's drives.
func (n *Node) storeWrite(w http.ResponseWriter, r *http.Request) {
	token := strings.TrimPrefix(r.URL.Path, nodeapi.PathWrites)
	v, ok := n.offered.Load(token)
	if !ok {
		writeNodeError(w, http.StatusNotFound, "no write offered under this token")
		return
	}
	o := v.(*offeredWrite)
	if !o.state.CompareAndSwap(offerOpen, offerTaken) {
		writeNodeError(w, http.StatusConflict, "the body is taken already")
		return
	}
	defer close(o.done)
	var call writeCall
	if err := json.NewDecoder(io.LimitReader(r.Body, maxWriteCall)).Decode(&call); err != nil {
		writeNodeError(w, http.StatusBadRequest, "the call: "+err.Error())
		return
	}
	ans := n.writeHere(r.Context(), o, token, &call)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(ans)
}

// writeHere reads o's body as call says and writes it to call's blob; it
// gives up when ctx, the leader's call, ends (the leader gone).
func (n *Node) writeHere(ctx context.Context, o *offeredWrite, token string, call *writeCall) writeAnswer {
	fail := func(err error) writeAnswer {
		if name := s3api.BodyErrorName(err); name != "" {
			return writeAnswer{BodyError: name}
		}
		return writeAnswer{Error: err.Error(), Full: errors.Is(err, syscall.ENOSPC)}
	}
	check := call.How.Check
	if len(check.Key) > 0 {
		key, err := nodeapi.Open(n.cfg.NodeSecret, []byte(token), check.Key)
		if err != nil {
			return fail(err)
		}
		check.Key = key
	}
	res, err := check.Result()
	if err != nil {
		return fail(err)
	}
	blobs := call.Blobs
	if len(blobs) == 0 {
		blobs = []writeBlob{{ID: call.Blob, Size: -1}}
	}
	now := time.Now()
	client := s3api.ClientBody(o.client, o.body, call.How.Idle, call.How.End.Sub(now), now)
	// A read waiting for the client when the call ends returns then.
	stop := context.AfterFunc(ctx, func() { http.NewResponseController(o.client).SetReadDeadline(time.Now()) })
	defer stop()
	body := res.Body(&http.Request{Body: ctxBody{ctx, client}})
	var stored []objects.StoredElsewhere
	var written int64
	for _, b := range blobs {
		st, err := n.writeBlob(body, b, token, call.Algs)
		if err != nil {
			return fail(err)
		}
		stored = append(stored, st)
		written += st.Size
	}
	if blobs[len(blobs)-1].Size >= 0 {
		// The body ends with the last blob: its end is where its
		// checks are made.
		var one [1]byte
		switch k, err := io.ReadFull(body, one[:]); {
		case k > 0:
			return fail(errors.New("the body is longer than the blobs to write"))
		case err != io.EOF:
			return fail(err)
		}
	}
	n.writesHere.Add(1)
	n.writeBytes.Add(written)
	ans := writeAnswer{Trailers: res.Trailers(), Skipped: n.set.TakeSkipped()}
	if len(call.Blobs) == 0 {
		ans.Stored = stored[0]
	} else {
		ans.Blobs = stored
	}
	return ans
}

// writeBlob writes b from body, which the leader's call under token
// names, hashed with its MD5 and algs.
func (n *Node) writeBlob(body io.Reader, b writeBlob, token string, algs []checksum.Algorithm) (objects.StoredElsewhere, error) {
	hs, err := checksum.NewSet(algs...)
	if err != nil {
		return objects.StoredElsewhere{}, err
	}
	data := body
	if b.Size >= 0 {
		data = io.LimitReader(body, b.Size)
	}
	data = io.TeeReader(data, hs)
	if len(b.DataKey) > 0 {
		raw, err := nodeapi.Open(n.cfg.NodeSecret, dataKeyAAD(token, b.ID), b.DataKey)
		if err != nil {
			return objects.StoredElsewhere{}, err
		}
		key, err := objectKey(raw)
		if err != nil {
			return objects.StoredElsewhere{}, err
		}
		// As the leader's cipher (sseCipher.Encrypt) writes it.
		data = sse.EncryptReader(key, data)
	}
	bw, err := n.set.CreateAs(b.ID)
	if err != nil {
		return objects.StoredElsewhere{}, err
	}
	if _, err := io.Copy(bw, data); err != nil {
		bw.Abort()
		return objects.StoredElsewhere{}, err
	}
	if b.Size >= 0 && hs.Size() != b.Size {
		bw.Abort()
		return objects.StoredElsewhere{}, objects.ErrIncompleteBody
	}
	if _, err := bw.Commit(); err != nil {
		return objects.StoredElsewhere{}, err
	}
	md5Hex, sums := hs.Sum()
	return objects.StoredElsewhere{Size: hs.Size(), MD5: md5Hex, Sums: sums}, nil
}

// ctxBody is a body that ends when ctx does.
type ctxBody struct {
	ctx context.Context
	io.ReadCloser
}

func (b ctxBody) Read(p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	return b.ReadCloser.Read(p)
}

func writeNodeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(writeAnswer{Error: msg})
}

// withOfferedBody returns r carrying, when a node of the site offered to
// write its body, that offer for the leader's server (s3api.OfferedBody).
func (n *Node) withOfferedBody(r *http.Request) *http.Request {
	if r.Method != http.MethodPut || r.Header.Get(nodeapi.HeaderWriteOffer) == "" {
		return r
	}
	node, token, level, ok := nodeapi.VerifiedWriteOffer(n.cfg.NodeSecret, r)
	peer := n.peerAt[node]
	if !ok || peer == nil {
		return r
	}
	body := &elsewhereBody{n: n, peer: peer, token: token, level: level, ctx: r.Context()}
	return r.WithContext(s3api.WithOfferedBody(r.Context(), body))
}

// elsewhereBody is, on the leader, the body of a PUT that peer offered to
// write.
type elsewhereBody struct {
	n     *Node
	peer  *nodeapi.Drive
	token string
	level int             // the offer's
	ctx   context.Context // the request's
}

// CanStore implements s3api.OfferedBody: a node whose offer is of level 1
// writes a whole body, plain, as one blob.
func (b *elsewhereBody) CanStore(blobs int, encrypted bool) bool {
	return b.level >= 2 || blobs == 1 && !encrypted
}

// StoreAs implements s3api.OfferedBody: it calls the node to write the
// body.
func (b *elsewhereBody) StoreAs(blobs []objects.ElsewhereBlob, how s3api.Elsewhere, algs []checksum.Algorithm) ([]objects.StoredElsewhere, http.Header, error) {
	fail := func(err error) ([]objects.StoredElsewhere, http.Header, error) { return nil, nil, err }
	call := writeCall{Algs: algs}
	if len(how.Check.Key) > 0 {
		sealed, err := nodeapi.Seal(b.n.cfg.NodeSecret, []byte(b.token), how.Check.Key)
		if err != nil {
			return fail(err)
		}
		how.Check.Key = sealed
	}
	call.How = how
	switch {
	case b.level >= 2:
		for _, bl := range blobs {
			wb := writeBlob{ID: bl.ID, Size: bl.Size}
			if bl.DataKey != nil {
				sealed, err := nodeapi.Seal(b.n.cfg.NodeSecret, dataKeyAAD(b.token, bl.ID), bl.DataKey)
				if err != nil {
					return fail(err)
				}
				wb.DataKey = sealed
			}
			call.Blobs = append(call.Blobs, wb)
		}
	case len(blobs) == 1 && blobs[0].Size < 0 && blobs[0].DataKey == nil:
		call.Blob = blobs[0].ID
	default:
		return fail(fmt.Errorf("node %s: its offer (level %d) is to write a whole body, plain, as one blob", b.peer, b.level))
	}
	var ans writeAnswer
	if err := b.peer.StoreWrite(b.ctx, b.token, call, &ans); err != nil {
		return fail(err)
	}
	if ans.Skipped {
		b.n.set.NoteSkipped()
	}
	switch {
	case ans.BodyError != "":
		if err := s3api.BodyError(ans.BodyError); err != nil {
			return fail(err)
		}
		return fail(fmt.Errorf("node %s: reading the body: %s", b.peer, ans.BodyError))
	case ans.Full:
		return fail(fmt.Errorf("node %s: writing the body: %s: %w", b.peer, ans.Error, syscall.ENOSPC))
	case ans.Error != "":
		return fail(fmt.Errorf("node %s: writing the body: %s", b.peer, ans.Error))
	case call.Blobs == nil:
		return []objects.StoredElsewhere{ans.Stored}, ans.Trailers, nil
	case len(ans.Blobs) != len(call.Blobs):
		return fail(fmt.Errorf("node %s: wrote %d blobs of %d", b.peer, len(ans.Blobs), len(call.Blobs)))
	}
	return ans.Blobs, ans.Trailers, nil
}
