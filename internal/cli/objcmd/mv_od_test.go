package objcmd

import (
	"strings"
	"testing"

	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// TestMoveOverlap: which moves on one site are refused because a copy
// would land on an object the move removes or lists again.
func TestMoveOverlap(t *testing.T) {
	tg := func(bucket, key string) cmdutil.Target { return cmdutil.Target{Alias: "s", Bucket: bucket, Key: key} }
	for _, tc := range []struct {
		name      string
		src, dst  cmdutil.Target
		recursive bool
		refused   bool
	}{
		{"onto itself", tg("b", "docs/a"), tg("b", "docs/a"), false, true},
		{"onto itself by its folder", tg("b", "docs/a"), tg("b", "docs/"), false, true},
		{"to another key", tg("b", "docs/a"), tg("b", "docs/b"), false, false},
		{"to another bucket", tg("b", "docs/a"), tg("c", "docs/a"), false, false},
		{"a prefix into itself", tg("b", "in/"), tg("b", "in/deeper/"), true, true},
		{"a prefix onto itself", tg("b", "in/"), tg("b", "in/"), true, true},
		{"a prefix to the bucket's root", tg("b", "in/"), tg("b", ""), true, true},
		{"a name without its slash to the root", tg("b", "photos"), tg("b", ""), true, true},
		{"a prefix beside itself", tg("b", "in/"), tg("b", "out/"), true, false},
		{"a prefix to another bucket's same prefix", tg("b", "in/"), tg("c", "in/"), true, false},
	} {
		err := moveOverlap(tc.src, tc.dst, tc.recursive)
		if (err != nil) != tc.refused {
			t.Errorf("%s: %v, refused want %v", tc.name, err, tc.refused)
		}
	}
}

// TestParseODArgs: od's operands and their refusals.
func TestParseODArgs(t *testing.T) {
	a, err := parseODArgs([]string{"if=x", "of=s/b/k", "size=5MiB", "count=2", "skip=1"})
	if err != nil || a.in != "x" || a.out != "s/b/k" || a.size != 5<<20 || a.count != 2 || a.skip != 1 {
		t.Fatalf("parse: %+v %v", a, err)
	}
	if a, err := parseODArgs([]string{"of=f", "parts=3"}); err != nil || a.parts != 3 {
		t.Fatalf("parts=: %+v %v", a, err)
	}
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"if=x"}, "needs of=TARGET"},
		{[]string{"of=f", "of=g"}, "given twice"},
		{[]string{"of=f", "bs=1"}, "unknown operand"},
		{[]string{"of=f", "size="}, "with a value"},
		{[]string{"of=f", "size=0"}, "positive size"},
		{[]string{"of=f", "count=0", "size=1MiB"}, "want 1 to 10000"},
		{[]string{"of=f", "skip=-1", "size=1MiB"}, "want 1 to 10000"},
		{[]string{"of=f", "parts=10001"}, "want 1 to 10000"},
		{[]string{"of=f", "count=1"}, "give size= too"},
		{[]string{"of=f", "size=1MiB", "parts=2"}, "not both"},
	} {
		if _, err := parseODArgs(tc.args); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.wantErr)
		}
	}
}
