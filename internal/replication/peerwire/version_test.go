package peerwire

import (
	"errors"
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		h    string
		want int
		ok   bool
	}{
		{"", 1, true}, {"1", 1, true}, {" 2 ", 2, true}, {"99", 99, true},
		{"0", 0, false}, {"-1", 0, false}, {"two", 0, false}, {"2.0", 0, false},
	} {
		got, err := ParseVersion(tc.h)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseVersion(%q) = %d, %v; want %d, ok %v", tc.h, got, err, tc.want, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrIncompatible) {
			t.Errorf("ParseVersion(%q): %v is not ErrIncompatible", tc.h, err)
		}
	}
}

// TestCheck is the version rule: a site serves callers of MinCompatible to
// Version, and accepts answers from servers of MinCompatible or newer (a
// newer server that answered serves this site's version).
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		remote             int
		asServer, asCaller bool // accepted
	}{
		{MinCompatible - 1, false, false},
		{MinCompatible, true, true},
		{Version, true, true},
		{Version + 1, false, true},
		{99, false, true},
	} {
		if err := CheckCaller(tc.remote); (err == nil) != tc.asServer {
			t.Errorf("CheckCaller(%d) = %v, want accepted %v", tc.remote, err, tc.asServer)
		}
		if err := CheckServer(tc.remote); (err == nil) != tc.asCaller {
			t.Errorf("CheckServer(%d) = %v, want accepted %v", tc.remote, err, tc.asCaller)
		}
	}
}

func TestIncompatibleErrorNamesBothVersions(t *testing.T) {
	err := CheckCaller(99)
	if !errors.Is(err, ErrIncompatible) {
		t.Fatalf("%v is not ErrIncompatible", err)
	}
	for _, want := range []string{"calling site speaks version 99", "called site version 2", "accepts versions 1 to 2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
}

func TestSpeak(t *testing.T) {
	for remote, want := range map[int]int{0: Version, 1: 1, Version: Version, Version + 1: Version, 99: Version} {
		if got := Speak(remote); got != want {
			t.Errorf("Speak(%d) = %d, want %d", remote, got, want)
		}
	}
}
