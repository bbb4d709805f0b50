package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/twinlake/twinlake/internal/catalog"
	"github.com/twinlake/twinlake/internal/iam/policy"
)

// Credential vending: a client that sends X-Iceberg-Access-Delegation:
// vended-credentials on loadTable or createTable, or calls loadCredentials,
// gets temporary S3 credentials scoped to the table's location. They may
// read (and, when the caller may commit the table, write) objects under the
// location and list its keys, nothing else.

// headerAccessDelegation is the spec's header naming the delegation modes a
// client accepts, comma-separated.
const headerAccessDelegation = "X-Iceberg-Access-Delegation"

// VendDuration is how long vended credentials last.
const VendDuration = time.Hour

// CredentialVendor is an optional capability of an Authenticator: issuing
// temporary S3 credentials whose rights are exactly scope (an IAM policy
// document), on behalf of accessKey. internal/app implements it over STS.
type CredentialVendor interface {
	VendCredentials(accessKey string, d time.Duration, scope []byte) (VendedCredential, error)
}

// VendedCredential is a temporary S3 credential.
type VendedCredential struct {
	AccessKey, SecretKey, SessionToken string
	Expiration                         time.Time
}

// wantsVending reports whether a request asks for vended credentials.
func wantsVending(r *http.Request) bool { return wantsDelegation(r, "vended-credentials") }

// wantsRemoteSigning reports whether a request asks for remote signing.
func wantsRemoteSigning(r *http.Request) bool { return wantsDelegation(r, "remote-signing") }

func wantsDelegation(r *http.Request, mode string) bool {
	for _, v := range r.Header.Values(headerAccessDelegation) {
		for m := range strings.SplitSeq(v, ",") {
			if strings.TrimSpace(m) == mode {
				return true
			}
		}
	}
	return false
}

// vend issues credentials for the caller scoped to the table t: read-only
// unless the caller may perform the table's commit action. Their prefixes
// are the table's location and its write.data.path and write.metadata.path;
// a registered table whose snapshots' manifest lists lie under another
// table's directory may also read that directory (read-only).
func (s *Server) vend(r *http.Request, c *call, t *catalog.Table) ([]storageCredential, error) {
	v, ok := s.cfg.Auth.(CredentialVendor)
	if !ok {
		return nil, fmt.Errorf("%w: credential vending is not available", errUnsupported)
	}
	own, foreign := vendPrefixes(t)
	if len(own) == 0 {
		return nil, fmt.Errorf("%w: table location %q cannot be vended", errBadRequest, t.Location)
	}
	write := s.mayWriteTable(r, c)
	scope, err := vendScope(own, foreign, write)
	if err != nil {
		return nil, err
	}
	cred, err := v.VendCredentials(c.key, VendDuration, scope)
	if err != nil {
		return nil, fmt.Errorf("%w: vend credentials: %v", ErrForbidden, err)
	}
	cfg := map[string]string{
		"s3.access-key-id":               cred.AccessKey,
		"s3.secret-access-key":           cred.SecretKey,
		"s3.session-token":               cred.SessionToken,
		"s3.session-token-expires-at-ms": strconv.FormatInt(cred.Expiration.UnixMilli(), 10),
		"client.region":                  s.cfg.Region,
	}
	var out []storageCredential
	for _, p := range append(own, foreign...) {
		out = append(out, storageCredential{Prefix: "s3://" + p.bucket + "/" + p.key, Config: cfg})
	}
	return out, nil
}

// s3Prefix is a bucket and a key prefix without surrounding slashes.
type s3Prefix struct{ bucket, key string }

func parseS3Prefix(uri string) (s3Prefix, bool) {
	rest, ok := strings.CutPrefix(uri, "s3://")
	if !ok {
		return s3Prefix{}, false
	}
	bucket, key, _ := strings.Cut(rest, "/")
	key = strings.Trim(key, "/")
	return s3Prefix{bucket, key}, bucket != "" && key != ""
}

// vendMetadata is what vending reads of a table's metadata JSON (a loaded
// catalog.Table carries the JSON only).
type vendMetadata struct {
	Properties map[string]string `json:"properties"`
	Snapshots  []struct {
		ManifestList string `json:"manifest-list"`
	} `json:"snapshots"`
}

// vendPrefixes returns the table's own prefixes and the foreign directories
// its manifest lists lie in, each once.
func vendPrefixes(t *catalog.Table) (own, foreign []s3Prefix) {
	covered := func(uri string) bool {
		for _, p := range append(own, foreign...) {
			if strings.HasPrefix(uri, "s3://"+p.bucket+"/"+p.key+"/") {
				return true
			}
		}
		return false
	}
	var md vendMetadata
	_ = json.Unmarshal(t.MetadataJSON, &md) // the catalog stored it valid
	for _, c := range []string{t.Location, md.Properties["write.data.path"], md.Properties["write.metadata.path"]} {
		if p, ok := parseS3Prefix(c); ok && !covered(c+"/") {
			own = append(own, p)
		}
	}
	for _, snap := range md.Snapshots {
		dir, _, found := strings.Cut(snap.ManifestList, "/metadata/")
		if p, ok := parseS3Prefix(dir); found && ok && !covered(snap.ManifestList) {
			foreign = append(foreign, p)
		}
	}
	return own, foreign
}

// mayWriteTable reports whether the caller may commit the called table.
func (s *Server) mayWriteTable(r *http.Request, c *call) bool {
	az, ok := s.cfg.Auth.(Authorizer)
	if !ok {
		return true
	}
	return az.Authorize(c.key, nil, s.policyRequest(r, c, routeActions["tables.CommitTable"]))
}

// vendScope is the policy of vended credentials: read and list own and
// foreign, and write own when write is set.
func vendScope(own, foreign []s3Prefix, write bool) ([]byte, error) {
	var stmts []any
	allow := func(actions []string, ps []s3Prefix) {
		var res []string
		for _, p := range ps {
			res = append(res, "arn:aws:s3:::"+p.bucket+"/"+p.key+"/*")
		}
		if len(res) > 0 {
			stmts = append(stmts, map[string]any{"Effect": "Allow", "Action": actions, "Resource": res})
		}
	}
	all := append(append([]s3Prefix{}, own...), foreign...)
	allow([]string{"s3:GetObject"}, all)
	if write {
		allow([]string{"s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"}, own)
	}
	for _, p := range all {
		stmts = append(stmts, map[string]any{"Effect": "Allow", "Action": []string{"s3:ListBucket"},
			"Resource":  []string{"arn:aws:s3:::" + p.bucket},
			"Condition": map[string]any{"StringLike": map[string]any{"s3:prefix": []string{p.key, p.key + "/*"}}}})
	}
	data, err := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": stmts})
	if err != nil {
		return nil, err
	}
	if _, err := policy.Parse(data); err != nil {
		return nil, err
	}
	return data, nil
}

// withVended adds vended credentials to a table's load result when the
// request asks for them, with the table's loadCredentials path (relative
// to the catalog's base URI) as client.refresh-credentials-endpoint, where
// Iceberg's S3 file IO asks for new ones before these expire: also after
// a 304 Not Modified, which has no body to carry credentials in.
func (s *Server) withVended(r *http.Request, c *call, t *catalog.Table, body loadResponse) (loadResponse, error) {
	if !wantsVending(r) {
		if wantsRemoteSigning(r) && t.MetadataLocation != "" {
			return s.withRemoteSigning(c, t, body), nil
		}
		return body, nil
	}
	scs, err := s.vend(r, c, t)
	if err != nil {
		return body, err
	}
	if body.Config == nil {
		body.Config = map[string]string{}
	}
	for k, v := range scs[0].Config {
		body.Config[k] = v
	}
	if t.Ident.Name != "" && t.MetadataLocation != "" { // a staged table has no credentials endpoint yet
		body.Config["client.refresh-credentials-endpoint"] = tablePath(c, t) + "/credentials"
	}
	body.StorageCredentials = scs
	c.msg += " vended"
	c.vended = true
	return body, nil
}

// tablePath is the table's path relative to the catalog's base URI.
func tablePath(c *call, t *catalog.Table) string {
	return "v1/" + url.PathEscape(c.params["prefix"]) + "/namespaces/" +
		url.PathEscape(strings.Join(t.Ident.Namespace, "\x1f")) + "/tables/" + url.PathEscape(t.Ident.Name)
}

// withRemoteSigning answers a load that asks for remote signing (and not
// for credentials): the client signs its S3 requests through the table's
// sign endpoint (sign.go), named relative to the catalog's base URI under
// the property names Iceberg's clients read (the spec's signer.endpoint,
// deprecated but still what they use).
func (s *Server) withRemoteSigning(c *call, t *catalog.Table, body loadResponse) loadResponse {
	if body.Config == nil {
		body.Config = map[string]string{}
	}
	ep := tablePath(c, t) + "/sign"
	body.Config["s3.remote-signing-enabled"] = "true"
	body.Config["signer.endpoint"] = ep
	body.Config["s3.signer.endpoint"] = ep
	body.Config["client.region"] = s.cfg.Region
	c.msg += " remote-signing"
	return body
}

// replayVended adds fresh vended credentials to the replayed answer of a
// createTable when the replay asks for them: for the table at the recorded
// metadata file's location, named as the request names it.
func (s *Server) replayVended(w http.ResponseWriter, r *http.Request, c *call, body loadResponse) (loadResponse, error) {
	if !wantsVending(r) && !wantsRemoteSigning(r) {
		return body, nil
	}
	var req struct {
		Name string `json:"name"`
	}
	var md struct {
		Location string `json:"location"`
	}
	if err := s.readJSON(w, r, &req); err != nil {
		return body, err
	}
	if err := json.Unmarshal(body.Metadata, &md); err != nil {
		return body, fmt.Errorf("replayed metadata: %w", err)
	}
	t := &catalog.Table{Ident: catalog.Ident{Namespace: namespaceParam(c), Name: req.Name}, Location: md.Location,
		MetadataLocation: body.MetadataLocation, MetadataJSON: body.Metadata}
	return s.withVended(r, c, t, body)
}

// loadCredentials serves the spec's loadCredentials.
func (s *Server) loadCredentials(w http.ResponseWriter, r *http.Request, c *call) error {
	t, err := s.cat.LoadTable(r.Context(), c.params["prefix"], tableIdent(c, "table"))
	if err != nil {
		return err
	}
	scs, err := s.vend(r, c, t)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"storage-credentials": scs})
	return nil
}
