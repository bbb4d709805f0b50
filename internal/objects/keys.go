package objects

// Metadata key layout (all under the meta store):
//
//	b/<bucket>                                  bucket record
//	l/<bucket>\x00<key>                         latest-version summary, for listing
//	v/<bucket>\x00<esc(key)>\x00\x01<versionID>  version record
//	u/<bucket>\x00<esc(key)>\x00\x01<uploadID>  multipart upload record
//	p/<uploadID>\x00<part number, 4 bytes BE>   uploaded part record
//	x/<bucket>\x00<esc(key)>\x00\x01<versionID>  purge tombstone (HLC time of the purged version)
//	o/c/<bucket>\x00<cell, 2 bytes BE>          stats cell: digest XOR, live objects and bytes
//	o/d/<bucket>                                bucket tombstone (HLC time of the bucket's deletion)
//	o/i/<blobID>                                blob intent: a blob file that may be unreferenced
//	o/s/<bucket>\x00<esc(key)>\x00\x01<versionID>\x00<peer ID>  replication status of a version (target_status.go)
//	o/format                                    on-disk format version of the object layer
//
// esc escapes 0x00 as 0x00 0xff and the key is terminated by 0x00 0x01, so
// version keys sort by object key first and one key's versions are a
// contiguous range. Latest summaries need no escaping: nothing follows the key.

const (
	pfxBucket     = "b/"
	pfxLatest     = "l/"
	pfxVersion    = "v/"
	pfxUpload     = "u/"
	pfxPart       = "p/"
	pfxPurged     = "x/"
	pfxCell       = "o/c/"
	pfxIntent     = "o/i/"
	pfxBucketGone = "o/d/"
	pfxStatus     = "o/s/"
	keyFormat     = "o/format"
)

// cellPrefix is the range holding every stats cell of one bucket.
func cellPrefix(bucket string) []byte { return []byte(pfxCell + bucket + "\x00") }

func cellKey(bucket string, cell int) []byte {
	return append(cellPrefix(bucket), byte(cell>>8), byte(cell))
}

// splitCellKey recovers the bucket and cell number of a stats cell key.
func splitCellKey(k []byte) (bucket string, cell int, ok bool) {
	rest := k[len(pfxCell):]
	n := len(rest)
	if n < 3 || rest[n-3] != 0 {
		return "", 0, false
	}
	return string(rest[:n-3]), int(rest[n-2])<<8 | int(rest[n-1]), true
}

func intentKey(blobID string) []byte { return []byte(pfxIntent + blobID) }

func purgedBucketPrefix(bucket string) []byte { return []byte(pfxPurged + bucket + "\x00") }

func purgedKey(bucket, key, versionID string) []byte {
	k := escapeKey(purgedBucketPrefix(bucket), key)
	return append(append(k, 0, 1), versionID...)
}

func statusBucketPrefix(bucket string) []byte { return []byte(pfxStatus + bucket + "\x00") }

// statusPrefix is the range holding a version's status records, one per peer.
func statusPrefix(bucket, key, versionID string) []byte {
	k := escapeKey(statusBucketPrefix(bucket), key)
	k = append(append(k, 0, 1), versionID...)
	return append(k, 0)
}

func statusKey(bucket, key, versionID, target string) []byte {
	return append(statusPrefix(bucket, key, versionID), target...)
}

func bucketKey(bucket string) []byte { return []byte(pfxBucket + bucket) }

func bucketGoneKey(bucket string) []byte { return []byte(pfxBucketGone + bucket) }

func latestPrefix(bucket string) []byte {
	k := make([]byte, 0, len(pfxLatest)+len(bucket)+1)
	k = append(k, pfxLatest...)
	k = append(k, bucket...)
	return append(k, 0)
}

func latestKey(bucket, key string) []byte { return append(latestPrefix(bucket), key...) }

func versionBucketPrefix(bucket string) []byte {
	k := make([]byte, 0, len(pfxVersion)+len(bucket)+1)
	k = append(k, pfxVersion...)
	k = append(k, bucket...)
	return append(k, 0)
}

func escapeKey(dst []byte, key string) []byte {
	for i := 0; i < len(key); i++ {
		dst = append(dst, key[i])
		if key[i] == 0 {
			dst = append(dst, 0xff)
		}
	}
	return dst
}

// versionsPrefix is the range holding every version of one key.
func versionsPrefix(bucket, key string) []byte {
	k := escapeKey(versionBucketPrefix(bucket), key)
	return append(k, 0, 1)
}

func versionKey(bucket, key, versionID string) []byte {
	return append(versionsPrefix(bucket, key), versionID...)
}

// splitVersionKey recovers the object key and version ID from a version key
// under versionBucketPrefix(bucket).
func splitVersionKey(bucket string, k []byte) (key, versionID string, ok bool) {
	return splitEscaped(k[len(versionBucketPrefix(bucket)):])
}

// splitEscaped splits esc(key)\x00\x01suffix into key and suffix.
func splitEscaped(rest []byte) (key, suffix string, ok bool) {
	out := make([]byte, 0, len(rest))
	for i := 0; i < len(rest); i++ {
		if rest[i] != 0 {
			out = append(out, rest[i])
			continue
		}
		if i+1 >= len(rest) {
			return "", "", false
		}
		switch rest[i+1] {
		case 0xff:
			out = append(out, 0)
			i++
		case 1:
			return string(out), string(rest[i+2:]), true
		default:
			return "", "", false
		}
	}
	return "", "", false
}

func uploadPrefix(bucket string) []byte { return []byte(pfxUpload + bucket + "\x00") }

func uploadKey(bucket, key, uploadID string) []byte {
	k := escapeKey(uploadPrefix(bucket), key)
	return append(append(k, 0, 1), uploadID...)
}

func partPrefix(uploadID string) []byte { return []byte(pfxPart + uploadID + "\x00") }

func partKey(uploadID string, n int) []byte {
	return append(partPrefix(uploadID), byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}
