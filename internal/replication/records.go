package replication

import (
	"encoding/binary"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/twinlake/twinlake/internal/objects"
)

// Metadata key layout (all under the meta store, prefix "r/"):
//
//	r/state                               the site replication configuration (State)
//	r/j/<target>\x00<seq 8 bytes BE>      outbound journal entry (Entry), one per target
//	r/m/<target>\x00<due 8B><seq 8B>      retry queue (MRF) entry (MRFEntry), ordered by due time
//	r/s/<target>                          resync job (ResyncJob)
//
// A target is a peer's deployment ID. Journal sequence numbers grow per
// target; entries for one key are journalled under the key's lock, so their
// order is the order of the key's changes.
const (
	keyState  = "r/state"
	pfxJourn  = "r/j/"
	pfxMRF    = "r/m/"
	pfxResync = "r/s/"
)

func journalPrefix(target string) []byte { return []byte(pfxJourn + target + "\x00") }

func journalKey(target string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(journalPrefix(target), seq)
}

func seqOf(k []byte) uint64 { return binary.BigEndian.Uint64(k[len(k)-8:]) }

func mrfPrefix(target string) []byte { return []byte(pfxMRF + target + "\x00") }

func mrfKey(target string, due int64, seq uint64) []byte {
	k := binary.BigEndian.AppendUint64(mrfPrefix(target), uint64(due))
	return binary.BigEndian.AppendUint64(k, seq)
}

func resyncKey(target string) []byte { return []byte(pfxResync + target) }

// Site is one member of the site replication configuration.
type Site struct {
	ID       string `msgpack:"id" json:"deploymentID"`
	Name     string `msgpack:"n" json:"name"`
	Endpoint string `msgpack:"e" json:"endpoint"`
}

// State is the site replication configuration, the same on every member.
type State struct {
	Sites            []Site `msgpack:"s" json:"sites"`
	ServiceAccessKey string `msgpack:"ak" json:"serviceAccessKey"`
	ServiceSecretKey string `msgpack:"sk" json:"serviceSecretKey"`
	// Updated orders configuration changes (Unix nanoseconds).
	Updated int64 `msgpack:"u" json:"updated"`
}

// Enabled reports whether the configuration joins at least two sites.
func (s *State) Enabled() bool { return s != nil && len(s.Sites) > 1 }

// Operations journalled for a target.
const (
	OpVersion      = "version"       // send a version (object, delete marker, or metadata change)
	OpPurge        = "purge"         // remove a version permanently
	OpBucket       = "bucket"        // send the bucket record
	OpBucketDelete = "bucket-delete" // delete the bucket
	// OpIAM (iam.go) sends an IAM record.
)

// Entry is one unit of outbound work for one target.
type Entry struct {
	Op        string `msgpack:"op"`
	Bucket    string `msgpack:"b"`
	Key       string `msgpack:"k,omitempty"`
	VersionID string `msgpack:"v,omitempty"`
	Size      int64  `msgpack:"sz,omitempty"`
	// At is the change's HLC time (the deletion time of a bucket delete).
	At int64 `msgpack:"at,omitempty"`
	// Queued is when the work was journalled (Unix nanoseconds).
	Queued int64 `msgpack:"q"`
	// Purge is what an OpPurge asks the peer to remove.
	Purge objects.PurgeKind `msgpack:"pk,omitempty"`
}

// MRFEntry is a failed send waiting for its retry, persisted as
// MessagePack: bucket, key, version ID, target, retry count and failure
// time, with the operation and the time of the next attempt.
type MRFEntry struct {
	Entry      `msgpack:",inline"`
	Target     string `msgpack:"t"`
	RetryCount int    `msgpack:"rc"`
	FailedAt   int64  `msgpack:"fa"`
	Due        int64  `msgpack:"due"`
	Err        string `msgpack:"err,omitempty"`
	Seq        uint64 `msgpack:"seq"`
}

// Resync job states.
const (
	ResyncRunning   = "running"
	ResyncCompleted = "completed"
	ResyncCanceled  = "canceled"
	ResyncFailed    = "failed"
)

// ResyncJob re-sends everything this site holds to one target. Its cursor
// is persisted with each batch of work it queues, so it resumes after a
// restart where it stopped.
type ResyncJob struct {
	ID        string    `msgpack:"id" json:"id"`
	Target    string    `msgpack:"t" json:"target"`
	State     string    `msgpack:"s" json:"state"`
	Started   time.Time `msgpack:"st" json:"started"`
	Finished  time.Time `msgpack:"f,omitempty" json:"finished,omitzero"`
	Bucket    string    `msgpack:"b,omitempty" json:"bucket,omitempty"`
	AfterKey  string    `msgpack:"ak,omitempty" json:"-"`
	AfterVer  string    `msgpack:"av,omitempty" json:"-"`
	Buckets   int       `msgpack:"nb" json:"buckets"`
	Queued    int64     `msgpack:"nq" json:"queued"`
	Bytes     int64     `msgpack:"by" json:"bytes"`
	LastError string    `msgpack:"e,omitempty" json:"lastError,omitempty"`
}

func encode(v any) []byte {
	if en, ok := v.(Entry); ok {
		return appendEntry(make([]byte, 0, 64+len(en.Bucket)+len(en.Key)+len(en.VersionID)), &en)
	}
	b, err := msgpack.Marshal(v)
	if err != nil {
		panic(err) // only our own record types are encoded; they always marshal
	}
	return b
}

func decode(b []byte, v any) error {
	if en, ok := v.(*Entry); ok {
		return decodeEntry(b, en)
	}
	return msgpack.Unmarshal(b, v)
}
