package peerwire

import (
	"encoding/json"
	"time"

	"github.com/twinlake/twinlake/internal/iam"
)

// IAMRecord is the body of PUT iam (MessagePack, added without a version
// bump: a peer that predates it answers 404 NoSuchCall, which the sender
// reads as "takes no IAM records": the records wait for its upgrade
// without spending retries, replication/iamgate.go). It is one IAM record with its
// secret in the clear (Secret): the call is SigV4-signed with the service
// credential over TLS in production, and the receiver seals the secret
// again with its own key. Never log this body.
type IAMRecord struct {
	Kind    string `msgpack:"k"`
	Name    string `msgpack:"n"`
	Updated int64  `msgpack:"u"` // HLC, Unix nanoseconds
	Site    string `msgpack:"s,omitempty"`
	Deleted bool   `msgpack:"d,omitempty"`
	Secret  string `msgpack:"sk,omitempty"`

	Disabled      bool      `msgpack:"off,omitempty"`
	Created       time.Time `msgpack:"c,omitempty"`
	Members       []string  `msgpack:"m,omitempty"`   // group
	Document      []byte    `msgpack:"doc,omitempty"` // policy
	Policies      []string  `msgpack:"p,omitempty"`   // user or group mapping
	Parent        string    `msgpack:"par,omitempty"` // access key
	SessionPolicy []byte    `msgpack:"sp,omitempty"`
	Expiry        time.Time `msgpack:"exp,omitempty"`
	KeyName       string    `msgpack:"kn,omitempty"`
	Description   string    `msgpack:"desc,omitempty"`
}

// FromIAM returns the wire form of a record to send.
func FromIAM(t iam.Transfer) IAMRecord {
	w := IAMRecord{Kind: t.Kind, Name: t.Name, Updated: t.Updated, Site: t.Site, Deleted: t.Deleted, Secret: t.Secret}
	switch {
	case t.User != nil:
		w.Disabled, w.Created = t.User.Disabled, t.User.Created
	case t.Group != nil:
		w.Disabled, w.Created, w.Members = t.Group.Disabled, t.Group.Created, t.Group.Members
	case t.Policy != nil:
		w.Document, w.Created = t.Policy.Document, t.Policy.Created
	case t.Mapping != nil:
		w.Policies = t.Mapping.Policies
	case t.AccessKey != nil:
		ak := t.AccessKey
		w.Parent, w.SessionPolicy, w.Expiry, w.KeyName, w.Description = ak.Parent, ak.SessionPolicy, ak.Expiry, ak.Name, ak.Description
		w.Disabled, w.Created = ak.Disabled, ak.Created
	}
	return w
}

// ToIAM returns the record a peer sent; the payload is chosen by Kind
// (iam.Store.Apply checks the rest).
func (w IAMRecord) ToIAM() iam.Transfer {
	t := iam.Transfer{Record: iam.Record{Kind: w.Kind, Name: w.Name, Updated: w.Updated, Site: w.Site, Deleted: w.Deleted},
		Secret: w.Secret}
	if w.Deleted {
		return t
	}
	switch w.Kind {
	case iam.KindUser:
		t.User = &iam.UserRecord{Disabled: w.Disabled, Created: w.Created}
	case iam.KindGroup:
		t.Group = &iam.GroupRecord{Members: w.Members, Disabled: w.Disabled, Created: w.Created}
	case iam.KindPolicy:
		t.Policy = &iam.PolicyRecord{Document: json.RawMessage(w.Document), Created: w.Created}
	case iam.KindUserMap, iam.KindGroupMap:
		t.Mapping = &iam.MappingRecord{Policies: w.Policies}
	case iam.KindAccessKey:
		t.AccessKey = &iam.AccessKeyRecord{Parent: w.Parent, SessionPolicy: json.RawMessage(w.SessionPolicy), Expiry: w.Expiry,
			Name: w.KeyName, Description: w.Description, Disabled: w.Disabled, Created: w.Created}
	}
	return t
}
