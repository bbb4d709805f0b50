package bench

import (
	"bytes"
	"testing"
)

func TestBenchParseSize(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{"100", 100, false},
		{"1B", 1, false},
		{"4KiB", 4096, false},
		{"4k", 4096, false},
		{"4KB", 4000, false},
		{"64MiB", 64 << 20, false},
		{"64mib", 64 << 20, false},
		{" 2 GiB ", 2 << 30, false},
		{"1.5MiB", 3 << 19, false},
		{"1GB", 1e9, false},
		{"", 0, true},
		{"KiB", 0, true},
		{"0", 0, true},
		{"0.1B", 0, true},
		{"4XB", 0, true},
		{"-4KiB", 0, true},
		{"1.2.3KiB", 0, true},
		{"99999999TiB", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSize(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("ParseSize(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestBenchParseSizes(t *testing.T) {
	got, err := ParseSizes("4KiB, 64MiB,")
	if err != nil || len(got) != 2 || got[0] != 4096 || got[1] != 64<<20 {
		t.Errorf("ParseSizes = %v, %v", got, err)
	}
	if _, err := ParseSizes(""); err == nil {
		t.Error("ParseSizes(\"\") succeeded")
	}
	if _, err := ParseSizes("1x,2y"); err == nil || !bytes.Contains([]byte(err.Error()), []byte("2y")) {
		t.Errorf("ParseSizes(1x,2y) = %v: want both bad sizes reported", err)
	}
}

func TestBenchFormatSize(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{
		{1, "1B"},
		{1000, "1000B"},
		{1024, "1KiB"},
		{4096, "4KiB"},
		{1536, "1.5KiB"},
		{64 << 20, "64MiB"},
		{3 << 19, "1536KiB"},
		{1<<20 + 1, "1.0MiB"},
		{5 << 30, "5GiB"},
	}
	for _, tc := range tests {
		if got := FormatSize(tc.in); got != tc.want {
			t.Errorf("FormatSize(%d) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestBenchPayload(t *testing.T) {
	a, b, c := Payload(1000, 1), Payload(1000, 1), Payload(1000, 2)
	if len(a) != 1000 || !bytes.Equal(a, b) || bytes.Equal(a, c) {
		t.Error("Payload: want 1000 bytes, the same for a seed and different across seeds")
	}
}
