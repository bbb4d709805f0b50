package bench

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sizeUnits maps a unit suffix (lower case) to its multiplier. IEC units
// are powers of 1024, SI units powers of 1000; a bare number is bytes.
var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kib": 1 << 10, "kb": 1000,
	"m": 1 << 20, "mib": 1 << 20, "mb": 1000 * 1000,
	"g": 1 << 30, "gib": 1 << 30, "gb": 1000 * 1000 * 1000,
	"t": 1 << 40, "tib": 1 << 40, "tb": 1000 * 1000 * 1000 * 1000,
}

// ParseSize parses a byte size such as "4KiB", "64MiB", "1.5GB" or "100".
// Fractions are allowed; the result is rounded down to whole bytes and must
// be at least 1.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(t)
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := sizeUnits[unit]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q (use B, KiB, MiB, GiB, KB, MB, GB)", s, t[i:])
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" {
		return 0, fmt.Errorf("size %q: want a number and a unit, like 4KiB", s)
	}
	bytes := v * float64(mult)
	if bytes >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	if bytes < 1 {
		return 0, fmt.Errorf("size %q: want at least 1 byte", s)
	}
	return int64(bytes), nil
}

// ParseSizes parses a comma-separated list of sizes, reporting every bad one.
func ParseSizes(list string) ([]int64, error) {
	var sizes []int64
	var errs []error
	for f := range strings.SplitSeq(list, ",") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		n, err := ParseSize(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sizes = append(sizes, n)
	}
	if len(sizes) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("sizes %q: want at least one size", list))
	}
	return sizes, errors.Join(errs...)
}

// FormatSize renders n bytes in the largest IEC unit that divides it
// exactly ("4KiB", "64MiB"), else with one decimal ("1.5MiB"), else bytes.
func FormatSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for i < len(units)-1 && n >= 1<<(10*(i+1)) && n%(1<<(10*(i+1))) == 0 {
		i++
	}
	if i > 0 || n < 1024 {
		return fmt.Sprintf("%d%s", n>>(10*i), units[i])
	}
	for i < len(units)-1 && n >= 1<<(10*(i+1)) {
		i++
	}
	return fmt.Sprintf("%.1f%s", float64(n)/float64(int64(1)<<(10*i)), units[i])
}
