package testsite

import "testing"

func TestRaceReport(t *testing.T) {
	race := "WARNING: DATA RACE\nWrite at 0x00c000123 by goroutine 7:\n  main.f()\n"
	for _, tc := range []struct {
		name, log, want string
	}{
		{"none", "time=1 level=WARN msg=slow\n", ""},
		{"one", "level=WARN msg=x\n==================\n" + race + "==================\nlevel=INFO msg=y\n", race},
		{"cut off by a kill", "==================\n" + race, race},
		{"the first of two", "==================\n" + race + "==================\n==================\nWARNING: DATA RACE\nRead at 0x1\n==================\n", race},
	} {
		if got := raceReport(tc.log); got != tc.want {
			t.Errorf("%s: raceReport = %q, want %q", tc.name, got, tc.want)
		}
	}
}
