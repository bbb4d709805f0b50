package iam

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twinlake/twinlake/internal/hlc"
	"github.com/twinlake/twinlake/internal/iam/policy"
	"github.com/twinlake/twinlake/internal/meta"
)

// Config holds the optional collaborators of a Store.
type Config struct {
	// Clock stamps records' Updated time. Default: a new wall clock.
	Clock *hlc.Clock
	// SiteID is recorded in each record to break last-writer-wins ties.
	SiteID string
	// Now reads the time for expiry checks (access keys, STS sessions).
	// Default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
	// PreviousRootSecrets are root secrets the site may have last run
	// with (the operator's TWINLAKE_ROOT_PASSWORD_PREVIOUS): when the root
	// secret changed, the one that opens the stored data key lets Open
	// re-seal every secret under the new one (datakey.go). Never logged.
	PreviousRootSecrets []string
	// StoredRootSecret is the generated root secret kept in the data
	// directory when the root now comes from the environment: tried like
	// a previous one, silently.
	StoredRootSecret string
	// KMSKey, when set (32 bytes), also wraps the data key, so that a
	// root password change needs no previous root secret.
	KMSKey []byte
}

// Store holds the site's identities. It is safe for concurrent use: reads
// load an immutable snapshot, writes are serialised, committed durably and
// then publish a new snapshot.
type Store struct {
	db    meta.Store
	root  Credential
	seal  sealer
	cfg   Config
	log   *slog.Logger
	mu    sync.Mutex // serialises writes
	snap  atomic.Pointer[snapshot]
	svcMu sync.Mutex
	svc   Credential
	repl  Replicator // guarded by mu
	// tokens seals STS session tokens; sessions memoises opened ones.
	tokens   sealer
	sessions sessionCache
}

// Identity is who signed a request, with everything authorization needs,
// precomputed when the snapshot was built.
type Identity struct {
	AccessKey string
	// Username is the user the key belongs to (the access key itself for a
	// user; the parent for an access key; the root name for root).
	Username string
	Root     bool
	Service  bool
	// Policies are the user's and its enabled groups' policies, compiled.
	Policies []*policy.Policy
	// Session narrows Policies for an access key with a session policy.
	Session *policy.Policy
	// Inline narrows further for an STS session with an inline policy.
	Inline *policy.Policy
	// Parent is, for an STS session's temporary key, the access key that
	// assumed the role; "" for a long-term credential.
	Parent string
	// Expiry is when the key stops working; zero means never.
	Expiry time.Time
	secret string
}

// NewStore returns an in-memory store whose only identity is root (tests).
func NewStore(root Credential) *Store {
	s, err := Open(meta.NewMem(), root, Config{})
	if err != nil {
		panic(err)
	}
	return s
}

// Open loads the identities stored in db. It first opens the data key the
// secrets are sealed under (datakey.go): when the root secret changed and
// no previous root secret or KMS key opens it, Open fails with
// ErrRootChanged and changes nothing. A record whose secret does not
// decrypt all the same (damaged) is logged and left out, so its key is
// refused, rather than failing the start.
func Open(db meta.Store, root Credential, cfg Config) (*Store, error) {
	if cfg.Clock == nil {
		cfg.Clock = hlc.New(nil)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if n := len(cfg.KMSKey); n != 0 && n != 32 {
		return nil, fmt.Errorf("iam: a KMS key of %d bytes, want 32", n)
	}
	tk, err := newSealerFor(root.SecretKey, tokenInfo)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, root: root, tokens: tk, cfg: cfg, log: cfg.Logger.With("component", "iam")}
	if err := s.unlock(); err != nil {
		return nil, err
	}
	if err := s.reload(); err != nil {
		return nil, err
	}
	return s, nil
}

// SecretKey implements sigv4.Credentials: it finds root, the service
// credential, enabled users and enabled, unexpired access keys of enabled
// users. Anything else is unknown, which SigV4 answers InvalidAccessKeyId.
// An STS temporary key is not among them: its secret comes only with its
// session token (SessionSecretKey).
func (s *Store) SecretKey(accessKey string) (string, bool) {
	id, ok := s.snap.Load().creds[accessKey]
	if !ok || !id.Expiry.IsZero() && !s.cfg.Now().Before(id.Expiry) {
		return "", false
	}
	return id.secret, true
}

// Identity returns the usable identity of accessKey, as SecretKey decides,
// or of an STS temporary key whose session token a request was verified
// with (SessionSecretKey): its parent must still be usable.
func (s *Store) Identity(accessKey string) (*Identity, bool) {
	id, ok := s.snap.Load().creds[accessKey]
	if !ok {
		id = s.sessionIdentity(accessKey)
		ok = id != nil
	}
	if !ok || !id.Expiry.IsZero() && !s.cfg.Now().Before(id.Expiry) {
		return nil, false
	}
	return id, true
}

// SetService installs (or, with an empty access key, removes) the
// site-replication service credential, replacing any earlier one. It may
// call the peer API and replicate objects, but not the admin API.
func (s *Store) SetService(c Credential) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.svcMu.Lock()
	s.svc = c
	s.svcMu.Unlock()
	if err := s.reload(); err != nil {
		s.log.Error("reload after service credential change", "err", err)
	}
}

// IsService reports whether accessKey is the site-replication service
// credential, which may call the peer API only.
func (s *Store) IsService(accessKey string) bool {
	id, ok := s.snap.Load().creds[accessKey]
	return ok && id.Service
}

// IsAdmin reports whether accessKey is root or may call every admin API
// (a user with consoleAdmin, say).
func (s *Store) IsAdmin(accessKey string) bool {
	id, ok := s.Identity(accessKey)
	if !ok {
		return false
	}
	return id.Root || id.Allowed(&policy.Request{Action: "admin:*", Resource: "arn:aws:s3:::*"})
}

// Allowed evaluates r against the identity's own policies (no bucket
// policy); root is always allowed, the service credential never.
func (id *Identity) Allowed(r *policy.Request) bool {
	if id.Root {
		return true
	}
	if id.Service {
		return false
	}
	if r.Username == "" {
		r.Username = id.Username
	}
	return policy.Authorize(policy.Sets{Identity: id.Policies, Session: id.Session, Inline: id.Inline}, r)
}

// Root returns the root credential.
func (s *Store) Root() Credential { return s.root }

// snapshot is an immutable view of every record, with the derived lookup
// tables.
type snapshot struct {
	records  map[string]*Record // by storage key, tombstones included
	policies map[string]*policy.Policy
	creds    map[string]*Identity
	memberOf map[string][]string // user -> the live groups naming it, sorted
}

func (s *Store) load() *snapshot { return s.snap.Load() }

// reload rebuilds the snapshot from the store. Callers hold s.mu (or are
// Open).
func (s *Store) reload() error {
	recs := map[string]*Record{}
	prefix := []byte(keyPrefix)
	err := meta.Scan(s.db, prefix, meta.PrefixEnd(prefix), func(k, v []byte) (bool, error) {
		r, err := decodeRecord(k, v)
		if err != nil {
			s.log.Error("skipping unreadable IAM record", "key", string(k), "err", err)
			return true, nil
		}
		recs[string(k)] = r
		return true, nil
	})
	if err != nil {
		return err
	}
	s.svcMu.Lock()
	svc := s.svc
	s.svcMu.Unlock()
	s.snap.Store(s.build(recs, svc))
	return nil
}

// build derives the policy and credential tables from the records.
func (s *Store) build(recs map[string]*Record, svc Credential) *snapshot {
	sn := &snapshot{records: recs, policies: map[string]*policy.Policy{}, creds: map[string]*Identity{}, memberOf: memberships(recs)}
	for n, p := range policy.Builtin {
		sn.policies[n] = p
	}
	for _, r := range recs {
		if r.Kind == KindPolicy && !r.Deleted {
			p, err := policy.Parse(r.Policy.Document)
			if err != nil {
				s.log.Error("skipping unparsable stored policy", "policy", r.Name, "err", err)
				continue
			}
			sn.policies[r.Name] = p
		}
	}
	root := &Identity{AccessKey: s.root.AccessKey, Username: s.root.AccessKey, Root: true, secret: s.root.SecretKey}
	for _, r := range recs {
		if r.Kind != KindUser || r.Deleted || r.User.Disabled {
			continue
		}
		secret, err := s.seal.open(r.User.SealedSecret, recordKey(KindUser, r.Name))
		if err != nil {
			s.log.Error("user secret does not decrypt; the user is refused", "user", r.Name, "err", err)
			continue
		}
		sn.creds[r.Name] = &Identity{AccessKey: r.Name, Username: r.Name, Policies: sn.userPolicies(r.Name), secret: secret}
	}
	for _, r := range recs {
		if r.Kind != KindAccessKey || r.Deleted || r.AccessKey.Disabled {
			continue
		}
		if id := sn.accessKeyIdentity(s, r, root); id != nil {
			sn.creds[r.Name] = id
		}
	}
	sn.creds[s.root.AccessKey] = root
	if svc.AccessKey != "" && svc.AccessKey != s.root.AccessKey {
		sn.creds[svc.AccessKey] = &Identity{AccessKey: svc.AccessKey, Username: svc.AccessKey, Service: true, secret: svc.SecretKey}
	}
	return sn
}

// accessKeyIdentity builds the identity of an enabled access key whose
// parent is enabled, or returns nil.
func (sn *snapshot) accessKeyIdentity(s *Store, r *Record, root *Identity) *Identity {
	ak := r.AccessKey
	secret, err := s.seal.open(ak.SealedSecret, recordKey(KindAccessKey, r.Name))
	if err != nil {
		s.log.Error("access key secret does not decrypt; the key is refused", "accessKey", r.Name, "err", err)
		return nil
	}
	id := &Identity{AccessKey: r.Name, Username: ak.Parent, Expiry: ak.Expiry, secret: secret}
	if ak.Parent == root.AccessKey {
		id.Policies = []*policy.Policy{allowAll}
	} else {
		parent, ok := sn.creds[ak.Parent]
		if !ok || parent.Root || parent.Service {
			return nil // parent missing or disabled
		}
		id.Policies = parent.Policies
	}
	if len(ak.SessionPolicy) > 0 {
		p, err := policy.Parse(ak.SessionPolicy)
		if err != nil {
			s.log.Error("access key session policy does not parse; the key is refused", "accessKey", r.Name, "err", err)
			return nil
		}
		id.Session = p
	}
	return id
}

// allowAll stands for root's rights in an access key owned by root, so that
// its session policy (if any) can narrow them.
var allowAll = policy.MustParse(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`)

// userPolicies returns the compiled policies of a user and its enabled
// groups.
func (sn *snapshot) userPolicies(user string) []*policy.Policy {
	var out []*policy.Policy
	add := func(names []string) {
		for _, n := range names {
			if p, ok := sn.policies[n]; ok {
				out = append(out, p)
			}
		}
	}
	add(sn.mapping(KindUserMap, user))
	for _, g := range sn.groupsOf(user) {
		if r := sn.live(KindGroup, g); r != nil && !r.Group.Disabled {
			add(sn.mapping(KindGroupMap, g))
		}
	}
	return out
}

// live returns the record of kind/name unless absent or a tombstone.
func (sn *snapshot) live(kind, name string) *Record {
	r := sn.records[recordKey(kind, name)]
	if r == nil || r.Deleted {
		return nil
	}
	return r
}

func (sn *snapshot) mapping(kind, name string) []string {
	if r := sn.live(kind, name); r != nil {
		return r.Mapping.Policies
	}
	return nil
}

// groupsOf returns the names of the groups user is a member of, sorted.
// The slice is the snapshot's: callers must not change it.
func (sn *snapshot) groupsOf(user string) []string { return sn.memberOf[user] }

// memberships maps each user named by a live group to those groups,
// sorted: read once per snapshot, where looking through every record for
// each user made a rebuild cost users times records.
func memberships(recs map[string]*Record) map[string][]string {
	out := map[string][]string{}
	for _, r := range recs {
		if r.Kind != KindGroup || r.Deleted {
			continue
		}
		for _, m := range slices.Compact(slices.Sorted(slices.Values(r.Group.Members))) {
			out[m] = append(out[m], r.Name)
		}
	}
	for _, gs := range out {
		slices.Sort(gs)
	}
	return out
}

// write stamps and commits records atomically and publishes the new
// snapshot. Callers hold s.mu.
func (s *Store) write(ctx context.Context, recs ...*Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b := s.db.NewBatch()
	for _, r := range recs {
		r.Format, r.Updated, r.Site = recordFmtV1, s.cfg.Clock.Now(), s.cfg.SiteID
		if r.Deleted {
			r.User, r.Group, r.Policy, r.Mapping, r.AccessKey = nil, nil, nil, nil, nil
		}
		data, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b.Set([]byte(recordKey(r.Kind, r.Name)), data)
		if s.repl != nil {
			s.repl.IAM(b, r.Kind, r.Name, r.Updated)
		}
	}
	if err := b.Commit(true); err != nil {
		return fmt.Errorf("iam: commit: %w", err)
	}
	err := s.reload()
	if s.repl != nil {
		s.repl.Committed()
	}
	return err
}

// tombstone returns the deletion record of kind/name.
func tombstone(kind, name string) *Record { return &Record{Kind: kind, Name: name, Deleted: true} }

// nameTaken reports whether name is root's, the service credential's, a
// live user's or a live access key's.
func (s *Store) nameTaken(sn *snapshot, name string) error {
	if name == s.root.AccessKey || sn.creds[name] != nil && sn.creds[name].Service {
		return fmt.Errorf("%w: %q is reserved", ErrInvalidName, name)
	}
	if sn.live(KindUser, name) != nil {
		return fmt.Errorf("%w: %q", ErrUserExists, name)
	}
	if sn.live(KindAccessKey, name) != nil {
		return fmt.Errorf("%w: %q", ErrAccessKeyExists, name)
	}
	return nil
}

// Authorize decides a request (s3api.Authorizer): root always; the service
// credential never; an anonymous request (accessKey "") only by the bucket
// policy; a user or access key by its policies, session policy and the
// bucket policy together (policy.Authorize). Unknown, disabled and expired
// keys are refused.
func (s *Store) Authorize(accessKey string, bucket *policy.Policy, r *policy.Request) bool {
	if accessKey == "" || r.Anonymous {
		r.Anonymous = true
		return bucket != nil && policy.Authorize(policy.Sets{Bucket: bucket}, r)
	}
	id, ok := s.Identity(accessKey)
	switch {
	case !ok || id.Service:
		return false
	case id.Root:
		return true
	}
	r.Username = id.Username
	return policy.Authorize(policy.Sets{Identity: id.Policies, Session: id.Session, Inline: id.Inline, Bucket: bucket}, r)
}
