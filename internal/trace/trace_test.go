package trace

import (
	"testing"
	"time"
)

func TestFilterMatch(t *testing.T) {
	e := &Event{Type: TablesScan, FuncName: "catalogScanner.cycle", Path: "/wh/ns/t1", StatusCode: 200}
	for _, tc := range []struct {
		f    Filter
		want bool
	}{
		{Filter{}, true},
		{Filter{Types: S3}, false},
		{Filter{Types: TablesScan | S3}, true},
		{Filter{FuncName: "catalogScanner.*"}, true},
		{Filter{FuncName: "catalogScanner.cycle"}, true},
		{Filter{FuncName: "catalogScanner.txn"}, false},
		{Filter{FuncName: "*cycle"}, true},
		{Filter{Path: "/wh/*"}, true},
		{Filter{Path: "/other/*"}, false},
		{Filter{StatusCode: 403}, false},
		{Filter{StatusCode: 200}, true},
	} {
		if got := tc.f.Match(e); got != tc.want {
			t.Errorf("%+v.Match = %v, want %v", tc.f, got, tc.want)
		}
	}
}

func TestBusDeliversAndNeverBlocks(t *testing.T) {
	b := New("node1")
	if b.Enabled(S3) {
		t.Fatal("enabled with no subscribers")
	}
	ch, cancel := b.Subscribe(Filter{Types: S3}, 2)
	if !b.Enabled(S3) || b.Enabled(Tables) {
		t.Fatal("mask wrong after subscribe")
	}
	done := make(chan struct{})
	go func() {
		for i := 0; i < 100; i++ {
			b.Publish(Event{Type: S3, FuncName: "s3.PutObject"})
			b.Publish(Event{Type: Tables, FuncName: "LoadTable"})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Publish blocked on a slow subscriber")
	}
	e := <-ch
	if e.FuncName != "s3.PutObject" || e.Node != "node1" || e.TypeName != "s3" {
		t.Fatalf("got %+v", e)
	}
	if b.Dropped() != 98 {
		t.Fatalf("dropped = %d, want 98", b.Dropped())
	}
	cancel()
	cancel()
	if b.Enabled(S3) {
		t.Fatal("still enabled after cancel")
	}
	if _, ok := <-ch; !ok {
		return
	}
}

func TestParseType(t *testing.T) {
	for _, name := range []string{"s3", "tables", "tables-scan", "replication", "admin"} {
		ty, ok := ParseType(name)
		if !ok || ty.String() != name {
			t.Errorf("ParseType(%q) = %v %v", name, ty, ok)
		}
	}
	if _, ok := ParseType("bogus"); ok {
		t.Error("bogus parsed")
	}
}
