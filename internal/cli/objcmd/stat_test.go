package objcmd

import (
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestObjectStatShowsReplicationStatus(t *testing.T) {
	s := ObjectStat{Key: "s1/bkt/k", ETag: "abc", ReplicationStatus: "PENDING", Metadata: map[string]string{"B": "2", "A": "1"}}
	human := s.human()
	if !strings.Contains(human, "Replication Status : PENDING") || strings.Index(human, "A: 1") > strings.Index(human, "B: 2") {
		t.Errorf("stat output:\n%s", human)
	}
	if strings.Contains(ObjectStat{}.human(), "Replication") {
		t.Error("stat shows a replication status the server did not send")
	}
}

func TestStatReplicationFields(t *testing.T) {
	h := http.Header{}
	h.Set("X-Amz-Replication-Status", "PENDING")
	h.Set("X-Twinlake-Replication-Targets", "dep-b=COMPLETED,dep-c=PENDING")
	h.Set("X-Twinlake-Origin", "dep-a")
	h.Set("X-Twinlake-Mod-Time", "1736072400000000001")
	h.Set("X-Twinlake-Replica-Timestamp", "2025-01-05T10:30:00Z")
	h.Set("X-Twinlake-Replication-Activity", "2025-01-05T10:30:05.5Z")
	var s ObjectStat
	s.readReplicationHeaders(h)
	if s.ReplicationStatus != "PENDING" || !maps.Equal(s.ReplicationTargets, map[string]string{"dep-b": "COMPLETED", "dep-c": "PENDING"}) ||
		s.Origin != "dep-a" || s.ModTime != 1736072400000000001 || s.ReplicaTimestamp.Unix() != 1736073000 ||
		s.ReplicationActivity.Sub(s.ReplicaTimestamp) != 5500*time.Millisecond {
		t.Fatalf("parsed %+v", s)
	}
	human := s.human()
	for _, w := range []string{
		"Replication Status : PENDING\nReplication Targets :\n  dep-b: COMPLETED\n  dep-c: PENDING\n",
		"Origin Site : dep-a\n", "HLC Mod Time : 1736072400000000001 (2025-01-05T10:20:00.000000001Z)\n",
		"Replica Timestamp : 2025-01-05T10:30:00Z\n", "Replication Activity : 2025-01-05T10:30:05.5Z",
	} {
		if !strings.Contains(human, w) {
			t.Errorf("stat output lacks %q:\n%s", w, human)
		}
	}
	var none ObjectStat
	none.readReplicationHeaders(http.Header{})
	if got := none.human(); strings.Contains(got, "Replica") || strings.Contains(got, "Origin") || strings.Contains(got, "HLC") {
		t.Errorf("stat shows replication fields the server did not send:\n%s", got)
	}
}
