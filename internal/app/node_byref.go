package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/blob/sse"
	"github.com/twinlake/twinlake/internal/nodeapi"
	"github.com/twinlake/twinlake/internal/objects"
)

// Reads served where they arrive. A GET that a node passes to the leader
// carries the node's signed offer to read the data itself
// (nodeapi.HeaderReadOffer). The leader serves it as any other (checks the
// signature and the policies, picks the version and the range, writes the
// headers) until it comes to the body: when that is at least 1 MiB of
// blob data, it sends the runs of blobs the body is made of instead of
// their bytes (runsWriter), with, for a blob encrypted at rest, its data
// key sealed under the node secret. The node then reads those runs from
// the site's drives (and decrypts them), as the leader would have, and
// sends them to the client under the leader's headers (readRuns). So an object's bytes
// cross the network once, from the drives to the node the client reached,
// not twice through the leader, and the site's reads are spread over its
// nodes' CPUs and network. A run the node cannot open (its blob removed by
// a write since the leader answered) is given up before the client gets
// anything, and the GET passed again without the offer.

// headerRuns marks a leader's answer that sends its body as runs of blobs;
// its value is the body's length.
const headerRuns = "X-Twinlake-Node-Runs"

// maxRunsAnswer bounds a leader's answer of runs (an object of 10,000
// parts is about 800 KB of them).
const maxRunsAnswer = 4 << 20

// runsAnswer is the body of a leader's answer of runs.
type runsAnswer struct {
	Runs []objects.Run `json:"runs"`
}

// offersRead reports whether a node passing r to the leader offers to read
// its data: a GET outside the site's own paths (/twinlake/: the admin API,
// the console, health, the node API).
func offersRead(r *http.Request) bool {
	return isRead(r) && r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/twinlake/")
}

// runsWriter is the leader's response writer for a request that came with
// a node's read offer. It holds the status until the body starts, so that
// a body sent as runs can still change the headers.
type runsWriter struct {
	http.ResponseWriter
	secret []byte // the node secret, which seals the runs' data keys
	keys   bool   // the node decrypts runs (its offer's level is 2 or more)
	code   int    // the status held, 0 while none is
	passed bool   // the header is written below
}

// runKeyAAD binds the sealed data key of a run to the run's blob.
func runKeyAAD(blob string) []byte { return []byte("run-key\x00" + blob) }

func (w *runsWriter) WriteHeader(code int) {
	switch {
	case w.passed:
		w.ResponseWriter.WriteHeader(code) // as net/http treats it
	case code < http.StatusOK:
		w.ResponseWriter.WriteHeader(code) // informational: not held
	case w.code == 0:
		w.code = code
	}
}

// pass writes the held header below.
func (w *runsWriter) pass() {
	if w.passed {
		return
	}
	w.passed = true
	if w.code != 0 {
		w.ResponseWriter.WriteHeader(w.code)
	}
}

func (w *runsWriter) Write(p []byte) (int, error) {
	w.pass()
	return w.ResponseWriter.Write(p)
}

func (w *runsWriter) ReadFrom(src io.Reader) (int64, error) {
	w.pass()
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		return rf.ReadFrom(src)
	}
	return io.Copy(struct{ io.Writer }{w.ResponseWriter}, src)
}

// FlushError writes the header, then flushes.
func (w *runsWriter) FlushError() error {
	w.pass()
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *runsWriter) Flush() { w.FlushError() }

func (w *runsWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// WriteRuns implements objects.RunWriter: the body, runs, goes to the node
// as their list, its length in headerRuns.
func (w *runsWriter) WriteRuns(runs []objects.Run) (bool, error) {
	if w.passed {
		return false, nil
	}
	runs = slices.Clone(runs)
	for i, r := range runs {
		if r.Key == nil {
			continue
		}
		if !w.keys {
			return false, nil // the bytes, then
		}
		sealed, err := nodeapi.Seal(w.secret, runKeyAAD(r.Blob), r.Key)
		if err != nil {
			return false, nil
		}
		runs[i].Key = sealed
	}
	body, err := json.Marshal(runsAnswer{Runs: runs})
	if err != nil || len(body) > maxRunsAnswer {
		return false, nil
	}
	var total int64
	for _, r := range runs {
		total += r.Len
	}
	h := w.Header()
	h.Set(headerRuns, strconv.FormatInt(total, 10))
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.pass()
	if w.code == 0 {
		w.ResponseWriter.WriteHeader(http.StatusOK)
	}
	_, err = w.ResponseWriter.Write(body)
	return true, err
}

// errRunsUnread is a leader's answer of runs that the node could not read.
var errRunsUnread = errors.New("node: the runs the leader answered cannot be read here")

// readRuns turns resp, the leader's answer of runs, into the answer with
// their bytes, read from the site's drives. The first run's blob is opened
// now: a failure is errRunsUnread, before the client gets anything.
func (n *Node) readRuns(resp *http.Response) error {
	total, err := strconv.ParseInt(resp.Header.Get(headerRuns), 10, 64)
	if err != nil || total < 0 {
		return fmt.Errorf("%w: bad %s %q", errRunsUnread, headerRuns, resp.Header.Get(headerRuns))
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxRunsAnswer+1))
	resp.Body.Close()
	switch {
	case err != nil:
		return fmt.Errorf("%w: %v", errRunsUnread, err)
	case len(raw) > maxRunsAnswer:
		return fmt.Errorf("%w: a list of runs over %d bytes", errRunsUnread, maxRunsAnswer)
	}
	var ans runsAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return fmt.Errorf("%w: the list of runs: %v", errRunsUnread, err)
	}
	var sum int64
	for _, r := range ans.Runs {
		if r.Off < 0 || r.Len <= 0 {
			return fmt.Errorf("%w: run %+v", errRunsUnread, r)
		}
		sum += r.Len
	}
	if sum != total || len(ans.Runs) == 0 {
		return fmt.Errorf("%w: runs of %d bytes for a body of %d", errRunsUnread, sum, total)
	}
	for i, r := range ans.Runs {
		if r.Key == nil {
			continue
		}
		key, err := nodeapi.Open(n.cfg.NodeSecret, runKeyAAD(r.Blob), r.Key)
		if err != nil {
			return fmt.Errorf("%w: the key of run %d: %v", errRunsUnread, i, err)
		}
		ans.Runs[i].Key = key
	}
	body := &runsBody{set: n.set, runs: ans.Runs, served: &n.runsBytes}
	if err := body.next(); err != nil {
		return fmt.Errorf("%w: %v", errRunsUnread, err)
	}
	n.runsServed.Add(1)
	resp.Body = body
	resp.ContentLength = total
	resp.Header.Del(headerRuns)
	resp.Header.Set("Content-Length", strconv.FormatInt(total, 10))
	return nil
}

// runsBody reads runs of blobs one after another, opening each blob as it
// comes to it.
type runsBody struct {
	set    *blob.Store
	runs   []objects.Run
	cur    io.Reader
	file   blob.File
	served *atomic.Int64 // counts the bytes read
}

// next opens the first run left.
func (b *runsBody) next() error {
	run := b.runs[0]
	f, err := b.set.Open(run.Blob)
	if err != nil {
		return err
	}
	cur, err := openRun(f, run)
	if err != nil {
		f.Close()
		return err
	}
	b.runs = b.runs[1:]
	b.file, b.cur = f, cur
	return nil
}

// openRun returns the reader of run from f, its blob: decrypted, as the
// leader's cipher (sseCipher.DecryptRange) reads it, when it has a key.
func openRun(f blob.File, run objects.Run) (io.Reader, error) {
	size := f.Size()
	if run.Key != nil {
		plain, err := sse.PlainSize(size)
		if err != nil {
			return nil, fmt.Errorf("blob %s: %w", run.Blob, err)
		}
		size = plain
	}
	if run.Off+run.Len > size {
		return nil, fmt.Errorf("blob %s of %d bytes has no run %d+%d", run.Blob, size, run.Off, run.Len)
	}
	if run.Key == nil {
		return io.NewSectionReader(f, run.Off, run.Len), nil
	}
	key, err := objectKey(run.Key)
	if err != nil {
		return nil, err
	}
	return sse.DecryptRange(key, f, f.Size(), run.Off, run.Len)
}

func (b *runsBody) Read(p []byte) (int, error) {
	for {
		if b.cur == nil {
			if len(b.runs) == 0 {
				return 0, io.EOF
			}
			if err := b.next(); err != nil {
				return 0, err
			}
		}
		n, err := b.cur.Read(p)
		b.served.Add(int64(n))
		if errors.Is(err, io.EOF) {
			b.closeFile()
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

func (b *runsBody) closeFile() {
	if b.file != nil {
		b.file.Close()
		b.file, b.cur = nil, nil
	}
}

func (b *runsBody) Close() error {
	b.closeFile()
	b.runs = nil
	return nil
}

// verifiedOffer returns the level of the read offer from a node of the
// site that r, which this node serves as the leader, carries, or false.
func (n *Node) verifiedOffer(r *http.Request) (int, bool) {
	if r.Method != http.MethodGet || r.Header.Get(nodeapi.HeaderReadOffer) == "" {
		return 0, false
	}
	return nodeapi.VerifiedReadOffer(n.cfg.NodeSecret, r)
}
