// Package iam owns twinlake's identities: the root credential, the
// site-replication service credential, users, groups, named policies, their
// attachments and access keys, stored durably as versioned records in the
// metadata store with secrets sealed at rest. It answers SigV4's secret-key
// lookups and, with package policy, who may do what. Lookups are lock-free
// reads of an immutable snapshot whose policies are compiled once per change.
package iam

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Credential is an access key and its secret.
type Credential struct {
	AccessKey string `json:"accessKey"`
	SecretKey string `json:"secretKey"`
}

// ErrWeakSecret is returned for a secret key (or the root password) of the
// wrong length; the error it wraps says which and the bounds.
var ErrWeakSecret = errors.New("iam: weak secret")

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
		if len(password) < MinSecretLen {
			return cred, false, fmt.Errorf("%w: TWINLAKE_ROOT_PASSWORD must be at least %d characters", ErrWeakSecret, MinSecretLen)
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
	cred = Credential{AccessKey: "root-" + randomFrom(rootLetters, 8), SecretKey: randomSecret()}
	data, _ = json.Marshal(cred)
	if err := writeFileSync(p, data); err != nil {
		return cred, false, err
	}
	return cred, true, nil
}

// StoredRoot returns the generated root credential stored in dir, if any:
// when the root now comes from the environment, its secret is the one the
// IAM data key may still be wrapped under (Config.StoredRootSecret).
func StoredRoot(dir string) (Credential, bool) {
	var cred Credential
	data, err := os.ReadFile(filepath.Join(dir, RootFile))
	if err != nil || json.Unmarshal(data, &cred) != nil || cred.SecretKey == "" {
		return Credential{}, false
	}
	return cred, true
}

// The letters generated credentials are drawn from: letters and digits
// only, so a secret never starts with '-' and reads as a flag when typed
// on a command line (twinlake alias set ... SECRET).
const (
	keyLetters    = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	secretLetters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	rootLetters   = "abcdefghijklmnopqrstuvwxyz0123456789"
)

// randomFrom returns n letters drawn uniformly from alphabet (at most 256
// letters): random bytes at or above the largest multiple of its length
// are rejected, so no letter is likelier than another.
func randomFrom(alphabet string, n int) string {
	limit := 256 - 256%len(alphabet)
	out := make([]byte, 0, n)
	var buf [64]byte
	for len(out) < n {
		rand.Read(buf[:])
		for _, c := range buf {
			if int(c) < limit && len(out) < n {
				out = append(out, alphabet[int(c)%len(alphabet)])
			}
		}
	}
	return string(out)
}

// randomSecret returns a new secret key: 40 letters and digits, as AWS's
// are long, about 238 bits.
func randomSecret() string { return randomFrom(secretLetters, 40) }

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
