package policy

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Anonymous access levels of `twinlake anonymous`, with MinIO's names.
const (
	AnonymousNone     = "none"
	AnonymousDownload = "download"
	AnonymousUpload   = "upload"
	AnonymousPublic   = "public"
)

// anonSidPrefix marks the bucket policy statements SetAnonymous manages;
// the rest of a bucket policy is left as it is.
const anonSidPrefix = "twinlake-anonymous-"

// cannedStatements returns the Principal "*" statements granting level on
// bucket/prefix: download reads and lists, upload writes (as MinIO's
// "upload": put, multipart and listing uploads), public both.
func cannedStatements(bucket, prefix, level string) []map[string]any {
	bucketARN := "arn:aws:s3:::" + bucket
	objects := bucketARN + "/" + prefix + "*"
	stmt := func(part string, actions []string, resource string, cond map[string]any) map[string]any {
		s := map[string]any{"Sid": anonSidPrefix + part + ":" + prefix, "Effect": "Allow",
			"Principal": map[string]any{"AWS": []string{"*"}}, "Action": actions, "Resource": []string{resource}}
		if cond != nil {
			s["Condition"] = cond
		}
		return s
	}
	var list map[string]any
	if prefix != "" {
		list = map[string]any{"StringLike": map[string]any{"s3:prefix": []string{prefix + "*"}}}
	}
	var out []map[string]any
	if level == AnonymousDownload || level == AnonymousPublic {
		out = append(out,
			stmt("read-bucket", []string{"s3:GetBucketLocation"}, bucketARN, nil),
			stmt("list-bucket", []string{"s3:ListBucket"}, bucketARN, list),
			stmt("read-objects", []string{"s3:GetObject"}, objects, nil))
	}
	if level == AnonymousUpload || level == AnonymousPublic {
		out = append(out,
			stmt("write-bucket", []string{"s3:GetBucketLocation", "s3:ListBucketMultipartUploads"}, bucketARN, nil),
			stmt("write-objects", []string{"s3:PutObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"}, objects, nil))
	}
	return out
}

// SetAnonymous returns the bucket policy doc (nil or empty for none) with
// the anonymous access of prefix set to level; statements it did not write
// are kept. A nil result means the policy is now empty (delete it).
func SetAnonymous(doc []byte, bucket, prefix, level string) ([]byte, error) {
	switch level {
	case AnonymousNone, AnonymousDownload, AnonymousUpload, AnonymousPublic:
	default:
		return nil, fmt.Errorf("%w: access level %q is not none, download, upload or public", ErrInvalidPolicy, level)
	}
	stmts, err := rawStatements(doc)
	if err != nil {
		return nil, err
	}
	var kept []any
	for _, s := range stmts {
		if _, p, ok := anonPart(s); ok && p == prefix {
			continue
		}
		kept = append(kept, s)
	}
	for _, s := range cannedStatements(bucket, prefix, level) {
		kept = append(kept, s)
	}
	if len(kept) == 0 {
		return nil, nil
	}
	out, err := json.Marshal(map[string]any{"Version": Version2012, "Statement": kept})
	if err != nil {
		return nil, err
	}
	if _, err := ParseBucket(out); err != nil {
		return nil, err
	}
	return out, nil
}

// AnonymousLevels returns the access level SetAnonymous gave each prefix
// of the bucket policy doc ("" is the whole bucket).
func AnonymousLevels(doc []byte) (map[string]string, error) {
	stmts, err := rawStatements(doc)
	if err != nil {
		return nil, err
	}
	read, write := map[string]bool{}, map[string]bool{}
	for _, s := range stmts {
		part, prefix, ok := anonPart(s)
		switch {
		case !ok:
		case strings.HasPrefix(part, "read-") || part == "list-bucket":
			read[prefix] = true
		case strings.HasPrefix(part, "write-"):
			write[prefix] = true
		}
	}
	out := map[string]string{}
	for p := range read {
		out[p] = AnonymousDownload
	}
	for p := range write {
		if out[p] == AnonymousDownload {
			out[p] = AnonymousPublic
		} else {
			out[p] = AnonymousUpload
		}
	}
	return out, nil
}

// SortedPrefixes returns the keys of levels, sorted.
func SortedPrefixes(levels map[string]string) []string {
	out := make([]string, 0, len(levels))
	for p := range levels {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// rawStatements decodes a document's statements as generic JSON.
func rawStatements(doc []byte) ([]any, error) {
	if len(strings.TrimSpace(string(doc))) == 0 {
		return nil, nil
	}
	var d struct {
		Statement json.RawMessage
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, errAt(-1, "", "not a JSON policy document: %v", err)
	}
	var list []any
	if err := json.Unmarshal(d.Statement, &list); err != nil {
		var one any
		if err := json.Unmarshal(d.Statement, &one); err != nil {
			return nil, errAt(-1, "Statement", "want an object or a list of objects")
		}
		list = []any{one}
	}
	return list, nil
}

// anonPart reports whether s is a statement SetAnonymous wrote, and which.
func anonPart(s any) (part, prefix string, ok bool) {
	m, _ := s.(map[string]any)
	sid, _ := m["Sid"].(string)
	rest, found := strings.CutPrefix(sid, anonSidPrefix)
	if !found {
		return "", "", false
	}
	part, prefix, ok = strings.Cut(rest, ":")
	return part, prefix, ok
}
