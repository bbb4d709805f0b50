package replication

// bucketOrder keeps a bucket's record and its objects in journal order
// although they travel through different workers (a worker is chosen by
// bucket and key, and the record has no key). A version sent before the
// record that creates its bucket is refused by the peer with NoSuchBucket
// and spends retries; a bucket's deletion sent before the purges that
// empty it is refused as not empty. So a bucket's record waits for the
// object sends of that bucket already in flight, and the bucket's object
// sends wait for its record in flight. Sends of other buckets never wait.
//
// It only decides; the target calls it under its lock when it claims and
// completes work.
type bucketOrder struct {
	objects map[string]int  // bucket -> object sends (versions, purges) in flight
	records map[string]int  // bucket -> record sends (bucket, bucket delete) in flight
	waiting map[string]bool // buckets with work held back since their last completion
}

func newBucketOrder() bucketOrder {
	return bucketOrder{objects: map[string]int{}, records: map[string]int{}, waiting: map[string]bool{}}
}

// ordered reports whether en is ordered against its bucket's other work.
func ordered(en Entry) bool {
	switch en.Op {
	case OpVersion, OpPurge, OpBucket, OpBucketDelete:
		return en.Bucket != ""
	}
	return false
}

func isRecord(en Entry) bool { return en.Op == OpBucket || en.Op == OpBucketDelete }

// admit reports whether en may be sent now and, if so, counts it in
// flight until finish. retry says en comes from the retry queue: a record
// being retried does not wait for objects, which a steady stream of writes
// to its bucket could keep in flight for ever.
func (o *bucketOrder) admit(en Entry, retry bool) bool {
	if !ordered(en) {
		return true
	}
	b := en.Bucket
	if isRecord(en) {
		if !retry && o.objects[b] > 0 {
			o.waiting[b] = true
			return false
		}
		o.records[b]++
		return true
	}
	if o.records[b] > 0 {
		o.waiting[b] = true
		return false
	}
	o.objects[b]++
	return true
}

// finish ends a send admit let through, whatever its outcome. It reports
// whether work held back for the bucket may now go.
func (o *bucketOrder) finish(en Entry) bool {
	if !ordered(en) {
		return false
	}
	b := en.Bucket
	m := o.objects
	if isRecord(en) {
		m = o.records
	}
	if m[b]--; m[b] > 0 {
		return false
	}
	delete(m, b)
	if !o.waiting[b] {
		return false
	}
	if o.objects[b] == 0 && o.records[b] == 0 {
		delete(o.waiting, b)
	}
	return true
}
