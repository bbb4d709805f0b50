package scanner

// SaveBackfill writes job as the last backfill's record, as a run that
// stopped at job's cursor leaves it.
func SaveBackfill(s *Scanner, job BackfillJob) error { return s.saveBackfill(job) }
