package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// bench erasure codes in memory and reports every phase of each layout,
// with and without SIMD, as rows that name the layout.
func TestBenchErasure(t *testing.T) {
	e := newCLIEnv(t)
	out := e.must("bench", "erasure", "--json", "--nodes", "1,4", "--size", "100KiB", "--block", "16KiB", "--duration", "50ms", "--no-simd")
	var rep struct {
		SIMD    []string `json:"simd"`
		Results []struct {
			Op       string  `json:"op"`
			Ops      int64   `json:"ops"`
			Errors   int64   `json:"errors"`
			MBPerSec float64 `json:"mb_per_sec"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	var ops []string
	for _, r := range rep.Results {
		if r.Ops == 0 || r.Errors != 0 || r.MBPerSec <= 0 {
			t.Errorf("row %+v", r)
		}
		ops = append(ops, r.Op)
	}
	want := "encode 1+0,decode 1+0,encode 1+0 nosimd,decode 1+0 nosimd," +
		"encode 2+2,decode 2+2,decode-degraded 2+2,heal 2+2,encode 2+2 nosimd,decode 2+2 nosimd,decode-degraded 2+2 nosimd,heal 2+2 nosimd"
	if strings.Join(ops, ",") != want {
		t.Fatalf("rows %v", ops)
	}
	if len(rep.SIMD) == 0 {
		t.Fatal("no SIMD report")
	}
	for _, bad := range [][]string{{"--nodes", "17"}, {"--nodes", "x"}, {"--block", "1KiB"}, {"--size", "0"}} {
		if _, err := e.run(append([]string{"bench", "erasure"}, bad...)...); err == nil {
			t.Errorf("bench erasure %v accepted", bad)
		}
	}
}
