package catalog

// Catalog identity records: the durable, replicated description of the
// catalog. Every catalog change writes one (or, for a rename, two) small JSON
// objects into the warehouse bucket under IdentityPrefix; the bucket is
// versioned, so each change is a new object version. A site that receives the
// warehouse by replication rebuilds the catalog from these records and the
// metadata files they name. This file is the contract with that reader: the
// record shapes, the key layout and the parser.
//
// Keys (each namespace level and name url.PathEscape'd):
//
//	.twinlake/catalog/namespaces/<l1>/<l2>/.namespace.json
//	.twinlake/catalog/tables/<l1>/<l2>/<table>.json
//	.twinlake/catalog/views/<l1>/<l2>/<view>.json
//
// A drop writes the record again with Deleted set (a tombstone that keeps the
// UUID and last metadata location); in a warehouse with soft delete the
// tombstone also carries expires_ms, and an undrop writes the live record
// again; a rename writes a tombstone under the old
// name and a record under the new one with the same UUID. Staged tables write
// nothing until their create is committed.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// IdentityPrefix is the reserved key prefix of identity records in a
// warehouse bucket.
const IdentityPrefix = ".twinlake/catalog/"

// ReservedPrefix is the warehouse key prefix the catalog owns; tables may not
// be located under it.
const ReservedPrefix = ".twinlake/"

// Kinds of identity records.
const (
	KindNamespace = "namespace"
	KindTable     = "table"
	KindView      = "view"
)

// namespaceRecordFile is the file name of a namespace record inside the
// directory of its levels.
const namespaceRecordFile = ".namespace.json"

// maxRecordBytes bounds the size of an identity record the parser accepts.
const maxRecordBytes = 1 << 20

// Record is one catalog identity record. Kind selects which fields apply:
// a namespace record carries Properties; a table or view record carries Name,
// UUID, Location, MetadataLocation, Version and, for a member of a
// multi-table transaction, Txn.
type Record struct {
	Kind      string
	Namespace []string
	// Properties of a namespace (namespace records only; never nil after
	// ParseRecord).
	Properties map[string]string
	// Name of the table or view.
	Name string
	// UUID of the table or view, kept across renames and in tombstones.
	UUID string
	// Location is the table's or view's base location (s3://warehouse/...).
	Location string
	// MetadataLocation is the current metadata file (the last one for a
	// tombstone).
	MetadataLocation string
	// Version is the sequence number of MetadataLocation's file name
	// (00003-... is 3).
	Version int64
	// Deleted marks a tombstone: the namespace, table or view was dropped
	// (or renamed away).
	Deleted bool
	// UpdatedMS is when the change was made, in Unix milliseconds.
	UpdatedMS int64
	// ExpiresMS is set on the tombstone of a soft delete (softdelete.go):
	// until then (Unix milliseconds) the dropped table or view keeps its
	// files and can be undropped. Zero on a plain tombstone and on a live
	// record.
	ExpiresMS int64
	// Txn is set for a commit made by a multi-table transaction.
	Txn *TxnInfo
}

// TxnInfo identifies the multi-table transaction a table version belongs to
// and lists every member with the version it reaches, so that a reader can
// hold back a member until all have arrived.
type TxnInfo struct {
	ID      string      `json:"id"`
	Members []TxnMember `json:"members"`
}

// TxnMember is one table of a multi-table transaction.
type TxnMember struct {
	Namespace []string `json:"namespace"`
	Name      string   `json:"name"`
	Version   int64    `json:"version"`
}

// namespaceWire and entryWire are the exact JSON shapes of the two record
// families; field order and names are part of the contract.
type namespaceWire struct {
	Kind       string            `json:"kind"`
	Namespace  []string          `json:"namespace"`
	Properties map[string]string `json:"properties"`
	Deleted    bool              `json:"deleted"`
	UpdatedMS  int64             `json:"updated_ms"`
}

type entryWire struct {
	Kind             string   `json:"kind"`
	Namespace        []string `json:"namespace"`
	Name             string   `json:"name"`
	UUID             string   `json:"uuid"`
	Location         string   `json:"location"`
	MetadataLocation string   `json:"metadata_location"`
	Version          int64    `json:"version"`
	Deleted          bool     `json:"deleted"`
	UpdatedMS        int64    `json:"updated_ms"`
	ExpiresMS        int64    `json:"expires_ms,omitempty"`
	Txn              *TxnInfo `json:"txn,omitempty"`
}

// MarshalJSON encodes the record in the shape of its kind.
func (r Record) MarshalJSON() ([]byte, error) {
	switch r.Kind {
	case KindNamespace:
		props := r.Properties
		if props == nil {
			props = map[string]string{}
		}
		return json.Marshal(namespaceWire{Kind: r.Kind, Namespace: r.Namespace, Properties: props,
			Deleted: r.Deleted, UpdatedMS: r.UpdatedMS})
	case KindTable, KindView:
		return json.Marshal(entryWire{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, UUID: r.UUID,
			Location: r.Location, MetadataLocation: r.MetadataLocation, Version: r.Version,
			Deleted: r.Deleted, UpdatedMS: r.UpdatedMS, ExpiresMS: r.ExpiresMS, Txn: r.Txn})
	}
	return nil, fmt.Errorf("%w: unknown kind %q", ErrInvalidRecord, r.Kind)
}

// UnmarshalJSON decodes a record in the shape MarshalJSON writes, checked
// as ParseRecord checks it.
func (r *Record) UnmarshalJSON(data []byte) error {
	rec, err := ParseRecord(data)
	if err != nil {
		return err
	}
	*r = rec
	return nil
}

// Key returns the object key the record is stored under.
func (r Record) Key() (string, error) {
	switch r.Kind {
	case KindNamespace:
		return NamespaceRecordKey(r.Namespace), nil
	case KindTable:
		return TableRecordKey(r.Namespace, r.Name), nil
	case KindView:
		return ViewRecordKey(r.Namespace, r.Name), nil
	}
	return "", fmt.Errorf("%w: unknown kind %q", ErrInvalidRecord, r.Kind)
}

// ParseRecord decodes and validates an identity record. It rejects unknown
// kinds, invalid identifiers, negative versions, a table or view without a
// UUID, name or metadata location, and transaction members that are invalid
// or do not include the record's own table.
func ParseRecord(data []byte) (Record, error) {
	if len(data) > maxRecordBytes {
		return Record{}, fmt.Errorf("%w: %d bytes", ErrInvalidRecord, len(data))
	}
	var head struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Record{}, fmt.Errorf("%w: %v", ErrInvalidRecord, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	switch head.Kind {
	case KindNamespace:
		var w namespaceWire
		if err := dec.Decode(&w); err != nil {
			return Record{}, fmt.Errorf("%w: %v", ErrInvalidRecord, err)
		}
		if err := ValidateNamespace(w.Namespace); err != nil {
			return Record{}, fmt.Errorf("%w: %w", ErrInvalidRecord, err)
		}
		if w.Properties == nil {
			w.Properties = map[string]string{}
		}
		return Record{Kind: w.Kind, Namespace: w.Namespace, Properties: w.Properties,
			Deleted: w.Deleted, UpdatedMS: w.UpdatedMS}, nil
	case KindTable, KindView:
		var w entryWire
		if err := dec.Decode(&w); err != nil {
			return Record{}, fmt.Errorf("%w: %v", ErrInvalidRecord, err)
		}
		r := Record{Kind: w.Kind, Namespace: w.Namespace, Name: w.Name, UUID: w.UUID, Location: w.Location,
			MetadataLocation: w.MetadataLocation, Version: w.Version, Deleted: w.Deleted,
			UpdatedMS: w.UpdatedMS, ExpiresMS: w.ExpiresMS, Txn: w.Txn}
		return r, r.validateEntry()
	}
	return Record{}, fmt.Errorf("%w: unknown kind %q", ErrInvalidRecord, head.Kind)
}

func (r Record) validateEntry() error {
	if err := ValidateIdent(Ident{Namespace: r.Namespace, Name: r.Name}); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidRecord, err)
	}
	switch {
	case r.UUID == "":
		return fmt.Errorf("%w: missing uuid", ErrInvalidRecord)
	case r.MetadataLocation == "":
		return fmt.Errorf("%w: missing metadata_location", ErrInvalidRecord)
	case r.Version < 0:
		return fmt.Errorf("%w: negative version %d", ErrInvalidRecord, r.Version)
	case r.ExpiresMS < 0 || (r.ExpiresMS > 0 && !r.Deleted):
		return fmt.Errorf("%w: expires_ms on a record that is not a tombstone", ErrInvalidRecord)
	}
	if r.Txn == nil {
		return nil
	}
	if r.Txn.ID == "" || len(r.Txn.Members) == 0 {
		return fmt.Errorf("%w: transaction without id or members", ErrInvalidRecord)
	}
	self := false
	for _, m := range r.Txn.Members {
		if err := ValidateIdent(Ident{Namespace: m.Namespace, Name: m.Name}); err != nil {
			return fmt.Errorf("%w: transaction member: %w", ErrInvalidRecord, err)
		}
		if m.Version < 0 {
			return fmt.Errorf("%w: transaction member with negative version", ErrInvalidRecord)
		}
		if m.Name == r.Name && equalLevels(m.Namespace, r.Namespace) {
			self = m.Version == r.Version
		}
	}
	if !self {
		return fmt.Errorf("%w: transaction members do not include this table at version %d", ErrInvalidRecord, r.Version)
	}
	return nil
}

// NamespaceRecordKey is the key of a namespace's identity record.
func NamespaceRecordKey(namespace []string) string {
	return IdentityPrefix + "namespaces/" + escapeLevels(namespace) + "/" + namespaceRecordFile
}

// TableRecordKey is the key of a table's identity record.
func TableRecordKey(namespace []string, name string) string {
	return IdentityPrefix + "tables/" + escapeLevels(namespace) + "/" + url.PathEscape(name) + ".json"
}

// ViewRecordKey is the key of a view's identity record.
func ViewRecordKey(namespace []string, name string) string {
	return IdentityPrefix + "views/" + escapeLevels(namespace) + "/" + url.PathEscape(name) + ".json"
}

// SoftDeleted reports whether the record is the tombstone of a soft delete:
// the table or view can still be undropped until ExpiresMS.
func (r Record) SoftDeleted() bool { return r.Deleted && r.ExpiresMS > 0 }

// ParseRecordKey is the inverse of the key functions: it returns the kind,
// namespace and (for tables and views) name a record key addresses.
func ParseRecordKey(key string) (kind string, namespace []string, name string, err error) {
	rest, ok := strings.CutPrefix(key, IdentityPrefix)
	if !ok {
		return "", nil, "", fmt.Errorf("%w: key %q is outside %s", ErrInvalidRecord, key, IdentityPrefix)
	}
	dir, rest, _ := strings.Cut(rest, "/")
	parts := strings.Split(rest, "/")
	var leaf string
	switch dir {
	case "namespaces":
		kind, leaf = KindNamespace, namespaceRecordFile
	case "tables":
		kind = KindTable
	case "views":
		kind = KindView
	default:
		return "", nil, "", fmt.Errorf("%w: key %q", ErrInvalidRecord, key)
	}
	last := parts[len(parts)-1]
	if kind == KindNamespace {
		if last != leaf {
			return "", nil, "", fmt.Errorf("%w: key %q", ErrInvalidRecord, key)
		}
	} else {
		base, ok := strings.CutSuffix(last, ".json")
		if !ok {
			return "", nil, "", fmt.Errorf("%w: key %q", ErrInvalidRecord, key)
		}
		if name, err = url.PathUnescape(base); err != nil {
			return "", nil, "", fmt.Errorf("%w: key %q: %v", ErrInvalidRecord, key, err)
		}
	}
	for _, p := range parts[:len(parts)-1] {
		l, err := url.PathUnescape(p)
		if err != nil {
			return "", nil, "", fmt.Errorf("%w: key %q: %v", ErrInvalidRecord, key, err)
		}
		namespace = append(namespace, l)
	}
	if err := ValidateNamespace(namespace); err != nil {
		return "", nil, "", fmt.Errorf("%w: key %q: %w", ErrInvalidRecord, key, err)
	}
	if kind != KindNamespace {
		if err := ValidateName(name); err != nil {
			return "", nil, "", fmt.Errorf("%w: key %q: %w", ErrInvalidRecord, key, err)
		}
	}
	return kind, namespace, name, nil
}

func escapeLevels(levels []string) string {
	esc := make([]string, len(levels))
	for i, l := range levels {
		esc[i] = url.PathEscape(l)
	}
	return strings.Join(esc, "/")
}

func equalLevels(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
