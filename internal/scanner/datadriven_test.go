package scanner

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A tiny reader of datadriven test files, in the style of
// cockroachdb/datadriven: each case is a command line (a command, then
// arguments key=value, key=a,b, or bare words), an optional input block,
// a line "----", and the expected output up to the next blank line. Lines
// starting with # between cases are comments. go test -rewrite writes the
// actual output back into the files.

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata files")

// ddCase is one case of a datadriven file.
type ddCase struct {
	pos   string // file:line, for failures
	cmd   string
	args  []ddArg
	input string
	want  string
}

// ddArg is one argument: key, and its values (key=a,b); a bare word has
// none.
type ddArg struct {
	key  string
	vals []string
}

// arg returns the values of the argument key.
func (c *ddCase) arg(key string) ([]string, bool) {
	for _, a := range c.args {
		if a.key == key {
			return a.vals, true
		}
	}
	return nil, false
}

// val returns the single value of key, or def.
func (c *ddCase) val(key, def string) string {
	if v, ok := c.arg(key); ok && len(v) > 0 {
		return v[0]
	}
	return def
}

// runDataDriven runs every case of path through run, which returns the
// actual output.
func runDataDriven(t *testing.T, path string, run func(t *testing.T, c *ddCase) string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	var out strings.Builder
	for i := 0; i < len(lines); {
		line := lines[i]
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			out.WriteString(line + "\n")
			i++
			continue
		}
		c := &ddCase{pos: filepath.Base(path) + ":" + strconv.Itoa(i+1)}
		c.cmd, c.args = parseDirective(line)
		out.WriteString(line + "\n")
		i++
		var input []string
		for ; i < len(lines) && lines[i] != "----"; i++ {
			input = append(input, lines[i])
			out.WriteString(lines[i] + "\n")
		}
		if i == len(lines) {
			t.Fatalf("%s: %q has no ---- line", c.pos, line)
		}
		c.input = strings.Join(input, "\n")
		out.WriteString("----\n")
		i++
		var want []string
		for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
			want = append(want, lines[i])
		}
		c.want = strings.Join(want, "\n")
		got := strings.TrimRight(run(t, c), "\n")
		if got != "" {
			out.WriteString(got + "\n")
		}
		if got != c.want && !*rewrite {
			t.Errorf("%s: %s\n got:\n%s\nwant:\n%s", c.pos, line, got, c.want)
		}
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(strings.TrimSuffix(out.String(), "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func parseDirective(line string) (string, []ddArg) {
	fields := strings.Fields(line)
	var args []ddArg
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		a := ddArg{key: k}
		if ok {
			a.vals = strings.Split(v, ",")
			if v == "" {
				a.vals = []string{}
			}
		}
		args = append(args, a)
	}
	return fields[0], args
}
