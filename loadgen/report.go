package loadgen

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"streamd/feed"
)

// IsTerminal reports whether f is a terminal (a character device).
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// ProgressPrinter writes progress reports to W: on a terminal, one line
// rewritten in place; otherwise one line per report.
type ProgressPrinter struct {
	W        io.Writer
	Terminal bool
	width    int  // of the last line written in place
	complete bool // a report of every value sent has been written
}

// Print writes p. It is meant as Runner.Progress. Once a report says that
// every value of a known total was sent, later ones are not written again:
// the last tick and the final report often say the same.
func (pp *ProgressPrinter) Print(p Progress) {
	if p.Total > 0 && p.Sent >= p.Total {
		if pp.complete {
			return
		}
		pp.complete = true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "sent %s values", count(p.Sent))
	if p.Total > 0 {
		fmt.Fprintf(&b, " of %s (%.1f%%)", count(p.Total), 100*float64(p.Sent)/float64(p.Total))
	}
	fmt.Fprintf(&b, ", %s values/s, elapsed %s", count(int64(p.Rate())), p.Elapsed.Round(time.Second))
	if eta, ok := p.ETA(); ok {
		fmt.Fprintf(&b, ", ETA %s", eta.Round(time.Second))
	}
	line := b.String()
	if !pp.Terminal {
		fmt.Fprintln(pp.W, line)
		return
	}
	pad := max(pp.width-len(line), 0)
	pp.width = len(line)
	fmt.Fprintf(pp.W, "\r%s%s", line, strings.Repeat(" ", pad))
}

// Done ends the line written in place, if any.
func (pp *ProgressPrinter) Done() {
	if pp.Terminal && pp.width > 0 {
		fmt.Fprintln(pp.W)
		pp.width = 0
	}
}

// count formats n with thousands separators.
func count(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// WriteSummary writes the summary of a run to w: the values sent and
// skipped per stream and in all, the receiver's counts when it reports
// them, and the rate achieved.
func (r *Result) WriteSummary(w io.Writer) error {
	rows := [][]string{{"stream", "sent", "skipped", ""}}
	for _, name := range r.Names() {
		st := r.Streams[name]
		var skipped int64
		for _, n := range st.Skipped {
			skipped += n
		}
		if name == "" {
			name = "(unnamed)"
		}
		rows = append(rows, []string{name, count(st.Sent), count(skipped), FormatReasons(st.Skipped)})
	}
	var width [3]int
	for _, row := range rows {
		for i := range width {
			width[i] = max(width[i], len(row[i]))
		}
	}
	for _, row := range rows {
		line := fmt.Sprintf("%-*s  %*s  %*s  %s", width[0], row[0], width[1], row[1], width[2], row[2], row[3])
		if _, err := fmt.Fprintln(w, strings.TrimRight(line, " ")); err != nil {
			return err
		}
	}
	return r.WriteTotals(w)
}

// WriteTotals writes the last line of the summary to w: the values sent
// and skipped in all, the receiver's counts when it reports them, and the
// rate achieved.
func (r *Result) WriteTotals(w io.Writer) error {
	fmt.Fprintf(w, "sent %s values in %s: %s values/s", count(r.Sent), r.Elapsed.Round(time.Millisecond), count(int64(r.Rate())))
	if r.Skipped > 0 {
		fmt.Fprintf(w, "; skipped %s at the source", count(r.Skipped))
	}
	if r.Ack.Known {
		fmt.Fprintf(w, "; the daemon accepted %s, rejected %s", count(int64(r.Ack.Accepted)), count(int64(r.Ack.Rejected)))
	}
	_, err := fmt.Fprintln(w)
	return err
}

// FormatReasons formats counts of rejects as "malformed=3 nan=1", sorted
// by reason, leaving out zeros.
func FormatReasons(m map[feed.Reason]int64) string {
	var parts []string
	for r, n := range m {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", r, n))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}
