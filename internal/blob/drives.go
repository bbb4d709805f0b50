package blob

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twinlake/twinlake/internal/erasure"
	"github.com/twinlake/twinlake/internal/trace"
)

// MaxDrives bounds a drive set.
const MaxDrives = erasure.MaxNodes

// OpenDrives prepares the blob tree on each of drives and returns a drive
// set over them (see NewDriveSet; blockSize 0 for the default), each
// drive publishing its calls on bus (nil: none). One drive
// keeps each blob as a plain file, as Open does.
func OpenDrives(drives []string, blockSize int, bus *trace.Bus) (*Store, error) {
	if len(drives) == 1 {
		return Open(drives[0])
	}
	set := make([]Drive, len(drives))
	for i, d := range drives {
		ld, err := NewLocalDrive(d)
		if err != nil {
			return nil, err
		}
		set[i] = TracedDrive(ld, bus)
	}
	return NewDriveSet(set, blockSize)
}

// NewDriveSet returns a store that erasure-codes each blob across 2 to
// MaxDrives drives, one shard per drive, in the layout erasure.ForNodes
// gives for that many: a read survives as many lost or corrupt shards as
// the layout's parity, and a write is acknowledged once its write quorum
// of shards is durable. The order of drives is the shard order and must
// not change once blobs are written: Claim checks it.
func NewDriveSet(drives []Drive, blockSize int) (*Store, error) {
	if len(drives) < 2 || len(drives) > MaxDrives {
		return nil, fmt.Errorf("blob: %d drives: a drive set has 2 to %d", len(drives), MaxDrives)
	}
	l, err := erasure.ForNodes(len(drives))
	if err != nil {
		return nil, err
	}
	code, err := erasure.New(l, blockSize)
	if err != nil {
		return nil, err
	}
	s := &Store{set: append([]Drive(nil), drives...), code: code,
		hung: make([]bool, len(drives)), probing: make([]bool, len(drives)), stuck: make([]atomic.Int64, len(drives))}
	for i := range drives {
		s.names = append(s.names, strconv.Itoa(i))
	}
	return s, nil
}

// Layout is the erasure layout of a drive set, or 1+0 for a single drive.
func (s *Store) Layout() erasure.Layout {
	if s.code == nil {
		return erasure.Layout{Data: 1}
	}
	return s.code.Layout()
}

// Drives is the number of drives.
func (s *Store) Drives() int { return max(1, len(s.set)) }

// each calls fn for every drive in parallel and returns its results in
// drive order.
func each[T any](drives []Drive, fn func(i int, d Drive) T) []T {
	out := make([]T, len(drives))
	var wg sync.WaitGroup
	for i, d := range drives {
		wg.Go(func() { out[i] = fn(i, d) })
	}
	wg.Wait()
	return out
}

// eachWithin is each for calls that may hang (a node paused, or its
// machine gone): it returns each call's error, errUnanswered for those
// still running after wait, whose answers are dropped when they come.
func eachWithin(drives []Drive, wait time.Duration, fn func(i int, d Drive) error) []error {
	_, errs := valuesWithin(drives, wait, nil, 0, func(i int, d Drive) (struct{}, error) { return struct{}{}, fn(i, d) })
	return errs
}

// valuesWithin is eachWithin for calls that return a value as well. When
// silent is not nil it stops waiting sooner, once every call still
// running is to a drive it reports true for (one known silent already)
// and at least enough drives have answered.
func valuesWithin[T any](drives []Drive, wait time.Duration, silent func(i int) bool, enough int, fn func(i int, d Drive) (T, error)) ([]T, []error) {
	type answer struct {
		i   int
		v   T
		err error
	}
	answers := make(chan answer, len(drives)) // buffered: a late answer is dropped
	for i, d := range drives {
		go func() {
			v, err := fn(i, d)
			answers <- answer{i, v, err}
		}()
	}
	vals := make([]T, len(drives))
	errs := make([]error, len(drives))
	for i := range errs {
		errs[i] = errUnanswered
	}
	answered := make([]bool, len(drives))
	onlySilentLeft := func() bool {
		if silent == nil {
			return false
		}
		heard := 0
		for i := range drives {
			switch {
			case answered[i]:
				heard++
			case !silent(i):
				return false
			}
		}
		return heard >= enough
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
collect:
	for range drives {
		if onlySilentLeft() {
			break
		}
		select {
		case a := <-answers:
			vals[a.i], errs[a.i] = a.v, a.err
			answered[a.i] = true
		case <-timer.C:
			break collect
		}
	}
	return vals, errs
}

// NotReached reports whether err says a call never reached its drive:
// the connection to the drive's node could not be made (its machine down
// or cut off: the connection timed out; its process gone: refused). That
// is no answer from the drive: it does not end the drive's hung mark, and
// a read or a claim marks the drive hung for it, so that reads stop
// waiting for the drive (a connection to a machine that is down takes its
// dial timeout to fail, and a read would wait openHedge for it each time
// the mark ended).
func NotReached(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// errUnanswered is eachWithin's answer for a call still running.
var errUnanswered = errors.New("blob: the drive did not answer in time")

// claimWait bounds how long Claim waits for a drive's answer (a
// variable for tests).
var claimWait = 5 * time.Second

// shardWriter writes one blob's shards.
type shardWriter struct {
	s    *Store
	id   string
	idx  []int         // the drive of each shard
	outs []ShardWriter // nil where the drive failed
	errs []error       // why, where it did
	ew   *erasure.Writer
}

// createShards creates blob id's shard on every drive it can; a drive
// that fails is left out while the write quorum holds.
func (s *Store) createShards(id string) (*shardWriter, error) {
	if !validID(id) {
		return nil, ErrInvalidID
	}
	idx := s.driveOf(id)
	w := &shardWriter{s: s, id: id, idx: idx, errs: s.leftOut(idx)}
	w.outs = each(s.drivesAt(idx), func(i int, d Drive) ShardWriter {
		if w.errs[i] != nil {
			return nil
		}
		sw, err := d.Create(id)
		if err != nil {
			w.errs[i] = err
			return nil
		}
		return sw
	})
	dst := make([]io.Writer, len(w.outs))
	for i, o := range w.outs {
		if o != nil {
			dst[i] = o
		}
	}
	ew, err := s.code.NewWriter(dst)
	if err != nil {
		w.abort()
		if errors.Is(err, erasure.ErrWriteQuorum) {
			if qe := quorumError(w.errs, s.code.Layout().WriteQuorum()); qe != nil {
				return nil, qe // with the drives' reasons: ENOSPC when they are full
			}
		}
		return nil, fmt.Errorf("blob: create: %w", err)
	}
	// A shard stream that takes too little while the write quorum's
	// others take theirs (its node paused) is given up on after
	// graceWait, as a commit is, and its drive left out of the writes
	// after it until it answers a probe (unstick).
	ew.SetGrace(graceWait, func(i int) {
		s.stuck[idx[i]].Add(1)
		s.skipped.Store(true)
		s.unstick(idx[i], errGivenUp)
	})
	w.ew = ew
	return w, nil
}

// errGivenUp is why a shard stream given up on for being slow failed.
var errGivenUp = errors.New("blob: shard stream given up on after the write quorum's took theirs")

// commit ends the coding, then commits every shard still written, in
// parallel; it fails unless the write quorum of shards is durable, and
// waits for the others at most graceWait once it is (stuck.go). A shard
// that failed is aborted: it is one to heal, not to read.
func (w *shardWriter) commit() error {
	if _, _, err := w.ew.Close(); err != nil {
		w.abort()
		return fmt.Errorf("blob: %w", err)
	}
	werrs := w.ew.Errs()
	outs := w.outs
	w.outs = nil
	quorum := w.s.code.Layout().WriteQuorum()
	errs := w.s.eachQuorum(w.idx, quorum,
		func(i int) error {
			switch {
			case outs[i] == nil:
				return cmp.Or(w.errs[i], ErrNotFound)
			case werrs[i] != nil:
				outs[i].Abort()
				return werrs[i]
			}
			return nil
		},
		func(i int) error { return outs[i].Commit() })
	return quorumError(errs, quorum)
}

// quorumError is a write's error from its shards' (nil where durable): none
// while q are durable, else erasure.ErrWriteQuorum, which also wraps
// syscall.ENOSPC when the drives found full (or down to their reserve)
// are enough alone to break the quorum: the site is out of room, not
// out of drives.
func quorumError(errs []error, q int) error {
	durable, full := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			durable++
		case errors.Is(err, syscall.ENOSPC):
			full++
		}
	}
	switch {
	case durable >= q:
		return nil
	case len(errs)-full < q:
		return fmt.Errorf("blob: %w: %d of %d shards durable, %d needed, %d drives full: %w",
			erasure.ErrWriteQuorum, durable, len(errs), q, full, syscall.ENOSPC)
	}
	return fmt.Errorf("blob: %w: %d of %d shards durable, %d needed", erasure.ErrWriteQuorum, durable, len(errs), q)
}

// reason gives an error of the coding's write (the write quorum lost as
// the shards went out) the drives' reasons when they are full: ENOSPC.
func (w *shardWriter) reason(err error) error {
	if !errors.Is(err, erasure.ErrWriteQuorum) {
		return err
	}
	errs := slices.Clone(w.ew.Errs()) // one per shard, as w.errs
	for i, e := range w.errs {
		if e != nil {
			errs[i] = e
		}
	}
	if qe := quorumError(errs, w.s.code.Layout().WriteQuorum()); errors.Is(qe, syscall.ENOSPC) {
		return qe
	}
	return err
}

// abort discards the shards being written.
func (w *shardWriter) abort() {
	for _, o := range w.outs {
		if o != nil {
			o.Abort()
		}
	}
	w.outs = nil
}

// shardFile is a blob read back from its shards.
type shardFile struct {
	*erasure.Reader
	shards []ShardReader // opened at once
	lazy   []*lazyShard  // opened only if the reader turns to them
	size   int64
}

func (f *shardFile) Size() int64 { return f.size }

func (f *shardFile) Close() error {
	closeAll(f.shards)
	for _, l := range f.lazy {
		l.close()
	}
	return nil
}

// openShards opens blob id for reading. The data shards are opened first,
// in parallel: when they are all there with the length the object's size
// gives, they are all a read needs, and each parity shard is opened only
// if the reader turns to it (a data shard found corrupt while reading).
// That spares a small object's read one request to each parity shard's
// node. Otherwise every shard is opened, as heal does, and those missing
// or of another length are read around.
func (s *Store) openShards(id string) (File, error) {
	if !validID(id) {
		return nil, ErrInvalidID
	}
	start, idx := time.Now(), s.driveOf(id)
	if f, ok := s.openDataShards(id, idx, start); ok {
		return f, nil
	}
	shards, size, err := s.openOnWithin(id, idx, s.code.Layout().ReadQuorum(), false, start)
	if err != nil {
		return nil, err
	}
	src := make([]io.ReaderAt, len(shards))
	sound := 0
	for i, r := range shards {
		if r != nil {
			src[i] = r
			sound++
		}
	}
	if need := s.code.Layout().ReadQuorum(); sound < need {
		closeAll(shards)
		return nil, fmt.Errorf("blob: %s: %w: %d of %d shards present, %d needed", id, erasure.ErrReadQuorum, sound, len(shards), need)
	}
	r, err := s.code.NewReader(src, size)
	if err != nil {
		closeAll(shards)
		return nil, err
	}
	return &shardFile{Reader: r, shards: shards, size: size}, nil
}

// openDataShards opens only the data shards of blob id, placed on the
// drives at idx (driveOf), for a read that started at start; ok is false
// (and nothing is left open) unless every one opened with the length the
// object's size gives.
func (s *Store) openDataShards(id string, idx []int, start time.Time) (File, bool) {
	lay := s.code.Layout()
	drives := s.drivesAt(idx)
	// Not all there within openHedge: every shard is opened, as below.
	shards, size, err := s.openOnWithin(id, idx[:lay.Data], lay.Data, true, start)
	if err != nil {
		return nil, false
	}
	if slices.Contains(shards, nil) {
		closeAll(shards)
		return nil, false
	}
	src := make([]io.ReaderAt, len(drives))
	for i, r := range shards {
		src[i] = r
	}
	var lazy []*lazyShard
	for i, d := range drives[lay.Data:] {
		l := &lazyShard{drive: d, id: id, size: s.code.ShardSize(size)}
		lazy = append(lazy, l)
		src[lay.Data+i] = l
	}
	r, err := s.code.NewReader(src, size)
	if err != nil {
		closeAll(shards)
		return nil, false
	}
	return &shardFile{Reader: r, shards: shards, lazy: lazy, size: size}, true
}

// lazyShard is a parity shard opened on its first read: one that is
// missing or of another length fails that read, and the erasure reader
// reads around it as around any bad shard.
type lazyShard struct {
	drive Drive
	id    string
	size  int64 // the shard length the object's size gives

	mu  sync.Mutex
	r   ShardReader
	err error
}

func (l *lazyShard) ReadAt(p []byte, off int64) (int, error) {
	l.mu.Lock()
	if l.r == nil && l.err == nil {
		r, err := l.drive.Open(l.id)
		switch {
		case err != nil:
			l.err = err
		case r.Size() != l.size:
			r.Close()
			l.err = fmt.Errorf("blob: %s: shard of %d bytes, want %d", l.id, r.Size(), l.size)
		default:
			l.r = r
		}
	}
	r, err := l.r, l.err
	l.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return r.ReadAt(p, off)
}

func (l *lazyShard) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.r != nil {
		l.r.Close()
		l.r = nil
	}
	l.err = errors.New("blob: shard closed")
}

// openHedge is how long a read waits for every shard it opened before it
// goes on with those it has, when they are enough: a drive whose node is
// paused or cut off answers only at its call's timeout (30 s for another
// node's).
var openHedge = 2 * time.Second

// openOnWithin is openOn for a read that started at start, of blob id's
// shards on the drives of s.set at idx: once openHedge has passed since
// start with need shards opened, or at once then when settle is set, it
// goes on without those that have not answered (nil, as missing ones;
// they are closed when they answer), and marks their drives hung; nor
// does it wait for a drive marked so, which it unmarks when it answers.
func (s *Store) openOnWithin(id string, idx []int, need int, settle bool, start time.Time) ([]ShardReader, int64, error) {
	type opened struct {
		i int
		r ShardReader
	}
	const (
		pending = iota
		answered
		abandoned
	)
	answers := make(chan opened, len(idx)) // buffered: a late answer is closed by the drain below
	state := make([]int, len(idx))         // guarded by s.mu
	for i, d := range idx {
		s.mu.Lock()
		probe := s.hung[d]
		if probe && s.probing[d] {
			s.mu.Unlock()
			state[i] = answered // not asked: a hung drive with an open out already
			answers <- opened{i, nil}
			continue
		}
		s.probing[d] = s.probing[d] || probe
		s.mu.Unlock()
		go func() {
			r, err := s.set[d].Open(id)
			s.mu.Lock()
			// A call that never reached the drive is no answer from it.
			s.hung[d] = NotReached(err)
			if probe || state[i] == abandoned {
				s.probing[d] = false
			}
			state[i] = answered
			s.mu.Unlock()
			if err != nil {
				r = nil
			}
			answers <- opened{i, r}
		}()
	}
	shards := make([]ShardReader, len(idx))
	got := make([]bool, len(idx))
	// waitsOnlyForHung reports whether every drive not answered yet is
	// marked hung, or stuck (a write's call to it was given up on).
	waitsOnlyForHung := func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, d := range idx {
			if !got[i] && !s.hung[d] && !s.stuckDrive(d) {
				return false
			}
		}
		return true
	}
	timer := time.NewTimer(time.Until(start.Add(openHedge)))
	defer timer.Stop()
	n, sound, hedged := 0, 0, false
	for n < len(idx) {
		if (hedged || waitsOnlyForHung()) && (sound >= need || settle) {
			break
		}
		select {
		case a := <-answers:
			n++
			got[a.i] = true
			if shards[a.i] = a.r; a.r != nil {
				sound++
			}
		case <-timer.C:
			hedged = true
		}
	}
	if left := len(idx) - n; left > 0 {
		s.mu.Lock()
		for i, d := range idx {
			if state[i] == pending { // its open still out is the drive's probe
				state[i] = abandoned
				s.hung[d], s.probing[d] = true, true
			}
		}
		s.mu.Unlock()
		go func() {
			for range left {
				if a := <-answers; a.r != nil {
					a.r.Close()
				}
			}
		}()
	}
	return s.sizeShards(id, shards)
}

// sizeShards learns the object's size from the first sound footer among
// shards, blob id's opened (nil: missing), and drops (closing) those of
// another length.
func (s *Store) sizeShards(id string, shards []ShardReader) ([]ShardReader, int64, error) {
	size := int64(-1)
	found := false
	for _, r := range shards {
		if r == nil {
			continue
		}
		found = true
		if n, err := s.code.StreamSize(r, r.Size()); err == nil {
			size = n
			break
		}
	}
	if !found {
		return nil, 0, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if size < 0 {
		closeAll(shards)
		return nil, 0, fmt.Errorf("blob: %s: %w: no shard holds a sound footer", id, erasure.ErrReadQuorum)
	}
	for i, r := range shards {
		if r != nil && r.Size() != s.code.ShardSize(size) {
			r.Close()
			shards[i] = nil
		}
	}
	return shards, size, nil
}

func closeAll(shards []ShardReader) {
	for _, r := range shards {
		if r != nil {
			r.Close()
		}
	}
}

// drivesAt is the drives of s.set at idx.
func (s *Store) drivesAt(idx []int) []Drive {
	out := make([]Drive, len(idx))
	for i, d := range idx {
		out[i] = s.set[d]
	}
	return out
}

// driveOf maps blob id's shard indexes to drive indexes, in shard order:
// the set's drives in the rendezvous-hash order of the key hash a placed
// ID carries (erasure.PlaceHash), so that an object's shards are placed
// by its bucket and key and the data shards, which reads go to first, and
// the parity shards are spread evenly over the drives rather than always
// on the same ones. An ID without a key hash (NewID, and every blob
// written before placement by key) is placed by the ID itself
// (erasure.PlaceName).
func (s *Store) driveOf(id string) []int {
	var order []string
	if h, ok := placedHash(id); ok {
		order = erasure.PlaceHash(h, s.names)
	} else {
		order = erasure.PlaceName(id, s.names)
	}
	out := make([]int, len(order))
	for i, name := range order {
		out[i], _ = strconv.Atoi(name) // a name is its drive's index
	}
	return out
}

// DriveErrors reads every drive's mark, at once, and returns for each
// drive why it cannot be reached, or nil; nil on a single drive. A drive
// that has not answered within markWait (its node paused, or its machine
// gone) gets errUnanswered: admin info and a metrics scrape ask, and
// would otherwise wait for the call's own timeout. Such a drive is marked
// hung, as a read's open left unanswered does: reads and a heal scan go
// on without waiting for it until it answers.
func (s *Store) DriveErrors() []error {
	_, errs := s.readMarks(markWait, 0)
	return errs
}

// readMarks reads every drive's mark at once, waiting at most wait, and
// not at all for a drive marked hung once the others, and at least enough
// drives, have answered; a drive that has not answered, or that the call
// never reached (NotReached), is marked hung, and one that answers
// (anything else) is not, so that a drive marked hung when it answers
// again is waited for by the next call.
func (s *Store) readMarks(wait time.Duration, enough int) ([][]byte, []error) {
	h := s.newHearing()
	marks, errs := valuesWithin(s.set, wait, s.isHung, enough, func(i int, d Drive) ([]byte, error) {
		m, err := d.ReadMark()
		if !NotReached(err) {
			h.heard(i)
		}
		return m, err
	})
	h.silent(errs)
	return marks, errs
}

// hearing follows one round of calls to every drive of the set: which
// drives answered, so that only those that have not are marked hung once
// the round stops waiting (an answer that comes just after it gave up on
// the drive is not undone).
type hearing struct {
	s        *Store
	answered []bool // guarded by s.mu
}

func (s *Store) newHearing() *hearing { return &hearing{s: s, answered: make([]bool, len(s.set))} }

// heard records that drive i answered: it is not hung.
func (h *hearing) heard(i int) {
	h.s.mu.Lock()
	h.s.hung[i], h.answered[i] = false, true
	h.s.mu.Unlock()
}

// silent marks hung the drives whose calls errs says went unanswered
// (errUnanswered, by drive) or never reached them (NotReached), and that
// have not answered since.
func (h *hearing) silent(errs []error) {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	for i, err := range errs {
		if (errors.Is(err, errUnanswered) || NotReached(err)) && !h.answered[i] {
			h.s.hung[i] = true
		}
	}
}

// MarkHung marks drives (indexes into the set) hung, as a call to them
// left unanswered does: for drives whose node was found silent another
// way (its process takes connections and answers nothing). Reads, writes
// and the claim of a new leader then go on without waiting for them; the
// first answer from one ends its mark.
func (s *Store) MarkHung(drives ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, i := range drives {
		if i >= 0 && i < len(s.hung) {
			s.hung[i] = true
		}
	}
}

// isHung reports whether drive i is marked hung.
func (s *Store) isHung(i int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hung[i]
}

// unanswering reports whether drive i is left out for being silent: an
// open or a read of its mark went unanswered (hung), or a write's or a
// removal's call to it was given up on (stuck).
func (s *Store) unanswering(i int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hung[i] || s.stuckDrive(i)
}

// markWait bounds how long DriveErrors waits for a drive (a variable for
// tests).
var markWait = 2 * time.Second

// HealResult is what Heal found for one blob.
type HealResult struct {
	// Bad lists the drives (indexes into the set) whose shard was
	// missing, of the wrong length, or failed its checksums (a deep heal
	// reads every shard), in order.
	Bad []int
	// Rebuilt is how many of them were written again.
	Rebuilt int
	// Unanswered lists the drives (indexes into the set) left unchecked
	// for not answering (their node paused or cut off), in order: a heal
	// neither waits for them nor writes to them.
	Unanswered []int
}

// Heal checks blob id's shards and rebuilds the bad ones from the sound
// ones, each through its drive's Rewrite, so a crash leaves either the old
// state or a whole shard. A quick heal checks that every shard exists with
// the right length; deep also reads every shard through its checksums.
// dryRun reports without writing. On a single drive there is nothing to
// heal.
func (s *Store) Heal(id string, deep, dryRun bool) (HealResult, error) {
	if s.code == nil {
		return HealResult{}, nil
	}
	if !validID(id) {
		return HealResult{}, ErrInvalidID
	}
	driveOf := s.driveOf(id)
	shards, size, err := s.openOnWithin(id, driveOf, s.code.Layout().ReadQuorum(), true, time.Now())
	if err != nil {
		return HealResult{}, err
	}
	defer closeAll(shards)
	var res HealResult
	bad := make([]bool, len(shards))
	for i, r := range shards {
		switch {
		case r != nil:
		case s.unanswering(driveOf[i]):
			res.Unanswered = append(res.Unanswered, driveOf[i])
		default:
			bad[i] = true
		}
	}
	if len(res.Unanswered) > 0 {
		slices.Sort(res.Unanswered)
		s.NoteSkipped() // healed by the scan the drive watcher runs once every drive answers
	}
	if deep {
		for i, r := range shards {
			if r != nil && s.code.CheckShard(r, i, size) != nil {
				bad[i] = true
			}
		}
	}
	var badShards []int
	for i, b := range bad {
		if b {
			badShards = append(badShards, i)
			res.Bad = append(res.Bad, driveOf[i])
		}
	}
	slices.Sort(res.Bad)
	if len(res.Bad) == 0 || dryRun {
		return res, nil
	}
	src := make([]io.ReaderAt, len(shards))
	for i, r := range shards {
		if r != nil && !bad[i] {
			src[i] = r
		}
	}
	outs := map[int]ShardWriter{}
	dst := map[int]io.Writer{}
	for _, i := range badShards {
		w, err := s.set[driveOf[i]].Rewrite(id)
		if err != nil {
			for _, o := range outs {
				o.Abort()
			}
			return res, fmt.Errorf("blob: heal %s shard %d: %w", id, i, err)
		}
		outs[i], dst[i] = w, w
	}
	if err := s.code.Rebuild(src, size, dst); err != nil {
		for _, o := range outs {
			o.Abort()
		}
		return res, fmt.Errorf("blob: heal %s: %w", id, err)
	}
	var errs []error
	for _, i := range badShards {
		if err := outs[i].Commit(); err != nil {
			errs = append(errs, fmt.Errorf("blob: heal %s shard %d: %w", id, i, err))
			continue
		}
		res.Rebuilt++
	}
	return res, errors.Join(errs...)
}

// driveMark is the record each drive of a set keeps: which site's set it
// belongs to and its place in it, so that a drive mounted in the wrong
// place, or a drive of another site, is refused rather than read as the
// wrong shards.
type driveMark struct {
	Deployment string `json:"deployment"`
	Index      int    `json:"index"`
	Drives     int    `json:"drives"`
}

// Claim checks every drive of a set against its mark, and marks drives
// that have none (a new set, or an empty drive put in place of a failed
// one) as this deployment's; it returns the indexes of the drives it
// marked, and of those it could not reach (a node down: the set works
// without it, within its quorums). A drive marked for another deployment,
// place or set size is an error. On a single drive it does nothing.
//
// The drives are asked all at once, and one that has not answered within
// claimWait is counted unreachable: a node that hangs (paused, its
// machine gone) holds up a new leader's start by that much, not by its
// calls' timeout for each of its drives in turn. A drive marked hung is
// not waited for once the write quorum has answered. It is marked hung as
// well (see DriveErrors): the drive watcher claims every 10 s, so reads
// stop waiting for a paused node's drives within that, not each node's
// first read after the pause.
func (s *Store) Claim(deployment string) (marked, unreachable []int, err error) {
	if s.code == nil {
		return nil, nil, nil
	}
	// A drive marked hung long ago (its node stalled while another led)
	// may answer now: the claim waits for it when without it too few
	// would answer for the set to serve.
	marks, read := s.readMarks(claimWait, s.code.Layout().WriteQuorum())
	var unmarked []int
	for i, err := range read {
		switch {
		case errors.Is(err, ErrNotFound):
			unmarked = append(unmarked, i)
			continue
		case err != nil:
			unreachable = append(unreachable, i)
			continue
		}
		want := driveMark{Deployment: deployment, Index: i, Drives: len(s.set)}
		var m driveMark
		if err := json.Unmarshal(marks[i], &m); err != nil {
			return nil, unreachable, fmt.Errorf("blob: drive %d (%s): unreadable mark: %w", i+1, s.set[i], err)
		}
		if m != want {
			return nil, unreachable, fmt.Errorf("blob: drive %d (%s) is drive %d of %d of deployment %s, not drive %d of %d of %s: give the drives in their original order",
				i+1, s.set[i], m.Index+1, m.Drives, m.Deployment, i+1, len(s.set), deployment)
		}
	}
	// Every mark found is this set's: mark the drives that have none.
	toMark := make([]Drive, len(unmarked))
	for k, i := range unmarked {
		toMark[k] = s.set[i]
	}
	wrote := eachWithin(toMark, claimWait, func(k int, d Drive) error {
		mark, _ := json.Marshal(driveMark{Deployment: deployment, Index: unmarked[k], Drives: len(s.set)})
		return d.WriteMark(mark)
	})
	for k, err := range wrote {
		if err != nil {
			unreachable = append(unreachable, unmarked[k])
		} else {
			marked = append(marked, unmarked[k])
		}
	}
	slices.Sort(unreachable)
	if len(s.set)-len(unreachable) < s.code.Layout().WriteQuorum() {
		return marked, unreachable, fmt.Errorf("blob: %w: %d of %d drives reachable", erasure.ErrWriteQuorum, len(s.set)-len(unreachable), len(s.set))
	}
	return marked, unreachable, nil
}
