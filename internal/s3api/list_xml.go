package s3api

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strconv"
)

// listEntries writes a listing page's Contents and CommonPrefixes into b
// by hand, for a field tagged ",innerxml": encoding/xml's reflection over
// a page of 1,000 entries was more than half of a listing's CPU. The bytes
// are exactly what encoding/xml writes for the same []objectEntry tagged
// "Contents" and []commonPrefix tagged "CommonPrefixes", escaping included
// (TestListEntriesXML compares them on random entries). The handlers write
// into a pooled buffer (xmlBuffer), as writeXML does.
func listEntries(b *bytes.Buffer, entries []objectEntry, prefixes []commonPrefix) {
	for i := range entries {
		e := &entries[i]
		b.WriteString("<Contents>")
		element(b, "Key", e.Key)
		element(b, "LastModified", e.LastModified)
		element(b, "ETag", e.ETag)
		writeChecksum(b, e.listedChecksum)
		writeSize(b, e.Size)
		element(b, "StorageClass", e.StorageClass)
		if e.Owner != nil {
			writeOwner(b, *e.Owner)
		}
		b.WriteString("</Contents>")
	}
	writePrefixes(b, prefixes)
}

// versionEntries is listEntries for ListObjectVersions: its versions and
// delete markers (versionEntry, deleteMarkerEntry) in order, then its
// CommonPrefixes, as encoding/xml writes them untagged in a []any and
// tagged "CommonPrefixes" (TestVersionEntriesXML).
func versionEntries(b *bytes.Buffer, entries []any, prefixes []commonPrefix) {
	for _, e := range entries {
		switch e := e.(type) {
		case versionEntry:
			b.WriteString("<Version>")
			element(b, "Key", e.Key)
			element(b, "VersionId", e.VersionID)
			element(b, "IsLatest", strconv.FormatBool(e.IsLatest))
			element(b, "LastModified", e.LastModified)
			element(b, "ETag", e.ETag)
			writeChecksum(b, e.listedChecksum)
			writeSize(b, e.Size)
			element(b, "StorageClass", e.StorageClass)
			writeOwner(b, e.Owner)
			b.WriteString("</Version>")
		case deleteMarkerEntry:
			b.WriteString("<DeleteMarker>")
			element(b, "Key", e.Key)
			element(b, "VersionId", e.VersionID)
			element(b, "IsLatest", strconv.FormatBool(e.IsLatest))
			element(b, "LastModified", e.LastModified)
			writeOwner(b, e.Owner)
			b.WriteString("</DeleteMarker>")
		default:
			panic(fmt.Sprintf("s3api: a version listing holds a %T", e))
		}
	}
	writePrefixes(b, prefixes)
}

func writeChecksum(b *bytes.Buffer, c listedChecksum) {
	if c.ChecksumAlgorithm != "" {
		element(b, "ChecksumAlgorithm", c.ChecksumAlgorithm)
	}
	if c.ChecksumType != "" {
		element(b, "ChecksumType", c.ChecksumType)
	}
}

func writeOwner(b *bytes.Buffer, o owner) {
	b.WriteString("<Owner>")
	element(b, "ID", o.ID)
	element(b, "DisplayName", o.DisplayName)
	b.WriteString("</Owner>")
}

func writeSize(b *bytes.Buffer, n int64) {
	b.WriteString("<Size>")
	b.Write(strconv.AppendInt(b.AvailableBuffer(), n, 10))
	b.WriteString("</Size>")
}

func writePrefixes(b *bytes.Buffer, prefixes []commonPrefix) {
	for _, p := range prefixes {
		b.WriteString("<CommonPrefixes>")
		element(b, "Prefix", p.Prefix)
		b.WriteString("</CommonPrefixes>")
	}
}

// element writes <name>text</name>, text escaped.
func element(b *bytes.Buffer, name, text string) {
	b.WriteByte('<')
	b.WriteString(name)
	b.WriteByte('>')
	escapeText(b, text)
	b.WriteString("</")
	b.WriteString(name)
	b.WriteByte('>')
}

// escapeText writes s escaped as encoding/xml escapes character data
// (the same replacements): ASCII here, and from the first other byte on
// (a control character XML cannot hold, or UTF-8 to check) through
// xml.EscapeText.
func escapeText(b *bytes.Buffer, s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch c := s[i]; c {
		case '"':
			esc = "&#34;"
		case '\'':
			esc = "&#39;"
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '\t':
			esc = "&#x9;"
		case '\n':
			esc = "&#xA;"
		case '\r':
			esc = "&#xD;"
		default:
			if c >= 0x20 && c < 0x80 {
				continue
			}
			b.WriteString(s[last:i])
			_ = xml.EscapeText(b, []byte(s[i:])) // a bytes.Buffer takes every write
			return
		}
		b.WriteString(s[last:i])
		b.WriteString(esc)
		last = i + 1
	}
	b.WriteString(s[last:])
}
