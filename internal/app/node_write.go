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
	Blob string               `json:"blob"`
	How  s3api.Elsewhere      `json:"how"` // its Check.Key sealed
	Algs []checksum.Algorithm `json:"algs,omitempty"`
	// DataKey, sealed, encrypts the data at rest (none: written plain).
	DataKey []byte `json:"dataKey,omitempty"`
}

// dataKeyAAD binds the sealed data key of a write offered under token to
// that write, apart from the signing key sealed for the same token.
func dataKeyAAD(token string) []byte { return []byte(token + "\x00data-key") }

// writeAnswer is a node's answer to a writeCall: what it wrote, or why it
// did not.
type writeAnswer struct {
	Stored   objects.StoredElsewhere `json:"stored"`
	Trailers http.Header             `json:"trailers,omitempty"`
	// BodyError names the end of reading the body that has an answer
	// of its own (s3api.BodyErrorName); Error tells any other failure.
	BodyError string `json:"bodyError,omitempty"`
	Error     string `json:"error,omitempty"`
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
		return writeAnswer{Error: err.Error()}
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
	var dataKey sse.ObjectKey
	if len(call.DataKey) > 0 {
		key, err := nodeapi.Open(n.cfg.NodeSecret, dataKeyAAD(token), call.DataKey)
		if err != nil {
			return fail(err)
		}
		if dataKey, err = objectKey(key); err != nil {
			return fail(err)
		}
	}
	hs, err := checksum.NewSet(call.Algs...)
	if err != nil {
		return fail(err)
	}
	now := time.Now()
	client := s3api.ClientBody(o.client, o.body, call.How.Idle, call.How.End.Sub(now), now)
	// A read waiting for the client when the call ends returns then.
	stop := context.AfterFunc(ctx, func() { http.NewResponseController(o.client).SetReadDeadline(time.Now()) })
	defer stop()
	body := res.Body(&http.Request{Body: ctxBody{ctx, client}})
	bw, err := n.set.CreateAs(call.Blob)
	if err != nil {
		return fail(err)
	}
	data := io.TeeReader(body, hs)
	if len(call.DataKey) > 0 {
		// As the leader's cipher (sseCipher.Encrypt) writes it.
		data = sse.EncryptReader(dataKey, data)
	}
	if _, err := io.Copy(bw, data); err != nil {
		bw.Abort()
		return fail(err)
	}
	if _, err := bw.Commit(); err != nil {
		return fail(err)
	}
	n.writesHere.Add(1)
	n.writeBytes.Add(hs.Size())
	md5Hex, sums := hs.Sum()
	return writeAnswer{Stored: objects.StoredElsewhere{Size: hs.Size(), MD5: md5Hex, Sums: sums}, Trailers: res.Trailers()}
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
	node, token, ok := nodeapi.VerifiedWriteOffer(n.cfg.NodeSecret, r)
	peer := n.peerAt[node]
	if !ok || peer == nil {
		return r
	}
	body := &elsewhereBody{n: n, peer: peer, token: token, ctx: r.Context()}
	return r.WithContext(s3api.WithOfferedBody(r.Context(), body))
}

// elsewhereBody is, on the leader, the body of a PUT that peer offered to
// write.
type elsewhereBody struct {
	n     *Node
	peer  *nodeapi.Drive
	token string
	ctx   context.Context // the request's
}

// StoreAs implements s3api.OfferedBody: it calls the node to write the
// body.
func (b *elsewhereBody) StoreAs(id string, how s3api.Elsewhere, algs []checksum.Algorithm, dataKey []byte) (objects.StoredElsewhere, http.Header, error) {
	call := writeCall{Blob: id, Algs: algs}
	if len(how.Check.Key) > 0 {
		sealed, err := nodeapi.Seal(b.n.cfg.NodeSecret, []byte(b.token), how.Check.Key)
		if err != nil {
			return objects.StoredElsewhere{}, nil, err
		}
		how.Check.Key = sealed
	}
	call.How = how
	if dataKey != nil {
		sealed, err := nodeapi.Seal(b.n.cfg.NodeSecret, dataKeyAAD(b.token), dataKey)
		if err != nil {
			return objects.StoredElsewhere{}, nil, err
		}
		call.DataKey = sealed
	}
	var ans writeAnswer
	if err := b.peer.StoreWrite(b.ctx, b.token, call, &ans); err != nil {
		return objects.StoredElsewhere{}, nil, err
	}
	switch {
	case ans.BodyError != "":
		if err := s3api.BodyError(ans.BodyError); err != nil {
			return objects.StoredElsewhere{}, nil, err
		}
		return objects.StoredElsewhere{}, nil, fmt.Errorf("node %s: reading the body: %s", b.peer, ans.BodyError)
	case ans.Error != "":
		return objects.StoredElsewhere{}, nil, fmt.Errorf("node %s: writing the body: %s", b.peer, ans.Error)
	}
	return ans.Stored, ans.Trailers, nil
}
