package iam

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Records are stored under "iam/<kind>/<name>" in the site's metadata store,
// one per item, so that each can later replicate on its own with
// last-writer-wins on Updated (a hybrid logical timestamp; ties broken by
// Site) and deletions kept as tombstones (Deleted set, payload cleared) so a
// late, older write never resurrects an item.
const (
	keyPrefix   = "iam/"
	recordFmtV1 = 1
)

// Kinds of record.
const (
	KindUser      = "user"
	KindGroup     = "group"
	KindPolicy    = "policy"
	KindUserMap   = "usermap"  // policies attached to a user
	KindGroupMap  = "groupmap" // policies attached to a group
	KindAccessKey = "accesskey"
)

// Record is the stored form of one IAM item. Exactly one payload field is
// set unless Deleted.
type Record struct {
	Format  int    `json:"format"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Updated int64  `json:"updated"` // HLC, Unix nanoseconds
	Site    string `json:"site,omitempty"`
	Deleted bool   `json:"deleted,omitempty"`

	User      *UserRecord      `json:"user,omitempty"`
	Group     *GroupRecord     `json:"group,omitempty"`
	Policy    *PolicyRecord    `json:"policy,omitempty"`
	Mapping   *MappingRecord   `json:"mapping,omitempty"`
	AccessKey *AccessKeyRecord `json:"accessKey,omitempty"`
}

// UserRecord is a user: its name is its access key.
type UserRecord struct {
	SealedSecret []byte    `json:"sealedSecret"`
	Disabled     bool      `json:"disabled,omitempty"`
	Created      time.Time `json:"created"`
}

// GroupRecord is a group and its members (user names).
type GroupRecord struct {
	Members  []string  `json:"members"`
	Disabled bool      `json:"disabled,omitempty"`
	Created  time.Time `json:"created"`
}

// PolicyRecord is a named policy document.
type PolicyRecord struct {
	Document json.RawMessage `json:"document"`
	Created  time.Time       `json:"created"`
}

// MappingRecord lists the policies attached to one user or group.
type MappingRecord struct {
	Policies []string `json:"policies"`
}

// AccessKeyRecord is an access key owned by a user (or by root), optionally
// narrowed by a session policy and optionally expiring.
type AccessKeyRecord struct {
	Parent        string          `json:"parent"`
	SealedSecret  []byte          `json:"sealedSecret"`
	SessionPolicy json.RawMessage `json:"sessionPolicy,omitempty"`
	Expiry        time.Time       `json:"expiry,omitzero"`
	Name          string          `json:"name,omitempty"`
	Description   string          `json:"description,omitempty"`
	Disabled      bool            `json:"disabled,omitempty"`
	Created       time.Time       `json:"created"`
}

func recordKey(kind, name string) string { return keyPrefix + kind + "/" + name }

// Newer reports whether r wins over old under last-writer-wins: the later
// Updated, then the greater Site.
func (r *Record) Newer(old *Record) bool {
	if r.Updated != old.Updated {
		return r.Updated > old.Updated
	}
	return r.Site > old.Site
}

func decodeRecord(key, value []byte) (*Record, error) {
	var r Record
	if err := json.Unmarshal(value, &r); err != nil {
		return nil, fmt.Errorf("iam: record %s: %w", key, err)
	}
	if r.Format != recordFmtV1 {
		return nil, fmt.Errorf("iam: record %s: unknown format %d", key, r.Format)
	}
	if want := recordKey(r.Kind, r.Name); want != string(key) {
		return nil, fmt.Errorf("iam: record %s names %s", key, want)
	}
	return &r, nil
}

// validName checks user, group, policy and access key names: 3 to 128
// characters, printable, without the separators that IAM ARNs and the
// admin CLI's arguments use.
func validName(kind, name string) error {
	if len(name) < 3 || len(name) > 128 {
		return fmt.Errorf("%w: %s name %q must be 3 to 128 characters", ErrInvalidName, kind, name)
	}
	if strings.ContainsAny(name, "/\\,=:*?\"' \t\r\n") {
		return fmt.Errorf("%w: %s name %q holds a reserved character", ErrInvalidName, kind, name)
	}
	for _, c := range name {
		if c < 0x20 || c == 0x7f {
			return fmt.Errorf("%w: %s name %q holds a control character", ErrInvalidName, kind, name)
		}
	}
	return nil
}
