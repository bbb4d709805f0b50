package catalog

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// maxNameBytes bounds one namespace level or table/view name.
const maxNameBytes = 255

// maxNamespaceDepth bounds namespace nesting.
const maxNamespaceDepth = 16

// Ident names a table or view: its namespace levels and its name.
type Ident struct {
	Namespace []string
	Name      string
}

// String renders the identifier as dotted levels, for messages.
func (id Ident) String() string {
	return strings.Join(append(append([]string{}, id.Namespace...), id.Name), ".")
}

// equal reports whether id and o name the same table or view.
func (id Ident) equal(o Ident) bool {
	return id.Name == o.Name && slices.Equal(id.Namespace, o.Namespace)
}

// ValidateName checks one namespace level or table/view name: 1 to 255 bytes
// of UTF-8, no control characters, no '/', and not "." or "..". The rules keep
// names safe as meta key parts (control characters separate them there) and
// as path segments of default locations.
func ValidateName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty name", ErrInvalidIdentifier)
	case len(name) > maxNameBytes:
		return fmt.Errorf("%w: name longer than %d bytes", ErrInvalidIdentifier, maxNameBytes)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: name %q is not UTF-8", ErrInvalidIdentifier, name)
	case name == "." || name == "..":
		return fmt.Errorf("%w: name %q", ErrInvalidIdentifier, name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || r == '/' {
			return fmt.Errorf("%w: name %q holds a control character or '/'", ErrInvalidIdentifier, name)
		}
	}
	return nil
}

// ValidateNamespace checks a namespace: 1 to 16 valid levels.
func ValidateNamespace(levels []string) error {
	if len(levels) == 0 {
		return fmt.Errorf("%w: empty namespace", ErrInvalidIdentifier)
	}
	if len(levels) > maxNamespaceDepth {
		return fmt.Errorf("%w: namespace deeper than %d levels", ErrInvalidIdentifier, maxNamespaceDepth)
	}
	for _, l := range levels {
		if err := ValidateName(l); err != nil {
			return err
		}
	}
	return nil
}

// ValidateIdent checks a table or view identifier.
func ValidateIdent(id Ident) error {
	if err := ValidateNamespace(id.Namespace); err != nil {
		return err
	}
	return ValidateName(id.Name)
}

// Meta key layout under the catalog's prefix "c/" (nothing else uses it):
//
//	c/n/<warehouse>\0<ns>                 namespace record
//	c/t/<warehouse>\0<ns>\0<table>        table entry (small: id, uuid, locations, version)
//	c/v/<warehouse>\0<ns>\0<view>         view entry
//	c/m/<id>                              current metadata JSON of the entry with that id
//	c/l/<warehouse>\0<path>/\0<ns>\0<table> a table's location (path: its object key), empty value
//	c/k/<warehouse>\0<idempotency key>    the recorded answer of a keyed mutation (idempotency.go)
//	c/x/<expiry><warehouse>\0<key>        expiry index of those answers
//	c/format/locations                    the location index was built (location.go)
//
// <ns> is the levels joined with 0x1f; names hold no control characters, so
// 0x00 and 0x1f never occur inside a part and prefix scans are exact.
const (
	pfxNamespace = "c/n/"
	pfxTable     = "c/t/"
	pfxView      = "c/v/"
	pfxMetadata  = "c/m/"
	pfxLocation  = "c/l/"
	levelSep     = "\x1f"
)

func nsPart(levels []string) string { return strings.Join(levels, levelSep) }

func namespaceKey(wh string, levels []string) []byte {
	return []byte(pfxNamespace + wh + "\x00" + nsPart(levels))
}

// namespaceScanPrefix is the prefix of the namespace keys under parent (all
// of the warehouse's when parent is empty).
func namespaceScanPrefix(wh string, parent []string) []byte {
	if len(parent) == 0 {
		return []byte(pfxNamespace + wh + "\x00")
	}
	return []byte(pfxNamespace + wh + "\x00" + nsPart(parent) + levelSep)
}

func entryKey(pfx, wh string, id Ident) []byte {
	return []byte(pfx + wh + "\x00" + nsPart(id.Namespace) + "\x00" + id.Name)
}

func entryScanPrefix(pfx, wh string, levels []string) []byte {
	return []byte(pfx + wh + "\x00" + nsPart(levels) + "\x00")
}

func warehouseScanPrefix(pfx, wh string) []byte { return []byte(pfx + wh + "\x00") }

func metadataKey(id string) []byte { return []byte(pfxMetadata + id) }

// splitEntryKey parses a key made by entryKey(pfx, ...).
func splitEntryKey(pfx string, key []byte) (wh string, id Ident, err error) {
	wh, rest, ok1 := strings.Cut(strings.TrimPrefix(string(key), pfx), "\x00")
	ns, name, ok2 := strings.Cut(rest, "\x00")
	if !ok1 || !ok2 {
		return "", Ident{}, fmt.Errorf("catalog: bad entry key %q", key)
	}
	return wh, Ident{Namespace: strings.Split(ns, levelSep), Name: name}, nil
}
