// Package iam owns twinlake's identities: the root credentials and, later,
// service accounts. It answers SigV4's secret-key lookups and says who is an
// administrator. Lookups are lock-free reads of an immutable snapshot.
package iam

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
)

// Credential is an access key and its secret.
type Credential struct {
	AccessKey string `json:"accessKey"`
	SecretKey string `json:"secretKey"`
}

// Store holds the site's identities. It is safe for concurrent use.
type Store struct {
	root  Credential
	users atomic.Pointer[map[string]string]
}

// NewStore returns a store whose only identity is root.
func NewStore(root Credential) *Store {
	s := &Store{root: root}
	m := map[string]string{root.AccessKey: root.SecretKey}
	s.users.Store(&m)
	return s
}

// SecretKey implements sigv4.Credentials.
func (s *Store) SecretKey(accessKey string) (string, bool) {
	v, ok := (*s.users.Load())[accessKey]
	return v, ok
}

// SetService installs (or, with an empty access key, removes) the
// site-replication service credential, replacing any earlier one. It may
// call the peer API and replicate objects, but not the admin API.
func (s *Store) SetService(c Credential) {
	m := map[string]string{s.root.AccessKey: s.root.SecretKey}
	if c.AccessKey != "" && c.AccessKey != s.root.AccessKey {
		m[c.AccessKey] = c.SecretKey
	}
	s.users.Store(&m)
}

// IsService reports whether accessKey is the site-replication service
// credential, which may call the peer API only.
func (s *Store) IsService(accessKey string) bool {
	if accessKey == s.root.AccessKey {
		return false
	}
	_, ok := (*s.users.Load())[accessKey]
	return ok
}

// IsAdmin reports whether accessKey may use the admin API.
func (s *Store) IsAdmin(accessKey string) bool { return accessKey == s.root.AccessKey }

// Root returns the root credential.
func (s *Store) Root() Credential { return s.root }

// ErrWeakSecret is returned when a configured root password is too short.
var ErrWeakSecret = errors.New("iam: root password must be at least 8 characters")

// RootFile is the name, inside the data directory, of the generated root
// credential file (mode 0600).
const RootFile = "root-credentials.json"

// LoadOrCreateRoot resolves the root credential: the given user and password
// when both are set, else the credential stored in dir, else a new random one
// stored in dir. created reports that a new one was generated, so the caller
// prints it once.
func LoadOrCreateRoot(dir, user, password string) (cred Credential, created bool, err error) {
	if user != "" || password != "" {
		if user == "" || password == "" {
			return cred, false, errors.New("iam: set both TWINLAKE_ROOT_USER and TWINLAKE_ROOT_PASSWORD, or neither")
		}
		if len(password) < 8 {
			return cred, false, ErrWeakSecret
		}
		return Credential{AccessKey: user, SecretKey: password}, false, nil
	}
	p := filepath.Join(dir, RootFile)
	data, err := os.ReadFile(p)
	if err == nil {
		if err := json.Unmarshal(data, &cred); err != nil || cred.AccessKey == "" || cred.SecretKey == "" {
			return cred, false, fmt.Errorf("iam: corrupt %s", p)
		}
		return cred, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return cred, false, err
	}
	cred = Credential{AccessKey: "root-" + randomString(6), SecretKey: randomString(30)}
	data, _ = json.Marshal(cred)
	if err := writeFileSync(p, data); err != nil {
		return cred, false, err
	}
	return cred, true, nil
}

func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// writeFileSync writes a 0600 file durably via a temporary name.
func writeFileSync(p string, data []byte) error {
	tmp := p + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// LoadOrCreateKey returns the secret stored in dir/name, creating a random
// one of n bytes (mode 0600) at first use.
func LoadOrCreateKey(dir, name string, n int) ([]byte, error) {
	p := filepath.Join(dir, name)
	data, err := os.ReadFile(p)
	if err == nil {
		key, derr := base64.StdEncoding.DecodeString(string(data))
		if derr != nil || len(key) != n {
			return nil, fmt.Errorf("iam: corrupt key file %s", p)
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key := make([]byte, n)
	rand.Read(key)
	return key, writeFileSync(p, []byte(base64.StdEncoding.EncodeToString(key)))
}
