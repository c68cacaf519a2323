package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"streamd/feed"
)

// TestCLISum creates a pair stream and asks its correlated sums from the
// command line: each answer word for word (ten pairs are answered
// exactly), and the command line's mistakes as one line with status 2 or
// the daemon's refusals with status 1.
func TestCLISum(t *testing.T) {
	d, _ := startDaemon(t, nil)
	addr := d.GRPCAddr()
	if code, stdout, stderr := cliRun("query", "--addr", addr, "create", "--pairs", "lat"); code != 0 || stdout != "ok\n" {
		t.Fatalf("create --pairs: status %d\n%s%s", code, stdout, stderr)
	}
	// x = 1 … 10 (latency), y = 100·x, the last one −50 (a refund, say).
	x := []float64{3, 1, 2, 5, 4, 8, 6, 7, 10, 9}
	y := []float64{300, 100, 200, 500, 400, 800, 600, 700, -50, 900}
	if err := d.Pipeline().AcceptPairs(context.Background(), feed.Local, "lat", x, y); err != nil {
		t.Fatal(err)
	}
	head := "pairs 10, x from 1 to 10, Σy 4450, Σ|y| 4550, ε 0.001\n"
	widths := "guaranteed widths: count 0.01 (ε·pairs), Σy 4.55 (ε·Σ|y|)\n"
	for _, tc := range []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{args: []string{"sum", "lat", "--at", "5"}, stdout: "threshold 5\n" + head +
			"  pairs  count min  count max  Σy min  Σy max\n" +
			"  x ≤ t          5          5    1500    1500\n" +
			"  x ≥ t          6          6    3450    3450\n" + widths},
		{args: []string{"sum", "lat", "--quantile", "0.9", "--above"}, stdout: "threshold 9, of rank 9 to 9 among x\n" + head +
			"  pairs  count min  count max  Σy min  Σy max\n" +
			"  x ≥ t          2          2     850     850\n" + widths},
		{args: []string{"sum", "lat", "--mean", "--factor", "2", "--below"}, stdout: "threshold 11, from 5.5 of rank 5 to 5 among x\n" + head +
			"  pairs  count min  count max  Σy min  Σy max\n" +
			"  x ≤ t         10         10    4450    4450\n" + widths},
		{args: []string{"sum", "lat", "--min", "--above", "--below"}, stdout: "threshold 1, of rank 1 to 1 among x\n" + head +
			"  pairs  count min  count max  Σy min  Σy max\n" +
			"  x ≤ t          1          1     100     100\n" +
			"  x ≥ t         10         10    4450    4450\n" + widths},
		{args: []string{"sum", "lat"}, code: 2, stderr: "streamd: sum: want one threshold: --at T, --quantile φ, --min, --max or --mean\n"},
		{args: []string{"sum", "lat", "--min", "--max"}, code: 2, stderr: "streamd: sum: want one threshold: --at T, --quantile φ, --min, --max or --mean\n"},
		{args: []string{"sum", "lat", "--quantile", "2"}, code: 1, stderr: "streamd: correlated sum: phi 2 outside [0, 1]\n"},
		{args: []string{"sum", "lat", "--max", "--last", "5"}, code: 1, stderr: "streamd: correlated sum: last_n and last are not answered: correlated sums cover all history\n"},
		{args: []string{"sum", "nosuch", "--max"}, code: 1, stderr: "streamd: correlated sum: stream not found: \"nosuch\"\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := cliRun(append([]string{"query", "--addr", addr}, tc.args...)...)
			if code != tc.code || stdout != tc.stdout || stderr != tc.stderr {
				t.Errorf("status %d, want %d\nstdout\n%s\nwant\n%s\nstderr %q, want %q", code, tc.code, stdout, tc.stdout, stderr, tc.stderr)
			}
		})
	}
	code, stdout, _ := cliRun("query", "--addr", addr, "stats", "lat")
	if code != 0 || !regexp.MustCompile(`kind +pairs\n +count +10\n +min +1\n +max +10\n`).MatchString(stdout) {
		t.Errorf("stats of a pair stream: status %d\n%s", code, stdout)
	}
}
