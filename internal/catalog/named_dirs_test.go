package catalog

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestNamesAnyAgreesWithContains: for metadata-like JSON and needles
// "//<warehouse>/<dir>/", checking the directories dirsIn keeps gives the
// same answer as searching the JSON, including overlapping and nested
// locations, locations of other warehouses and locations ending at a
// quote.
func TestNamesAnyAgreesWithContains(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	parts := []string{"lake", "lak", "t", "t1", "data", "metadata", "a", "b", "", "x.json", "//lake/", "\""}
	word := func(n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteString(parts[rng.IntN(len(parts))])
			if rng.IntN(2) == 0 {
				sb.WriteByte('/')
			}
		}
		return sb.String()
	}
	found := 0
	for range 5000 {
		var doc strings.Builder
		doc.WriteString(`{"location":"s3://lake/`)
		for range rng.IntN(6) {
			doc.WriteString(word(rng.IntN(5)))
			doc.WriteString(`","m":"s3:`)
			doc.WriteString(word(rng.IntN(4)))
		}
		doc.WriteString(`"}`)
		data := []byte(doc.String())
		needle := []byte("//lake/" + strings.ReplaceAll(word(1+rng.IntN(3)), `"`, "") + "/")
		if strings.HasSuffix(string(needle), "//") {
			needle = needle[:len(needle)-1]
		}
		want := bytes.Contains(data, needle)
		if want {
			found++
		}
		if got := namesAny(dirsIn(data, "//lake/"), [][]byte{needle}); got != want {
			t.Fatalf("%s in %s: %v, want %v (dirs %q)", needle, data, got, want, dirsIn(data, "//lake/"))
		}
	}
	if found < 200 || found > 4800 {
		t.Fatalf("%d of 5000 needles found: the cases do not cover both answers", found)
	}
}
