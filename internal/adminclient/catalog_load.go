package adminclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// LoadTableOptions select the representation loadTable answers and make it
// conditional.
type LoadTableOptions struct {
	// Snapshots is "all" (the default) or "refs" (only the snapshots
	// branches and tags point to).
	Snapshots string
	// IfNoneMatch is an ETag of an earlier load: while the table is
	// unchanged the answer is NotModified, without a body.
	IfNoneMatch string
}

// CatalogConditionalLoad is a load answer with its ETag.
type CatalogConditionalLoad struct {
	CatalogLoadResult
	ETag        string
	NotModified bool
}

// LoadTableWith loads a table as opts say.
func (c *CatalogClient) LoadTableWith(ctx context.Context, id CatalogIdent, opts LoadTableOptions) (CatalogConditionalLoad, error) {
	var q url.Values
	if opts.Snapshots != "" {
		q = url.Values{"snapshots": {opts.Snapshots}}
	}
	hdr := http.Header{}
	if opts.IfNoneMatch != "" {
		hdr.Set("If-None-Match", opts.IfNoneMatch)
	}
	path := c.path("namespaces", nsPath(id.Namespace), "tables", url.PathEscape(id.Name))
	resp, err := c.send(ctx, http.MethodGet, path, q, hdr, nil)
	if err != nil {
		return CatalogConditionalLoad{}, err
	}
	defer resp.Body.Close()
	out := CatalogConditionalLoad{ETag: resp.Header.Get("ETag"), NotModified: resp.StatusCode == http.StatusNotModified}
	switch {
	case out.NotModified:
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return out, decodeCatalogError(resp)
	default:
		if err := json.NewDecoder(resp.Body).Decode(&out.CatalogLoadResult); err != nil {
			return out, fmt.Errorf("catalog GET %s: decode answer: %w", path, err)
		}
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return out, nil
}
