package nodeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twinlake/twinlake/internal/blob"
)

// Drive is another node's drive reached over the node API: a blob.Drive
// whose shards live on that node.
type Drive struct {
	base   string // http(s)://host:port
	path   string // where the node serves this drive's calls
	secret []byte
	client *http.Client
	// timeout bounds every call but a shard upload.
	timeout time.Duration
	// stall bounds how long a shard upload may make no progress (one
	// write to the node, or its answer once the shard is sent) before it
	// is given up: a node that hangs, rather than dies, costs a write
	// that shard, not the write.
	stall time.Duration
	// batch holds the small shards waiting to go to the node (batch.go),
	// removals the shard removals (removes.go).
	batch    queue[batchShard]
	removals queue[string]
}

var _ blob.Drive = (*Drive)(nil)

// DefaultTimeout bounds a call to another node's drive.
const DefaultTimeout = 30 * time.Second

// DefaultStall bounds how long a shard upload may make no progress.
const DefaultStall = 10 * time.Second

// NewDrive returns drive i (in the node's order, from 0) of the node at
// base (its URL, no path), signing calls with secret; client nil means a
// default one.
func NewDrive(base string, i int, secret []byte, client *http.Client) (*Drive, error) {
	if len(secret) < MinSecretLen {
		return nil, fmt.Errorf("nodeapi: the node secret must be at least %d bytes", MinSecretLen)
	}
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("nodeapi: node URL %q: want http:// or https://", base)
	}
	if client == nil {
		client = &http.Client{}
	}
	if i < 0 {
		return nil, fmt.Errorf("nodeapi: drive %d", i)
	}
	return &Drive{base: strings.TrimSuffix(base, "/"), path: drivePath(i), secret: secret, client: client, timeout: DefaultTimeout, stall: DefaultStall}, nil
}

func (d *Drive) String() string { return d.base + d.path }

// do sends a signed request and returns the response of a 2xx answer;
// others become errors (404 wraps blob.ErrNotFound, 400 errRefused).
func (d *Drive) do(ctx context.Context, method, path string, body io.Reader, hdr http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, d.base+path, body)
	if err != nil {
		return nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	sign(d.secret, req, time.Now())
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", d.base, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	var e apiError
	json.NewDecoder(io.LimitReader(resp.Body, 4<<10)).Decode(&e)
	return nil, statusError(fmt.Errorf("node %s: %s %s: %d %s", d.base, method, path, resp.StatusCode, e.Error), resp.StatusCode)
}

// statusError is err, a node's answer of status, wrapping the error a
// local drive would have given: blob.ErrNotFound, errRefused, or
// syscall.ENOSPC for a drive full or down to its reserve.
func statusError(err error, status int) error {
	switch status {
	case http.StatusNotFound:
		return fmt.Errorf("%w: %v", blob.ErrNotFound, err)
	case http.StatusBadRequest:
		return fmt.Errorf("%w: %v", errRefused, err)
	case http.StatusInsufficientStorage:
		return fmt.Errorf("%w: %v", syscall.ENOSPC, err)
	}
	return err
}

// errRefused is a node's 400 answer: a request it does not take.
var errRefused = errors.New("refused")

// call is do with the drive's timeout, for calls whose answer is read at
// once; fn reads the body.
func (d *Drive) call(method, path string, body io.Reader, hdr http.Header, fn func(*http.Response) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), d.timeout)
	defer cancel()
	resp, err := d.do(ctx, method, path, body, hdr)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if fn != nil {
		return fn(resp)
	}
	return nil
}

// Create implements blob.Drive: a shard of at most blob.SmallShardMax
// bytes is sent whole at Commit, in one request of known length (its
// headers and body in one write to the socket, instead of a chunked
// stream that costs a write, and the node a read, per chunk), shared with
// the other small shards waiting for the node then (batch.go); a larger
// one streams to the node as it is written. Commit returns once the node
// has made it durable.
func (d *Drive) Create(id string) (blob.ShardWriter, error) { return d.upload(id, false), nil }

// Rewrite implements blob.Drive.
func (d *Drive) Rewrite(id string) (blob.ShardWriter, error) { return d.upload(id, true), nil }

func (d *Drive) upload(id string, rewrite bool) *blob.Held {
	path := d.shardPath(id, rewrite)
	return blob.NewHeld(func() (blob.ShardWriter, error) { return d.stream(path), nil },
		func(b []byte) error {
			if len(b) <= batchShardMax {
				return d.sendSmall(id, rewrite, b)
			}
			return d.sendWhole(path, b)
		})
}

// shardPath is where shard id is written (rewrite: replaced).
func (d *Drive) shardPath(id string, rewrite bool) string {
	mode := "create"
	if rewrite {
		mode = "rewrite"
	}
	return d.path + pathShards + id + "?mode=" + mode
}

// sendWhole sends a shard in one request, its answer awaited for the
// stall bound.
func (d *Drive) sendWhole(path string, b []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), d.stall)
	defer cancel()
	resp, err := d.do(ctx, http.MethodPut, path, bytes.NewReader(b), nil)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %v", errStalled, err)
	}
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// stream starts the request that streams a shard to the node at path.
func (d *Drive) stream(path string) *stream {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	st := &stream{pw: pw, done: make(chan error, 1), cancel: cancel, stall: d.stall}
	go func() {
		resp, err := d.do(ctx, http.MethodPut, path, pr, nil)
		if err == nil {
			resp.Body.Close()
		}
		pr.CloseWithError(err) // unblocks a writer the node stopped reading
		st.done <- err
	}()
	return st
}

// stream is a shard streaming to another node.
type stream struct {
	pw     *io.PipeWriter
	done   chan error
	cancel context.CancelFunc
	stall  time.Duration
}

var errStalled = errors.New("shard upload stalled: the node stopped taking it")

// Write hands p to the request; if the node takes none of it for the
// stall bound, the upload is given up.
func (u *stream) Write(p []byte) (int, error) {
	t := time.AfterFunc(u.stall, func() {
		u.pw.CloseWithError(errStalled)
		u.cancel()
	})
	n, err := u.pw.Write(p)
	t.Stop()
	if errors.Is(err, io.ErrClosedPipe) {
		// The transport closed the body: the node answered before it
		// took the whole shard, and its answer (a full drive, say) is
		// the reason, not the pipe.
		select {
		case answer := <-u.done:
			u.done <- answer // for Commit or Abort
			if answer != nil {
				err = answer
			}
		case <-time.After(u.stall):
		}
	}
	return n, err
}

func (u *stream) Commit() error {
	u.pw.Close()
	select {
	case err := <-u.done:
		u.cancel()
		return err
	case <-time.After(u.stall):
		u.cancel()
		<-u.done
		return errStalled
	}
}

var errAborted = errors.New("shard upload aborted")

// errGivenUp ends a stream given up on for being slow.
var errGivenUp = errors.New("shard upload given up on: the node took it too slowly")

// GiveUp implements erasure.GiverUp: the node has taken too little of
// the shard while the write quorum's others took theirs, and a Write
// under way ends with an error as when the stall bound passes.
func (u *stream) GiveUp() {
	u.pw.CloseWithError(errGivenUp)
	u.cancel()
}

func (u *stream) Abort() {
	u.pw.CloseWithError(errAborted)
	u.cancel()
	<-u.done
}

// wholeShard is the size up to which Open fetches a shard whole, in the
// call that learns its size: a small object's read is then one round
// trip to each node instead of one for the size, one for the footer and
// one per block.
const wholeShard = 64 << 10

// Open implements blob.Drive. One GET asks for the shard whole if it is
// at most wholeShard bytes: the node sends it (200), or only its size
// (204), and each ReadAt of a larger shard is then one ranged GET. A node
// that does not know the request (400: it wants a range) is asked the
// size with a HEAD.
func (d *Drive) Open(id string) (blob.ShardReader, error) {
	var r *remoteShard
	hdr := http.Header{headerWholeUpTo: {strconv.Itoa(wholeShard)}}
	err := d.call(http.MethodGet, d.path+pathShards+id, nil, hdr, func(resp *http.Response) error {
		size, err := shardSize(d, id, resp)
		if err != nil {
			return err
		}
		r = &remoteShard{d: d, id: id, size: size}
		if resp.StatusCode != http.StatusOK {
			return nil
		}
		if size > wholeShard {
			return fmt.Errorf("node %s: shard %s of %d bytes sent whole", d.base, id, size)
		}
		r.data = make([]byte, size)
		if _, err := io.ReadFull(resp.Body, r.data); err != nil {
			return fmt.Errorf("node %s: shard %s: %w", d.base, id, err)
		}
		return nil
	})
	if errors.Is(err, errRefused) {
		err = d.call(http.MethodHead, d.path+pathShards+id, nil, nil, func(resp *http.Response) error {
			size, err := shardSize(d, id, resp)
			r = &remoteShard{d: d, id: id, size: size}
			return err
		})
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// shardSize reads the shard's size from its node's answer.
func shardSize(d *Drive, id string, resp *http.Response) (int64, error) {
	n, err := strconv.ParseInt(resp.Header.Get(headerShardSize), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("node %s: shard %s: no size", d.base, id)
	}
	return n, nil
}

// remoteShard is a shard on another node: in memory when Open fetched it
// whole (data not nil), read a range at a time otherwise.
type remoteShard struct {
	d    *Drive
	id   string
	size int64
	data []byte
}

func (r *remoteShard) Size() int64  { return r.size }
func (r *remoteShard) Close() error { return nil }

func (r *remoteShard) ReadAt(p []byte, off int64) (int, error) {
	if off >= r.size {
		return 0, io.EOF
	}
	if r.data != nil {
		n := copy(p, r.data[off:])
		if n < len(p) {
			return n, io.EOF
		}
		return n, nil
	}
	want := min(int64(len(p)), r.size-off)
	hdr := http.Header{"Range": {fmt.Sprintf("bytes=%d-%d", off, off+want-1)}}
	n := 0
	err := r.d.call(http.MethodGet, r.d.path+pathShards+r.id, nil, hdr, func(resp *http.Response) error {
		var err error
		n, err = io.ReadFull(resp.Body, p[:want])
		return err
	})
	if err == nil && int64(n) < int64(len(p)) {
		err = io.EOF
	}
	return n, err
}

// maxList bounds a fan-out directory listing's answer.
const maxList = 64 << 20

// List implements blob.Drive.
func (d *Drive) List(fan string) ([]string, error) {
	var ids []string
	err := d.call(http.MethodGet, d.path+pathList+fan, nil, nil, func(resp *http.Response) error {
		return json.NewDecoder(io.LimitReader(resp.Body, maxList)).Decode(&ids)
	})
	return ids, err
}

// ReadMark implements blob.Drive.
func (d *Drive) ReadMark() ([]byte, error) {
	var m []byte
	err := d.call(http.MethodGet, d.path+pathMark, nil, nil, func(resp *http.Response) error {
		var err error
		m, err = io.ReadAll(io.LimitReader(resp.Body, maxMark))
		return err
	})
	return m, err
}

// WriteMark implements blob.Drive.
func (d *Drive) WriteMark(mark []byte) error {
	return d.call(http.MethodPut, d.path+pathMark, bytes.NewReader(mark), nil, nil)
}

// maxWriteAnswer bounds a node's answer to StoreWrite.
const maxWriteAnswer = 64 << 10

// StoreWrite asks the node to write the body of the PUT it offered to
// under token (HeaderWriteOffer) as call (JSON) says, and decodes its
// answer (JSON) into answer. It lasts as long as ctx: the body's deadlines
// go with call.
func (d *Drive) StoreWrite(ctx context.Context, token string, call, answer any) error {
	body, err := json.Marshal(call)
	if err != nil {
		return err
	}
	resp, err := d.do(ctx, http.MethodPost, PathWrites+url.PathEscape(token), bytes.NewReader(body),
		http.Header{"Content-Type": {"application/json"}})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxWriteAnswer)).Decode(answer); err != nil {
		return fmt.Errorf("node %s: the answer to a write: %w", d.base, err)
	}
	return nil
}
