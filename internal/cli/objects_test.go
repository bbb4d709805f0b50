package cli

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/cli/benchcmd"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
	"github.com/twinlake/twinlake/internal/cli/objcmd"
	"github.com/twinlake/twinlake/internal/testsite"
)

// siteEnv is a running site with alias "s1" configured for it, and a client
// to check server state with.
type siteEnv struct {
	cliEnv
	site *testsite.Site
	c    *minio.Client
}

func newSiteEnv(t *testing.T) siteEnv {
	t.Helper()
	site := testsite.Start(t)
	e := siteEnv{cliEnv: newCLIEnv(t), site: site}
	e.must("alias", "set", "s1", site.URL, site.AccessKey, site.SecretKey)
	c, err := cmdutil.NewS3Client(cmdutil.Alias{URL: site.URL, AccessKey: site.AccessKey, SecretKey: site.SecretKey}, cmdutil.S3ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	e.c = c
	return e
}

// step is one command of a scenario and what it must do.
type step struct {
	name    string
	args    []string
	stdin   string
	wantErr string                         // substring of the error; "" means success
	want    []string                       // substrings of stdout
	check   func(t *testing.T, out string) // after success, or after the wanted error
}

// runSteps runs the steps in order against one site; a failing step stops
// the scenario, since later steps depend on its state.
func (e siteEnv) runSteps(t *testing.T, steps []step) {
	t.Helper()
	for _, s := range steps {
		ok := t.Run(s.name, func(t *testing.T) {
			out, errOut, err := e.runIn(s.stdin, s.args...)
			if s.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), s.wantErr) {
					t.Fatalf("twinlake %s: error = %v, want one containing %q\nstdout: %s", strings.Join(s.args, " "), err, s.wantErr, out)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error is not one line: %q", err)
				}
				if s.check != nil {
					s.check(t, out) // what the refusal left in place
				}
				return
			}
			if err != nil {
				t.Fatalf("twinlake %s: %v\nstdout: %s\nstderr: %s", strings.Join(s.args, " "), err, out, errOut)
			}
			for _, w := range s.want {
				if !strings.Contains(out, w) {
					t.Errorf("twinlake %s: output lacks %q:\n%s", strings.Join(s.args, " "), w, out)
				}
			}
			if s.check != nil {
				s.check(t, out)
			}
		})
		if !ok {
			t.FailNow()
		}
	}
}

func (e siteEnv) bucketExists(t *testing.T, bucket string) bool {
	t.Helper()
	ok, err := e.c.BucketExists(t.Context(), bucket)
	if err != nil {
		t.Fatalf("HEAD bucket %s: %v", bucket, err)
	}
	return ok
}

func (e siteEnv) versioning(t *testing.T, bucket string) string {
	t.Helper()
	vc, err := e.c.GetBucketVersioning(t.Context(), bucket)
	if err != nil {
		t.Fatalf("GET ?versioning %s: %v", bucket, err)
	}
	return vc.Status
}

// versions lists every version and delete marker under prefix.
func (e siteEnv) versions(t *testing.T, bucket, prefix string) []minio.ObjectInfo {
	t.Helper()
	var objs []minio.ObjectInfo
	for o := range e.c.ListObjectsIter(t.Context(), bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true, WithVersions: true}) {
		if o.Err != nil {
			t.Fatalf("list versions %s/%s: %v", bucket, prefix, o.Err)
		}
		objs = append(objs, o)
	}
	return objs
}

// keys lists the current object keys under prefix.
func (e siteEnv) keys(t *testing.T, bucket, prefix string) []string {
	t.Helper()
	var keys []string
	for o := range e.c.ListObjectsIter(t.Context(), bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("list %s/%s: %v", bucket, prefix, o.Err)
		}
		keys = append(keys, o.Key)
	}
	return keys
}

func (e siteEnv) content(t *testing.T, bucket, key string) string {
	t.Helper()
	obj, err := e.c.GetObject(t.Context(), bucket, key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatalf("GET %s/%s: %v", bucket, key, err)
	}
	defer obj.Close()
	b, err := io.ReadAll(obj)
	if err != nil {
		t.Fatalf("GET %s/%s: %v", bucket, key, err)
	}
	return string(b)
}

func writeFile(t *testing.T, p, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestObjectBuckets(t *testing.T) {
	e := newSiteEnv(t)
	e.runSteps(t, []step{
		{name: "mb", args: []string{"mb", "s1/photos"}, want: []string{"Bucket created successfully `s1/photos`."},
			check: func(t *testing.T, _ string) {
				if !e.bucketExists(t, "photos") {
					t.Error("bucket photos does not exist after mb")
				}
			}},
		{name: "mb existing", args: []string{"mb", "s1/photos"}, wantErr: "BucketAlready"},
		{name: "mb ignore existing", args: []string{"mb", "--ignore-existing", "s1/photos"}, want: []string{"already exists"}},
		{name: "mb with versioning", args: []string{"mb", "--with-versioning", "s1/versioned", "--json"},
			check: func(t *testing.T, out string) {
				if got := jsonLines(t, out); len(got) != 1 || got[0]["bucket"] != "s1/versioned" || got[0]["created"] != true {
					t.Errorf("mb --json = %v", got)
				}
				if got := e.versioning(t, "versioned"); got != "Enabled" {
					t.Errorf("versioning = %q, want Enabled", got)
				}
			}},
		{name: "mb no bucket", args: []string{"mb", "s1"}, wantErr: "want ALIAS/BUCKET"},
		{name: "mb invalid name", args: []string{"mb", "s1/No_Such..Bucket"}, wantErr: "make bucket s1/No_Such..Bucket"},
		{name: "mb unknown alias", args: []string{"mb", "nosuch/b"}, wantErr: "no such alias"},
		{name: "ls buckets", args: []string{"ls", "s1"}, want: []string{"photos/", "versioned/"}},
		{name: "ls buckets json", args: []string{"ls", "s1", "--json"}, check: func(t *testing.T, out string) {
			objs := jsonLines(t, out)
			var names []string
			for _, o := range objs {
				if o["type"] != "bucket" {
					t.Errorf("entry %v: want type bucket", o)
				}
				names = append(names, o["key"].(string))
			}
			if !slices.Equal(names, []string{"photos/", "versioned/"}) {
				t.Errorf("buckets = %v", names)
			}
		}},
		{name: "version info unversioned", args: []string{"version", "info", "s1/photos"}, want: []string{"s1/photos is un-versioned"}},
		{name: "version enable", args: []string{"version", "enable", "s1/photos"}, want: []string{"s1/photos versioning is enabled"},
			check: func(t *testing.T, _ string) {
				if got := e.versioning(t, "photos"); got != "Enabled" {
					t.Errorf("versioning = %q, want Enabled", got)
				}
			}},
		{name: "version suspend", args: []string{"version", "suspend", "s1/photos"}, want: []string{"versioning is suspended"},
			check: func(t *testing.T, _ string) {
				if got := e.versioning(t, "photos"); got != "Suspended" {
					t.Errorf("versioning = %q, want Suspended", got)
				}
			}},
		{name: "version info json", args: []string{"version", "info", "s1/photos", "--json"}, want: []string{`"versioning":"Suspended"`}},
		{name: "version missing bucket", args: []string{"version", "enable", "s1/nosuch"}, wantErr: "NoSuchBucket"},
		{name: "stat bucket", args: []string{"stat", "s1/versioned"}, want: []string{"Name       : s1/versioned", "Versioning : Enabled"}},
		{name: "stat missing bucket", args: []string{"stat", "s1/nosuch"}, wantErr: "NoSuchBucket"},
		{name: "rb", args: []string{"rb", "s1/photos"}, want: []string{"Removed `s1/photos` successfully."},
			check: func(t *testing.T, _ string) {
				if e.bucketExists(t, "photos") {
					t.Error("bucket photos still exists after rb")
				}
			}},
		{name: "rb missing", args: []string{"rb", "s1/photos"}, wantErr: "NoSuchBucket"},
		{name: "ls after rb", args: []string{"ls", "s1"}, check: func(t *testing.T, out string) {
			if strings.Contains(out, "photos/") || !strings.Contains(out, "versioned/") {
				t.Errorf("ls after rb:\n%s", out)
			}
		}},
	})
}

func TestObjectCopyAndRead(t *testing.T) {
	e := newSiteEnv(t)
	dir := t.TempDir()
	hello := writeFile(t, filepath.Join(dir, "hello.txt"), "hello, twinlake\n")
	tree := filepath.Join(dir, "src")
	writeFile(t, filepath.Join(tree, "a.txt"), "file a")
	writeFile(t, filepath.Join(tree, "sub", "b.txt"), "file b")
	// Over minio-go's 16MiB part size: the upload is multipart.
	big := make([]byte, 17<<20)
	rand.Read(big)
	bigFile := writeFile(t, filepath.Join(dir, "big.bin"), string(big))
	out := filepath.Join(dir, "out")
	// A second alias for the same site under another URL: copies between the
	// two aliases stream through the client instead of copying server-side.
	u, _ := url.Parse(e.site.URL)
	e.must("alias", "set", "s1b", "http://localhost:"+u.Port(), e.site.AccessKey, e.site.SecretKey)
	e.must("mb", "s1/bkt")

	e.runSteps(t, []step{
		{name: "upload with attrs", args: []string{"cp", "--attr", "owner=ana", "--attr", "Content-Type=text/plain;team=data", hello, "s1/bkt/dir/"},
			want: []string{"-> `s1/bkt/dir/hello.txt`"},
			check: func(t *testing.T, _ string) {
				info, err := e.c.StatObject(t.Context(), "bkt", "dir/hello.txt", minio.StatObjectOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if info.ContentType != "text/plain" || info.UserMetadata["Owner"] != "ana" || info.UserMetadata["Team"] != "data" {
					t.Errorf("uploaded object: content type %q, metadata %v", info.ContentType, info.UserMetadata)
				}
			}},
		{name: "cat", args: []string{"cat", "s1/bkt/dir/hello.txt"}, check: func(t *testing.T, out string) {
			if out != "hello, twinlake\n" {
				t.Errorf("cat = %q", out)
			}
		}},
		{name: "cat --offset", args: []string{"cat", "--offset", "7", "s1/bkt/dir/hello.txt"}, check: func(t *testing.T, out string) {
			if out != "twinlake\n" {
				t.Errorf("cat --offset 7 = %q", out)
			}
		}},
		{name: "cat --tail", args: []string{"cat", "--tail", "4", "s1/bkt/dir/hello.txt"}, check: func(t *testing.T, out string) {
			if out != "ake\n" {
				t.Errorf("cat --tail 4 = %q", out)
			}
		}},
		{name: "cat --offset past the end", args: []string{"cat", "--offset", "100", "s1/bkt/dir/hello.txt"}, wantErr: "InvalidRange"},
		{name: "cat --offset and --tail", args: []string{"cat", "--offset", "1", "--tail", "1", "s1/bkt/dir/hello.txt"}, wantErr: "not both"},
		{name: "stat object", args: []string{"stat", "s1/bkt/dir/hello.txt"},
			want: []string{"Name      : s1/bkt/dir/hello.txt", "Size      : 16B (16 bytes)", "Type      : text/plain", "Owner: ana", "ETag      : "}},
		{name: "stat object json", args: []string{"stat", "--json", "s1/bkt/dir/hello.txt"}, check: func(t *testing.T, out string) {
			var s objcmd.ObjectStat
			if err := json.Unmarshal([]byte(out), &s); err != nil {
				t.Fatal(err)
			}
			if s.Size != 16 || s.ETag == "" || strings.Contains(s.ETag, `"`) || s.Metadata["Owner"] != "ana" ||
				time.Since(s.LastModified) > time.Hour {
				t.Errorf("stat --json = %+v", s)
			}
		}},
		{name: "download to dir", args: []string{"cp", "s1/bkt/dir/hello.txt", dir + "/dl/"}, check: func(t *testing.T, _ string) {
			if got := readFile(t, filepath.Join(dir, "dl", "hello.txt")); got != "hello, twinlake\n" {
				t.Errorf("downloaded %q", got)
			}
		}},
		{name: "download to file json", args: []string{"cp", "--json", "s1/bkt/dir/hello.txt", filepath.Join(dir, "h2.txt")},
			want: []string{`"source":"s1/bkt/dir/hello.txt"`, `"size":16`}},
		{name: "server-side copy keeps metadata", args: []string{"cp", "s1/bkt/dir/hello.txt", "s1/bkt/copy.txt"},
			check: func(t *testing.T, _ string) {
				info, err := e.c.StatObject(t.Context(), "bkt", "copy.txt", minio.StatObjectOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if e.content(t, "bkt", "copy.txt") != "hello, twinlake\n" || info.UserMetadata["Owner"] != "ana" || info.ContentType != "text/plain" {
					t.Errorf("copy: content type %q, metadata %v", info.ContentType, info.UserMetadata)
				}
			}},
		{name: "server-side copy adds attrs", args: []string{"cp", "--attr", "extra=1", "s1/bkt/dir/hello.txt", "s1/bkt/copy2.txt"},
			check: func(t *testing.T, _ string) {
				info, err := e.c.StatObject(t.Context(), "bkt", "copy2.txt", minio.StatObjectOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if info.UserMetadata["Owner"] != "ana" || info.UserMetadata["Extra"] != "1" || info.ContentType != "text/plain" {
					t.Errorf("copy2: content type %q, metadata %v", info.ContentType, info.UserMetadata)
				}
			}},
		{name: "streamed copy between aliases", args: []string{"cp", "s1/bkt/dir/hello.txt", "s1b/bkt/streamed.txt"},
			check: func(t *testing.T, _ string) {
				info, err := e.c.StatObject(t.Context(), "bkt", "streamed.txt", minio.StatObjectOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if e.content(t, "bkt", "streamed.txt") != "hello, twinlake\n" || info.UserMetadata["Owner"] != "ana" {
					t.Errorf("streamed copy: metadata %v", info.UserMetadata)
				}
			}},
		{name: "multipart upload", args: []string{"cp", bigFile, "s1/bkt/big.bin"}, check: func(t *testing.T, _ string) {
			if got := e.content(t, "bkt", "big.bin"); got != string(big) {
				t.Errorf("big.bin round trip: %d bytes back, differ", len(got))
			}
		}},
		{name: "multipart download", args: []string{"cp", "s1/bkt/big.bin", filepath.Join(dir, "big.out")}, check: func(t *testing.T, _ string) {
			if !bytes.Equal([]byte(readFile(t, filepath.Join(dir, "big.out"))), big) {
				t.Error("big.out differs from big.bin")
			}
		}},
		{name: "upload dir needs recursive", args: []string{"cp", tree, "s1/bkt/tree/"}, wantErr: "use --recursive"},
		{name: "upload tree", args: []string{"cp", "--recursive", tree, "s1/bkt/tree"}, check: func(t *testing.T, _ string) {
			if got := e.keys(t, "bkt", "tree/"); !slices.Equal(got, []string{"tree/src/a.txt", "tree/src/sub/b.txt"}) {
				t.Errorf("keys = %v", got)
			}
		}},
		{name: "upload tree contents", args: []string{"cp", "-r", tree + "/", "s1/bkt/flat/"}, check: func(t *testing.T, _ string) {
			if got := e.keys(t, "bkt", "flat/"); !slices.Equal(got, []string{"flat/a.txt", "flat/sub/b.txt"}) {
				t.Errorf("keys = %v", got)
			}
		}},
		{name: "ls folder", args: []string{"ls", "s1/bkt/tree/src/"}, check: func(t *testing.T, out string) {
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 2 || !strings.HasSuffix(lines[0], " a.txt") || !strings.HasSuffix(lines[1], " sub/") ||
				!strings.Contains(lines[0], "6B STANDARD") {
				t.Errorf("ls:\n%s", out)
			}
		}},
		{name: "ls recursive json", args: []string{"ls", "-r", "--json", "s1/bkt/tree"}, check: func(t *testing.T, out string) {
			var keys []string
			for _, o := range jsonLines(t, out) {
				keys = append(keys, o["key"].(string))
				if o["type"] != "file" || o["etag"] == "" {
					t.Errorf("entry %v", o)
				}
			}
			if !slices.Equal(keys, []string{"tree/src/a.txt", "tree/src/sub/b.txt"}) {
				t.Errorf("keys = %v", keys)
			}
		}},
		{name: "download tree", args: []string{"cp", "-r", "s1/bkt/tree/src/", out}, check: func(t *testing.T, _ string) {
			if readFile(t, filepath.Join(out, "a.txt")) != "file a" || readFile(t, filepath.Join(out, "sub", "b.txt")) != "file b" {
				t.Error("downloaded tree differs")
			}
		}},
		{name: "copy tree remote", args: []string{"cp", "-r", "s1/bkt/tree/", "s1/bkt/tree2/"}, check: func(t *testing.T, _ string) {
			if got := e.keys(t, "bkt", "tree2/"); !slices.Equal(got, []string{"tree2/src/a.txt", "tree2/src/sub/b.txt"}) {
				t.Errorf("keys = %v", got)
			}
		}},
		{name: "local to local", args: []string{"cp", hello, filepath.Join(dir, "x")}, wantErr: "cp needs an ALIAS/BUCKET"},
		{name: "missing local file", args: []string{"cp", filepath.Join(dir, "nope"), "s1/bkt/"}, wantErr: "no such file"},
		{name: "cat missing", args: []string{"cat", "s1/bkt/nope"}, wantErr: "NoSuchKey"},
		{name: "cat no key", args: []string{"cat", "s1/bkt"}, wantErr: "want ALIAS/BUCKET/KEY"},
		{name: "cp missing", args: []string{"cp", "s1/bkt/nope", dir + "/"}, wantErr: "NoSuchKey"},
		{name: "stat missing", args: []string{"stat", "s1/bkt/nope"}, wantErr: "stat s1/bkt/nope"},
		{name: "bad attr", args: []string{"cp", "--attr", "novalue", hello, "s1/bkt/"}, wantErr: "want key=value"},
	})
	if _, err := os.Stat(filepath.Join(dir, "nope")); err == nil {
		t.Error("a failed download left a file behind")
	}
}

func TestObjectCopyRefusesEscapingKeys(t *testing.T) {
	e := newSiteEnv(t)
	e.must("mb", "s1/bkt")
	if _, err := e.c.PutObject(t.Context(), "bkt", "p/../../escape.txt", strings.NewReader("x"), 1, minio.PutObjectOptions{}); err != nil {
		t.Skipf("server refuses the key (fine): %v", err)
	}
	dst := filepath.Join(t.TempDir(), "a", "b")
	_, err := e.run("cp", "-r", "s1/bkt/p/", dst)
	if err == nil || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("cp -r of a key with ..: error = %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(dst)), "escape.txt")); err == nil {
		t.Error("key was written outside the target directory")
	}
}

func TestObjectVersionsAndRemove(t *testing.T) {
	e := newSiteEnv(t)
	dir := t.TempDir()
	v1 := writeFile(t, filepath.Join(dir, "v1"), "version one")
	v2 := writeFile(t, filepath.Join(dir, "v2"), "version two")
	e.must("mb", "--with-versioning", "s1/ver")
	id1 := jsonLines(t, e.must("cp", "--json", v1, "s1/ver/k"))[0]["versionId"].(string)
	id2 := jsonLines(t, e.must("cp", "--json", v2, "s1/ver/k"))[0]["versionId"].(string)
	if id1 == "" || id2 == "" || id1 == id2 {
		t.Fatalf("version IDs %q, %q: want two different IDs", id1, id2)
	}
	for _, k := range []string{"p/1", "p/2", "p/3"} {
		e.must("cp", v1, "s1/ver/"+k)
	}

	e.runSteps(t, []step{
		{name: "ls versions", args: []string{"ls", "--versions", "s1/ver/k"}, check: func(t *testing.T, out string) {
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 2 || !strings.Contains(lines[0], id2+" PUT k (latest)") || !strings.Contains(lines[1], id1+" PUT k") {
				t.Errorf("ls --versions:\n%s", out)
			}
		}},
		{name: "cat version", args: []string{"cat", "--version-id", id1, "s1/ver/k"}, check: func(t *testing.T, out string) {
			if out != "version one" {
				t.Errorf("cat --version-id = %q", out)
			}
		}},
		{name: "cat latest", args: []string{"cat", "s1/ver/k"}, check: func(t *testing.T, out string) {
			if out != "version two" {
				t.Errorf("cat = %q", out)
			}
		}},
		{name: "stat version", args: []string{"stat", "--json", "--version-id", id1, "s1/ver/k"}, want: []string{`"versionId":"` + id1 + `"`, `"size":11`}},
		{name: "cp version", args: []string{"cp", "--version-id", id1, "s1/ver/k", filepath.Join(dir, "old")}, check: func(t *testing.T, _ string) {
			if got := readFile(t, filepath.Join(dir, "old")); got != "version one" {
				t.Errorf("cp --version-id wrote %q", got)
			}
		}},
		{name: "rm adds delete marker", args: []string{"rm", "s1/ver/k"}, want: []string{"Removed `s1/ver/k`."},
			check: func(t *testing.T, _ string) {
				vs := e.versions(t, "ver", "k")
				if len(vs) != 3 || !vs[0].IsDeleteMarker || !vs[0].IsLatest {
					t.Errorf("versions after rm: %+v", vs)
				}
			}},
		{name: "cat after rm", args: []string{"cat", "s1/ver/k"}, wantErr: "NoSuchKey"},
		{name: "ls versions json shows marker", args: []string{"ls", "--versions", "--json", "s1/ver/k"}, check: func(t *testing.T, out string) {
			objs := jsonLines(t, out)
			if len(objs) != 3 || objs[0]["isDeleteMarker"] != true {
				t.Errorf("ls --versions --json = %v", objs)
			}
		}},
		{name: "rm one version", args: []string{"rm", "--version-id", id2, "s1/ver/k"}, want: []string{"(versionId=" + id2 + ")"},
			check: func(t *testing.T, _ string) {
				for _, v := range e.versions(t, "ver", "k") {
					if v.VersionID == id2 {
						t.Errorf("version %s still listed", id2)
					}
				}
			}},
		{name: "rm versions declined", args: []string{"rm", "--versions", "s1/ver/k"}, stdin: "n\n", wantErr: "aborted"},
		{name: "rm versions no terminal", args: []string{"rm", "--versions", "s1/ver/k"}, wantErr: "--yes"},
		{name: "rm versions confirmed", args: []string{"rm", "--versions", "s1/ver/k"}, stdin: "y\n",
			check: func(t *testing.T, out string) {
				if n := strings.Count(out, "Removed `s1/ver/k`"); n != 2 {
					t.Errorf("removed %d versions, want 2 (the marker and v1):\n%s", n, out)
				}
				if vs := e.versions(t, "ver", "k"); len(vs) != 0 {
					t.Errorf("versions left: %+v", vs)
				}
			}},
		{name: "rm recursive needs force", args: []string{"rm", "--recursive", "s1/ver/p/"}, wantErr: "--force"},
		{name: "rm recursive", args: []string{"rm", "-r", "--force", "--yes", "--json", "s1/ver/p/"}, check: func(t *testing.T, out string) {
			if objs := jsonLines(t, out); len(objs) != 3 || objs[0]["deleteMarker"] != true {
				t.Errorf("rm -r --json = %v", objs)
			}
			if keys := e.keys(t, "ver", "p/"); len(keys) != 0 {
				t.Errorf("keys left: %v", keys)
			}
		}},
		{name: "rb not empty", args: []string{"rb", "s1/ver"}, wantErr: "--force"},
		{name: "rb force declined", args: []string{"rb", "--force", "s1/ver"}, stdin: "no\n", wantErr: "aborted"},
		{name: "rb force", args: []string{"rb", "--force", "--yes", "--json", "s1/ver"}, want: []string{`"objectsRemoved":6`},
			check: func(t *testing.T, _ string) {
				if e.bucketExists(t, "ver") {
					t.Error("bucket ver still exists")
				}
			}},
	})
}

func TestBenchS3(t *testing.T) {
	e := newSiteEnv(t)
	before, err := e.c.ListBuckets(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	out := e.must("bench", "s3", "s1", "--size", "1KiB,3KiB", "--concurrency", "4", "--count", "20", "--json")
	var rep benchcmd.BenchS3Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bench --json output %q: %v", out, err)
	}
	// The DELETE phase removes the 20 written in one multi-object
	// request, one request at a time.
	want := []struct {
		op          string
		size        int64
		ops         int64
		concurrency int
	}{{"PUT", 1024, 20, 4}, {"GET", 1024, 20, 4}, {"LIST", 1024, 1, 4}, {"DELETE", 1024, 1, 1},
		{"PUT", 3072, 20, 4}, {"GET", 3072, 20, 4}, {"LIST", 3072, 1, 4}, {"DELETE", 3072, 1, 1}}
	if len(rep.Results) != len(want) {
		t.Fatalf("results = %+v", rep.Results)
	}
	for i, w := range want {
		r := rep.Results[i]
		if r.Op != w.op || r.Size != w.size || r.Ops != w.ops || r.Errors != 0 || r.Concurrency != w.concurrency ||
			r.OpsPerSec <= 0 || r.P50Ms <= 0 || r.P50Ms > r.P90Ms || r.P90Ms > r.P99Ms || r.P99Ms > r.MaxMs {
			t.Errorf("result %d = %+v", i, r)
		}
		// A listing or a deletion moves no object data: it counts keys
		// (one page of the 20 written, under --count).
		if keys := r.Op == "LIST" || r.Op == "DELETE"; keys != (r.MBPerSec == 0) || keys != (r.KeysPerSec > 0) {
			t.Errorf("result %d: %v MB/s, %v keys/s", i, r.MBPerSec, r.KeysPerSec)
		}
		// The site's server shares the test's process: only that its CPU
		// time was read is checked.
		if r.ServerCPUPerOp <= 0 || len(r.NodeCPUPerOp) != 1 || r.NodeCPUPerOp["s1"] != r.ServerCPUPerOp {
			t.Errorf("result %d: server CPU %vµs per op, by server %v", i, r.ServerCPUPerOp, r.NodeCPUPerOp)
		}
		if r.ServerPeakRSSMiB <= 1 {
			t.Errorf("result %d: server peak memory %v MiB", i, r.ServerPeakRSSMiB)
		}
	}
	after, err := e.c.ListBuckets(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("buckets after bench: %v, want the bench bucket removed", after)
	}

	// An existing bucket is used and kept; with --keep so are the objects.
	e.must("mb", "s1/perf")
	out = e.must("bench", "s3", "s1", "--bucket", "perf", "--size", "100B", "--concurrency", "2", "--count", "5", "--keep")
	if !strings.Contains(out, "OPS/S") || !strings.Contains(out, "PUT") || !strings.Contains(out, "GET") ||
		!strings.Contains(out, "LIST") || !strings.Contains(out, "keys listed per second") {
		t.Errorf("bench table:\n%s", out)
	}
	if keys := e.keys(t, "perf", "twinlake-bench/"); len(keys) != 5 {
		t.Errorf("kept %d objects, want 5: %v", len(keys), keys)
	}
	// Without --keep an existing bucket stays but the objects go.
	out = e.must("bench", "s3", "s1", "--bucket", "perf", "--size", "100B", "--concurrency", "2", "--duration", "200ms")
	if !strings.Contains(out, "DELETE") || !strings.Contains(out, "keys deleted per second") {
		t.Errorf("bench table:\n%s", out)
	}
	if keys := e.keys(t, "perf", "twinlake-bench/"); len(keys) != 5 {
		t.Errorf("bench without --keep left %d objects, want only the 5 kept before", len(keys))
	}
	if !e.bucketExists(t, "perf") {
		t.Error("bench removed a bucket it did not create")
	}

	for _, bad := range [][]string{
		{"bench", "s3", "s1", "--size", "4XB", "--count", "1"},
		{"bench", "s3", "s1", "--count", "1", "--duration", "1s"},
		{"bench", "s3", "s1", "--concurrency", "0", "--count", "1"},
		{"bench", "s3", "nosuch", "--count", "1"},
	} {
		if _, err := e.run(bad...); err == nil {
			t.Errorf("twinlake %s succeeded", strings.Join(bad, " "))
		}
	}
}
