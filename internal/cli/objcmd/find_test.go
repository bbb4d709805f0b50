package objcmd

import (
	"testing"
	"time"
)

func TestWildcardAndAge(t *testing.T) {
	for _, c := range []struct {
		p, s string
		want bool
	}{{"*.jpg", "a.jpg", true}, {"*.jpg", "a.jpeg", false}, {"a?c", "abc", true}, {"*/2024/*", "x/2024/y/z", true},
		{"", "", true}, {"*", "", true}, {"a*b*c", "aXXbYYc", true}, {"a*b*c", "aXXbYY", false}} {
		if got := wildcardMatch(c.p, c.s); got != c.want {
			t.Errorf("wildcardMatch(%q, %q) = %v", c.p, c.s, got)
		}
	}
	for s, want := range map[string]time.Duration{"7d": 7 * 24 * time.Hour, "1w2d": 9 * 24 * time.Hour, "36h": 36 * time.Hour, "1d10h30s": 34*time.Hour + 30*time.Second} {
		if got, err := parseAge(s); err != nil || got != want {
			t.Errorf("parseAge(%q) = %v, %v", s, got, err)
		}
	}
	for _, bad := range []string{"", "d", "7x", "1.2.3h"} {
		if _, err := parseAge(bad); err == nil {
			t.Errorf("parseAge(%q) succeeded", bad)
		}
	}
}
