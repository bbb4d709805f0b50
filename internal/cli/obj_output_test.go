package cli

import (
	"strings"
	"testing"
	"unicode"
)

// checkJSONStyle asserts every line of out is a JSON object with a
// "status" of success or error and camelCase keys all the way down, and
// returns the decoded lines.
func checkJSONStyle(t *testing.T, out string) []map[string]any {
	t.Helper()
	objs := jsonLines(t, out)
	if len(objs) == 0 {
		t.Fatalf("no JSON lines in %q", out)
	}
	for _, o := range objs {
		if s := o["status"]; s != "success" && s != "error" {
			t.Errorf("line %v: status %v, want success or error", o, s)
		}
		checkCamel(t, o)
	}
	return objs
}

func checkCamel(t *testing.T, v any) {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	for k, sub := range m {
		if k == "" || strings.ContainsAny(k, "_- ") || unicode.IsUpper(rune(k[0])) {
			t.Errorf("key %q is not camelCase", k)
		}
		if k != "tagset" { // user-chosen tag keys
			checkCamel(t, sub)
		}
	}
}
