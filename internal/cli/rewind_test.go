package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// --rewind reads objects as they were: cat, stat (and stat --recursive), ls,
// du, tree and cp pick for each
// key the version current at the time, and leave out keys that did not
// exist then (not yet, or deleted).
func TestRewind(t *testing.T) {
	e := newSiteEnv(t)
	e.must("mb", "s1/rew")
	e.must("version", "enable", "s1/rew")
	src := t.TempDir()
	e.must("cp", writeFile(t, filepath.Join(src, "a"), "one"), "s1/rew/docs/a")
	e.must("cp", writeFile(t, filepath.Join(src, "gone"), "here"), "s1/rew/docs/sub/gone")
	before := e.lastModified(t, "rew", "docs/a")
	// Listings carry milliseconds: a second apart, the times never tie.
	time.Sleep(1100 * time.Millisecond)
	e.must("cp", writeFile(t, filepath.Join(src, "a2"), "two"), "s1/rew/docs/a")
	e.must("rm", "s1/rew/docs/sub/gone")
	e.must("cp", writeFile(t, filepath.Join(src, "new"), "fresh"), "s1/rew/docs/new")
	at := before.Add(500 * time.Millisecond).UTC().Format(time.RFC3339Nano)

	if out := e.must("cat", "--rewind", at, "s1/rew/docs/a"); out != "one" {
		t.Errorf("cat --rewind = %q, want the first version", out)
	}
	if out := e.must("cat", "s1/rew/docs/a"); out != "two" {
		t.Errorf("cat = %q, want the latest", out)
	}
	if _, err := e.run("stat", "--rewind", at, "s1/rew/docs/new"); err == nil || !strings.Contains(err.Error(), "no such object at that time") {
		t.Errorf("stat --rewind of a later object: %v", err)
	}
	if out := e.must("stat", "--rewind", at, "--json", "s1/rew/docs/sub/gone"); !strings.Contains(out, `"size":4`) {
		t.Errorf("stat --rewind of a deleted object: %s", out)
	}
	var keys []string
	for _, l := range jsonLines(t, e.must("ls", "--recursive", "--rewind", at, "--json", "s1/rew/docs/")) {
		keys = append(keys, l["key"].(string))
	}
	if !slices.Equal(keys, []string{"docs/a", "docs/sub/gone"}) {
		t.Errorf("ls -r --rewind keys = %v", keys)
	}
	if out := e.must("ls", "--rewind", at, "s1/rew/docs/"); !strings.Contains(out, " sub/") || strings.Contains(out, "gone") || strings.Contains(out, "new") {
		t.Errorf("ls --rewind one level:\n%s", out)
	}
	dst := t.TempDir()
	e.must("cp", "--recursive", "--rewind", at, "s1/rew/docs/", dst)
	if got := readFile(t, filepath.Join(dst, "a")) + "," + readFile(t, filepath.Join(dst, "sub", "gone")); got != "one,here" {
		t.Errorf("cp -r --rewind copied %q", got)
	}
	// du --rewind counts what was there then: "one" and "here", 7 bytes;
	// today "two" and "fresh", 8 bytes.
	if out := e.must("du", "--rewind", at, "--json", "s1/rew/docs/"); !strings.Contains(out, `"size":7,"objects":2`) {
		t.Errorf("du --rewind: %s", out)
	}
	if out := e.must("du", "--json", "s1/rew/docs/"); !strings.Contains(out, `"size":8,"objects":2`) {
		t.Errorf("du: %s", out)
	}
	if _, err := e.run("du", "--rewind", at, "--versions", "s1/rew/docs/"); err == nil {
		t.Error("du --rewind with --versions accepted")
	}
	// stat --recursive shows every object, then or now.
	statKeys := func(args ...string) []string {
		var keys []string
		for _, l := range jsonLines(t, e.must(append([]string{"stat", "--recursive", "--json"}, args...)...)) {
			keys = append(keys, fmt.Sprintf("%v:%v", l["key"], l["size"]))
		}
		return keys
	}
	if got := statKeys("--rewind", at, "s1/rew/docs/"); !slices.Equal(got, []string{"s1/rew/docs/a:3", "s1/rew/docs/sub/gone:4"}) {
		t.Errorf("stat -r --rewind: %v", got)
	}
	if got := statKeys("s1/rew/docs/"); !slices.Equal(got, []string{"s1/rew/docs/a:3", "s1/rew/docs/new:5"}) {
		t.Errorf("stat -r: %v", got)
	}
	if _, err := e.run("stat", "-r", "--version-id", "x", "s1/rew/docs/"); err == nil {
		t.Error("stat -r --version-id accepted")
	}
	// tree --rewind draws what was there then: sub/gone, not new.
	if out := e.must("tree", "--files", "--rewind", at, "s1/rew/docs/"); !strings.Contains(out, "gone") || strings.Contains(out, "new") {
		t.Errorf("tree --rewind:\n%s", out)
	}
	if out := e.must("tree", "--files", "s1/rew/docs/"); strings.Contains(out, "gone") || !strings.Contains(out, "new") {
		t.Errorf("tree:\n%s", out)
	}
	// rm --rewind removes, for good, the version current then; the latest
	// stays.
	if out := e.must("rm", "--rewind", at, "--force", "--json", "s1/rew/docs/a"); !strings.Contains(out, `"versionId"`) {
		t.Errorf("rm --rewind printed %s", out)
	}
	if _, err := e.run("cat", "--rewind", at, "s1/rew/docs/a"); err == nil || !strings.Contains(err.Error(), "no such object at that time") {
		t.Errorf("cat --rewind after rm --rewind: %v", err)
	}
	if out := e.must("cat", "s1/rew/docs/a"); out != "two" {
		t.Errorf("latest after rm --rewind = %q", out)
	}
	if _, err := e.run("cp", "--rewind", "1h", "--version-id", "x", "s1/rew/docs/a", dst); err == nil {
		t.Error("--rewind with --version-id accepted")
	}
	if _, err := e.run("ls", "--rewind", "next tuesday", "s1/rew"); err == nil || !strings.Contains(err.Error(), "--rewind") {
		t.Errorf("bad --rewind: %v", err)
	}
}

// lastModified is the key's time as listings show it (milliseconds, where
// a HEAD's Last-Modified has seconds).
func (e siteEnv) lastModified(t *testing.T, bucket, key string) time.Time {
	t.Helper()
	for _, v := range e.versions(t, bucket, key) {
		if v.Key == key && v.IsLatest {
			return v.LastModified
		}
	}
	t.Fatalf("%s/%s not listed", bucket, key)
	return time.Time{}
}

// rm's filters: --non-current keeps every latest version, --older-than
// keeps what is newer, --incomplete aborts uploads and leaves objects.
func TestRemoveFilters(t *testing.T) {
	e := newSiteEnv(t)
	e.must("mb", "s1/filters")
	e.must("version", "enable", "s1/filters")
	src := t.TempDir()
	for _, body := range []string{"1", "2", "3"} {
		e.must("cp", writeFile(t, filepath.Join(src, "k"), body), "s1/filters/logs/k")
	}
	e.must("cp", writeFile(t, filepath.Join(src, "j"), "j"), "s1/filters/logs/j")

	if out := e.must("rm", "--recursive", "--force", "--older-than", "1h", "s1/filters/logs/"); out != "" {
		t.Errorf("rm --older-than 1h removed fresh objects:\n%s", out)
	}
	e.must("rm", "--recursive", "--force", "--non-current", "s1/filters/logs/")
	var left []string
	for _, v := range e.versions(t, "filters", "logs/") {
		left = append(left, v.Key+"="+map[bool]string{true: "latest", false: "old"}[v.IsLatest])
	}
	slices.Sort(left)
	if !slices.Equal(left, []string{"logs/j=latest", "logs/k=latest"}) {
		t.Errorf("after rm --non-current: %v", left)
	}
	if got := e.content(t, "filters", "logs/k"); got != "3" {
		t.Errorf("latest k = %q", got)
	}

	core := minio.Core{Client: e.c}
	if _, err := core.NewMultipartUpload(t.Context(), "filters", "logs/big", minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	out := e.must("rm", "--recursive", "--force", "--incomplete", "--json", "s1/filters/logs/")
	if l := jsonLines(t, out); len(l) != 1 || l[0]["key"] != "s1/filters/logs/big" || l[0]["uploadId"] == "" {
		t.Errorf("rm --incomplete printed %s", out)
	}
	for u := range e.c.ListIncompleteUploads(t.Context(), "filters", "logs/", true) {
		t.Errorf("upload left: %+v", u)
	}
	if len(e.keys(t, "filters", "logs/")) != 2 {
		t.Error("rm --incomplete removed objects")
	}
	if _, err := e.run("rm", "--recursive", "--force", "--incomplete", "--versions", "s1/filters/logs/"); err == nil {
		t.Error("--incomplete with --versions accepted")
	}
}

// slowReader hands out its data in small pieces with a pause before each.
type slowReader struct {
	data  []byte
	piece int
	pause time.Duration
}

func (r *slowReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	time.Sleep(r.pause)
	n := copy(p[:min(len(p), r.piece)], r.data)
	r.data = r.data[n:]
	return n, nil
}

// A transfer that takes a while reports progress on standard error: plain
// lines off a terminal, JSON lines with --json, nothing with --quiet; the
// results on standard output are unchanged.
func TestProgressReports(t *testing.T) {
	e := newSiteEnv(t)
	e.must("mb", "s1/prog")
	t.Setenv(cmdutil.ProgressIntervalEnv, "20ms")
	pipe := func(flags ...string) (stdout, stderr string) {
		var out, errOut bytes.Buffer
		root := NewRoot()
		root.SetArgs(append(append([]string{"--config-dir", e.dir}, flags...), "pipe", "s1/prog/slow"))
		root.SetOut(&out)
		root.SetErr(&errOut)
		root.SetIn(&slowReader{data: bytes.Repeat([]byte("x"), 64<<10), piece: 8 << 10, pause: 25 * time.Millisecond})
		if err := root.ExecuteContext(t.Context()); err != nil {
			t.Fatalf("pipe %v: %v\n%s", flags, err, errOut.String())
		}
		return out.String(), errOut.String()
	}

	out, errOut := pipe()
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "pipe: ") || !strings.Contains(lines[len(lines)-1], "pipe: done, 1 objects, 64.0KiB") {
		t.Errorf("progress lines:\n%s", errOut)
	}
	if strings.Contains(out, "pipe:") {
		t.Errorf("progress on standard output:\n%s", out)
	}

	out, errOut = pipe("--json")
	var last cmdutil.ProgressReport
	for _, l := range strings.Split(strings.TrimSpace(errOut), "\n") {
		if err := json.Unmarshal([]byte(l), &last); err != nil {
			t.Fatalf("progress line %q is not JSON: %v", l, err)
		}
		if last.Operation != "pipe" || last.Elapsed == "" {
			t.Errorf("progress line %s", l)
		}
	}
	if last.Status != "done" || last.Bytes != 64<<10 || last.Objects != 1 {
		t.Errorf("last progress = %+v", last)
	}
	if l := jsonLines(t, out); len(l) != 1 || l[0]["status"] != "success" {
		t.Errorf("result:\n%s", out)
	}

	if _, errOut = pipe("--quiet"); errOut != "" {
		t.Errorf("--quiet still reports:\n%s", errOut)
	}
}
