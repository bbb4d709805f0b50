package replication

// Batching: small versions queued back to back for one worker travel in
// one request, in order, made durable at the peer by one sync.
const (
	maxBatchItems = 64
	maxBatchSize  = 128 << 10 // largest version batched
)

func batchable(j job) bool { return j.e.Op == OpVersion && j.e.Size <= maxBatchSize }

// maxAsync bounds the large sends one worker runs in the background.
const maxAsync = 4

func jobKey(j job) string { return j.e.Bucket + "\x00" + j.e.Key }

// worker sends its queue in order per key. Small versions queued back to
// back go as one batch; a large version is sent in the background so it
// does not hold up other keys behind it, while a later change of the same
// key waits for it.
func (t *target) worker(q chan job) {
	defer t.wg.Done()
	busy := map[string]chan struct{}{} // key -> done, for background sends
	reap := func() {
		for k, ch := range busy {
			select {
			case <-ch:
				delete(busy, k)
			default:
			}
		}
	}
	waitKey := func(k string) {
		if ch, ok := busy[k]; ok {
			<-ch
			delete(busy, k)
		}
	}
	defer func() {
		for _, ch := range busy {
			<-ch
		}
	}()
	var next *job
	for {
		var j job
		if next != nil {
			j, next = *next, nil
		} else {
			var ok bool
			if j, ok = <-q; !ok {
				return
			}
		}
		reap()
		if t.ctx.Err() != nil || !t.online() {
			t.release(j)
			continue
		}
		waitKey(jobKey(j))
		if !batchable(j) {
			if j.e.Op != OpVersion {
				t.run(j)
				continue
			}
			for len(busy) >= maxAsync {
				for k, ch := range busy {
					<-ch
					delete(busy, k)
					break
				}
			}
			done := make(chan struct{})
			busy[jobKey(j)] = done
			go func(j job) {
				defer close(done)
				t.run(j)
			}(j)
			continue
		}
		batch := []job{j}
	gather:
		for len(batch) < maxBatchItems {
			select {
			case j2, ok := <-q:
				if !ok {
					break gather
				}
				if _, isBusy := busy[jobKey(j2)]; !batchable(j2) || isBusy {
					next = &j2 // keeps its place after the batch
					break gather
				}
				batch = append(batch, j2)
			default:
				break gather
			}
		}
		t.runBatch(batch)
	}
}
