package catalog

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twinlake/twinlake/internal/meta"
)

// Namespace is a namespace and its properties.
type Namespace struct {
	Levels     []string
	Properties map[string]string
}

// nsRecord is a namespace's meta record.
type nsRecord struct {
	Props     map[string]string `json:"p,omitempty"`
	UpdatedMS int64             `json:"u"`
}

// PropertiesSummary reports what UpdateNamespace changed.
type PropertiesSummary struct {
	Updated, Removed, Missing []string
}

// Page bounds a listing: PageSize <= 0 means no limit; Token is the
// NextToken of the previous page, or "".
type Page struct {
	Token string
	Size  int
}

// CreateNamespace creates a namespace; its parent must exist.
func (c *Catalog) CreateNamespace(ctx context.Context, wh string, levels []string, props map[string]string) (Namespace, error) {
	if err := ValidateNamespace(levels); err != nil {
		return Namespace{}, err
	}
	if _, err := c.Warehouse(ctx, wh); err != nil {
		return Namespace{}, err
	}
	c.structMu.Lock()
	defer c.structMu.Unlock()
	if _, err := c.getNamespace(wh, levels); err == nil {
		return Namespace{}, fmt.Errorf("%w: %s", ErrNamespaceExists, strings.Join(levels, "."))
	} else if !errors.Is(err, ErrNoSuchNamespace) {
		return Namespace{}, err
	}
	if len(levels) > 1 {
		if _, err := c.getNamespace(wh, levels[:len(levels)-1]); err != nil {
			return Namespace{}, err
		}
	}
	if props == nil {
		props = map[string]string{}
	}
	rec := nsRecord{Props: props, UpdatedMS: c.nowMS()}
	if err := c.saveNamespace(ctx, wh, levels, rec, false); err != nil {
		return Namespace{}, err
	}
	return Namespace{Levels: levels, Properties: props}, nil
}

// saveNamespace writes the identity record, then the meta record (or its
// deletion).
func (c *Catalog) saveNamespace(ctx context.Context, wh string, levels []string, rec nsRecord, deleted bool) error {
	if err := c.putIdentity(ctx, wh, Record{Kind: KindNamespace, Namespace: levels, Properties: rec.Props,
		Deleted: deleted, UpdatedMS: rec.UpdatedMS}); err != nil {
		return err
	}
	b := c.meta.NewBatch()
	if deleted {
		b.Delete(namespaceKey(wh, levels))
	} else {
		data, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		b.Set(namespaceKey(wh, levels), data)
	}
	if err := c.markApplied(ctx, b, wh, "", ""); err != nil {
		return err
	}
	return b.Commit(true)
}

func (c *Catalog) getNamespace(wh string, levels []string) (nsRecord, error) {
	v, err := c.meta.Get(namespaceKey(wh, levels))
	if errors.Is(err, meta.ErrNotFound) {
		return nsRecord{}, fmt.Errorf("%w: %s", ErrNoSuchNamespace, strings.Join(levels, "."))
	}
	if err != nil {
		return nsRecord{}, err
	}
	var rec nsRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return nsRecord{}, fmt.Errorf("catalog: decode namespace %q: %w", levels, err)
	}
	if rec.Props == nil {
		rec.Props = map[string]string{}
	}
	return rec, nil
}

// LoadNamespace returns a namespace and its properties.
func (c *Catalog) LoadNamespace(ctx context.Context, wh string, levels []string) (Namespace, error) {
	if err := ValidateNamespace(levels); err != nil {
		return Namespace{}, err
	}
	if _, err := c.Warehouse(ctx, wh); err != nil {
		return Namespace{}, err
	}
	rec, err := c.getNamespace(wh, levels)
	if err != nil {
		return Namespace{}, err
	}
	return Namespace{Levels: levels, Properties: rec.Props}, nil
}

// ListNamespaces lists the direct children of parent (the top level when
// parent is empty), sorted, one page at a time.
func (c *Catalog) ListNamespaces(ctx context.Context, wh string, parent []string, page Page) (out [][]string, next string, err error) {
	if len(parent) > 0 {
		if _, err := c.LoadNamespace(ctx, wh, parent); err != nil {
			return nil, "", err
		}
	} else if _, err := c.Warehouse(ctx, wh); err != nil {
		return nil, "", err
	}
	prefix := namespaceScanPrefix(wh, parent)
	start, err := pageStart(prefix, page.Token)
	if err != nil {
		return nil, "", err
	}
	var last []byte
	err = meta.Scan(c.meta, start, meta.PrefixEnd(prefix), func(k, _ []byte) (bool, error) {
		rest := string(k[len(prefix):])
		if strings.Contains(rest, levelSep) {
			return true, nil // a grandchild
		}
		if page.Size > 0 && len(out) == page.Size {
			next = encodeToken(prefix, last)
			return false, nil
		}
		out = append(out, append(slices.Clone(parent), rest))
		last = bytes.Clone(k[len(prefix):])
		return true, nil
	})
	return out, next, err
}

// Page tokens are opaque to clients: base64url of the last name a page
// returned and a check of it bound to the listing (the scan prefix). The
// next page starts just after that name, whether or not it still exists, so
// pages stay complete and never repeat a name while others are created or
// dropped. A token that does not check out, or belongs to another listing,
// is ErrInvalidRequest. The check guards against corruption and mix-ups,
// not forgery: a forged token only chooses where a listing starts.
const tokenCheckBytes = 8

// pageStart is where a page's scan begins: just after the token's key.
func pageStart(prefix []byte, token string) ([]byte, error) {
	if token == "" {
		return prefix, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) < tokenCheckBytes {
		return nil, fmt.Errorf("%w: bad page token", ErrInvalidRequest)
	}
	after := raw[:len(raw)-tokenCheckBytes]
	if !bytes.Equal(raw[len(after):], tokenCheck(prefix, after)) {
		return nil, fmt.Errorf("%w: page token is not one this listing returned", ErrInvalidRequest)
	}
	return append(append(bytes.Clone(prefix), after...), 0), nil
}

func encodeToken(prefix, lastSuffix []byte) string {
	return base64.RawURLEncoding.EncodeToString(append(bytes.Clone(lastSuffix), tokenCheck(prefix, lastSuffix)...))
}

func tokenCheck(prefix, last []byte) []byte {
	h := sha256.New()
	h.Write(prefix)
	h.Write([]byte{0})
	h.Write(last)
	return h.Sum(nil)[:tokenCheckBytes]
}

// UpdateNamespace removes and sets namespace properties. A key both removed
// and set is an error; removals of absent keys are reported as Missing.
func (c *Catalog) UpdateNamespace(ctx context.Context, wh string, levels []string, removals []string, updates map[string]string) (PropertiesSummary, error) {
	for _, k := range removals {
		if _, ok := updates[k]; ok {
			return PropertiesSummary{}, fmt.Errorf("%w: property %q is both removed and set", ErrUnprocessable, k)
		}
	}
	if err := ValidateNamespace(levels); err != nil {
		return PropertiesSummary{}, err
	}
	if _, err := c.Warehouse(ctx, wh); err != nil {
		return PropertiesSummary{}, err
	}
	c.structMu.Lock()
	defer c.structMu.Unlock()
	rec, err := c.getNamespace(wh, levels)
	if err != nil {
		return PropertiesSummary{}, err
	}
	sum := PropertiesSummary{Updated: []string{}, Removed: []string{}, Missing: []string{}}
	props := maps.Clone(rec.Props)
	for _, k := range removals {
		if _, ok := props[k]; ok {
			delete(props, k)
			sum.Removed = append(sum.Removed, k)
		} else {
			sum.Missing = append(sum.Missing, k)
		}
	}
	for k, v := range updates {
		props[k] = v
		sum.Updated = append(sum.Updated, k)
	}
	slices.Sort(sum.Updated)
	rec.Props, rec.UpdatedMS = props, c.nowMS()
	if err := c.saveNamespace(ctx, wh, levels, rec, false); err != nil {
		return PropertiesSummary{}, err
	}
	return sum, nil
}

// DropNamespace drops an empty namespace: one without tables, views or
// child namespaces.
func (c *Catalog) DropNamespace(ctx context.Context, wh string, levels []string) error {
	if err := ValidateNamespace(levels); err != nil {
		return err
	}
	if _, err := c.Warehouse(ctx, wh); err != nil {
		return err
	}
	c.structMu.Lock()
	defer c.structMu.Unlock()
	rec, err := c.getNamespace(wh, levels)
	if err != nil {
		return err
	}
	for _, p := range [][]byte{
		namespaceScanPrefix(wh, levels), entryScanPrefix(pfxTable, wh, levels), entryScanPrefix(pfxView, wh, levels),
	} {
		empty, err := c.rangeEmpty(p)
		if err != nil {
			return err
		}
		if !empty {
			return fmt.Errorf("%w: %s", ErrNamespaceNotEmpty, strings.Join(levels, "."))
		}
	}
	rec.UpdatedMS = c.nowMS()
	return c.saveNamespace(ctx, wh, levels, rec, true)
}
