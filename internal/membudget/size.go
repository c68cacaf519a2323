package membudget

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// units are the binary size units, largest first. The decimal spellings
// (KB, MB, GB, TB) mean the same powers of 1024, as they do for memory in
// most tools.
var units = []struct {
	names []string
	size  int64
}{
	{[]string{"TiB", "TB", "T"}, 1 << 40},
	{[]string{"GiB", "GB", "G"}, 1 << 30},
	{[]string{"MiB", "MB", "M"}, 1 << 20},
	{[]string{"KiB", "KB", "K"}, 1 << 10},
	{[]string{"B", ""}, 1},
}

// ParseSize parses a size in bytes such as "512MiB", "1.5 GiB", "4G" or
// "1048576". Units are powers of 1024, and case-insensitive.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	for _, u := range units {
		for _, name := range u.names {
			if len(t) < len(name) || !strings.EqualFold(t[len(t)-len(name):], name) {
				continue
			}
			num := strings.TrimSpace(t[:len(t)-len(name)])
			f, err := strconv.ParseFloat(num, 64)
			if err != nil || !(f >= 0) || math.IsInf(f, 0) || f*float64(u.size) > math.MaxInt64/2 {
				return 0, fmt.Errorf("parse size %q: want a number of bytes with an optional unit (KiB, MiB, GiB, TiB)", s)
			}
			return int64(f * float64(u.size)), nil
		}
	}
	return 0, fmt.Errorf("parse size %q: want a number of bytes with an optional unit (KiB, MiB, GiB, TiB)", s)
}

// Size formats n bytes with a binary unit and about three significant
// digits, such as "256 MiB", "1.5 GiB" or "1023 KiB".
func Size(n int64) string {
	for _, u := range units {
		if u.size > 1 && (n >= u.size || -n >= u.size) {
			v := float64(n) / float64(u.size)
			prec := 2
			if math.Abs(v) >= 100 {
				prec = 0
			} else if math.Abs(v) >= 10 {
				prec = 1
			}
			num := strconv.FormatFloat(v, 'f', prec, 64)
			if prec > 0 {
				num = strings.TrimRight(strings.TrimRight(num, "0"), ".")
			}
			return num + " " + u.names[0]
		}
	}
	return strconv.FormatInt(n, 10) + " B"
}
