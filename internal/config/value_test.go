package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseValue(t *testing.T) {
	boolKey := Key{Name: "b", Kind: KindBool}
	enumKey := Key{Name: "e", Kind: KindEnum, Values: []string{"strict", "eventual"}}
	durKey := Key{Name: "d", Kind: KindDuration, MinDur: time.Millisecond, MaxDur: 2 * time.Hour}
	intKey := Key{Name: "i", Kind: KindInt, Min: 1, Max: 100}
	for _, tc := range []struct {
		key  Key
		in   string
		want string // canonical text; "" means invalid
		dur  time.Duration
		n    int64
		on   bool
	}{
		{key: boolKey, in: "on", want: "on", on: true},
		{key: boolKey, in: " OFF ", want: "off"},
		{key: boolKey, in: "true"},
		{key: boolKey, in: ""},
		{key: enumKey, in: "Eventual", want: "eventual"},
		{key: enumKey, in: "strictly"},
		{key: durKey, in: "500ms", want: "500ms", dur: 500 * time.Millisecond},
		{key: durKey, in: "1h30m", want: "1h30m", dur: 90 * time.Minute},
		{key: durKey, in: "0s"},
		{key: durKey, in: "-1s"},
		{key: durKey, in: "10"},
		{key: durKey, in: "2h", want: "2h", dur: 2 * time.Hour},
		{key: durKey, in: "2h1s"},
		{key: durKey, in: "999us"},
		{key: intKey, in: "007", want: "7", n: 7},
		{key: intKey, in: "+3", want: "3", n: 3},
		{key: intKey, in: "0"},
		{key: intKey, in: "1.5"},
		{key: intKey, in: "99999999999999999999"},
		{key: intKey, in: "100", want: "100", n: 100},
		{key: intKey, in: "101"},
		{key: Key{Name: "x"}, in: "anything"},
	} {
		v, err := tc.key.parse(tc.in)
		if tc.want == "" {
			if !errors.Is(err, ErrInvalidValue) {
				t.Errorf("%s %q: err = %v, want ErrInvalidValue", tc.key.Name, tc.in, err)
			}
			continue
		}
		if err != nil || v.text != tc.want || v.dur != tc.dur || v.n != tc.n || v.on != tc.on {
			t.Errorf("%s %q = %+v, %v; want %q", tc.key.Name, tc.in, v, err, tc.want)
		}
	}
}

func TestParseKV(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // sorted k=v joined by ','; or the error's text fragments
		err  []string
	}{
		{args: []string{"replica_catalog=on"}, want: "replica_catalog=on"},
		{args: []string{"A=1", "b=x=y", "c="}, want: "a=1,b=x=y,c="},
		{args: nil, want: ""},
		{args: []string{"noequals", "=v", "sp ace=1", "k=1", "K=2"},
			err: []string{`"noequals"`, `"=v"`, `"sp ace=1"`, "given twice"}},
	} {
		kv, err := ParseKV(tc.args)
		if tc.err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, ErrSyntax) || len(ve.Problems) != len(tc.err) {
				t.Errorf("ParseKV(%q) err = %v", tc.args, err)
				continue
			}
			for _, frag := range tc.err {
				if !strings.Contains(err.Error(), frag) {
					t.Errorf("ParseKV(%q) err %v lacks %q", tc.args, err, frag)
				}
			}
			continue
		}
		if err != nil || joinKV(kv) != tc.want {
			t.Errorf("ParseKV(%q) = %q, %v; want %q", tc.args, joinKV(kv), err, tc.want)
		}
	}
}

func joinKV(kv map[string]string) string {
	var parts []string
	for k, v := range kv {
		parts = append(parts, k+"="+v)
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// FuzzParseKV checks that ParseKV and every key's value parser never panic,
// that what ParseKV accepts round-trips, and that canonical values are fixed
// points of their parser.
func FuzzParseKV(f *testing.F) {
	for _, seed := range []string{
		"replica_catalog=on", "replica_catalog_scan_interval=250ms", "workers=+16", "k=", "=v", "a=b=c",
		"max_retries=-1", "x", "replica_catalog_consistency=EVENTUAL", "retry_max_delay=1h2m3.5s",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		kv, err := ParseKV([]string{arg})
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("ParseKV(%q) error not ErrSyntax: %v", arg, err)
			}
			return
		}
		if len(kv) != 1 {
			t.Fatalf("ParseKV(%q) = %v", arg, kv)
		}
		for k, v := range kv {
			again, err := ParseKV([]string{k + "=" + v})
			if err != nil || again[k] != v {
				t.Fatalf("round trip of %q: %v %v", arg, again, err)
			}
			for _, key := range Keys() {
				got, err := key.parse(v)
				if err != nil {
					if !errors.Is(err, ErrInvalidValue) {
						t.Fatalf("%s.parse(%q): %v", key.Name, v, err)
					}
					continue
				}
				if again, err := key.parse(got.text); err != nil || again != got {
					t.Fatalf("%s: canonical %q of %q does not parse to itself: %+v %v", key.Name, got.text, v, again, err)
				}
			}
		}
	})
}

// TestEverySettingIsBounded: every numeric setting has a range that
// contains its default.
func TestEverySettingIsBounded(t *testing.T) {
	for _, k := range Keys() {
		switch k.Kind {
		case KindInt:
			if k.Max <= k.Min {
				t.Errorf("%s %s: no upper bound", k.Subsys, k.Name)
			}
		case KindDuration:
			if k.MinDur <= 0 || k.MaxDur <= k.MinDur {
				t.Errorf("%s %s: bounds %v..%v", k.Subsys, k.Name, k.MinDur, k.MaxDur)
			}
		}
		if _, err := k.parse(k.Default); err != nil {
			t.Errorf("%s %s: default %q out of its own range: %v", k.Subsys, k.Name, k.Default, err)
		}
	}
}
