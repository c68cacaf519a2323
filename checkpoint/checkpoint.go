// Package checkpoint keeps a daemon's checkpoints in a directory: each one
// is written atomically (a temporary file, fsync, rename, fsync of the
// directory) and carries a format version and a CRC-32C of its content.
// Latest returns the newest valid one; a corrupt or truncated checkpoint is
// reported and the previous one used. Lock locks the directory for one
// process at a time.
//
// A checkpoint's content is written as a stream: the caller's content
// function writes it to the file through a buffer as it makes it, and the
// checksum is computed on the way and written after it, so a checkpoint is
// never held whole in memory to be written. The file's layout is the
// envelope of streamd/internal/codec, magic "CKPT", version 1: magic,
// version, content, then the CRC-32C (Castagnoli) of all that precedes it,
// little-endian.
//
// Numbering: a new checkpoint is numbered above every checkpoint file in
// the directory, valid or not, renamed aside or not, so the newest valid
// checkpoint is always the last one written. A file renamed aside numbered
// 2^64−1 (junk, never read again) does not count, so that the numbers do
// not wrap around; one that is not set aside (it cannot be read) leaves no
// number above it, and Write fails, naming it. Directories are not
// checkpoint files, whatever their names.
//
// Retention: after each write the store keeps the newest two checkpoints it
// knows to be valid — those it wrote, and the one Latest or Older returned
// last, which its caller restored from — and removes the checkpoint files
// numbered below both. A checkpoint restored from thus stays until two
// newer ones are on disk, and a file that is not a valid checkpoint never
// takes the place of one.
//
// Invalid checkpoints: a checkpoint file that Latest or Older finds
// corrupt, truncated or of another version, and one whose content its
// caller could not decode (the seq it passes to Older), is renamed aside to
// its name with ".invalid" appended (checkpoint-0000000000000042.bin.invalid)
// and logged. The store never reads or counts as retained a renamed file
// again. It keeps the newest one for the operator to inspect and removes
// older ones as it writes, so that checkpoints damaged again and again do
// not fill the disk. A file that cannot be read at all (a permission or I/O
// error), and one with a good checksum but a version this program does not
// know (written by a newer one), is no damage: Latest and Older fail with
// its error rather than fall back past it, since it may hold newer state.
// No checkpoint file is removed before two are known to be valid.
//
// Temporary files: a writer killed in the middle of a checkpoint leaves its
// temporary file (.checkpoint-*.tmp) behind. Write removes such files before
// it writes, so that they cannot fill the disk across crashes: the
// directory must have one writer at a time (see Lock).
//
// Incremental checkpoints: a checkpoint is a base, the whole state, or a
// delta, what changed since the checkpoint it follows (its predecessor,
// whose number it carries). A base and the deltas written after it, each
// following the one before, form a chain; restoring one is restoring its
// base, then its deltas in order (RestoreChain). What a delta holds is the
// caller's business: for streamd, the streams changed since the
// predecessor, whole, and the names of those deleted. WriteDelta writes a
// delta following the newest checkpoint written or restored (the head);
// DeltaDue says whether the next one should be a delta or a new base:
// after MaxDeltas deltas, or once the deltas since the base take more than
// DeltaFraction of the base's size, a new base compacts the chain, so that
// a restore reads at most a bounded multiple of the state. A delta is
// envelope version 2: magic, version, the predecessor's number as a
// uint64 little-endian, the content, then the CRC-32C; a base is version 1,
// as every checkpoint was before deltas, so older checkpoints read as
// bases.
//
// The consistent points of a chain are its base and each delta whose
// predecessors are all valid: a delta is never applied without every
// checkpoint before it in its chain. RestoreChain restores the newest valid
// base, then follows it with the newest valid delta following it, and so
// on, and stops at the first delta missing or damaged (set aside): the
// state restored is the last consistent point of the newest valid base's
// chain. Deltas after a damaged one are never restored (nothing follows
// them: the next checkpoint follows the point restored), and retention
// removes them with their chain. A damaged base falls back to the chain of
// the previous base.
//
// Retention with deltas: the newest two restore points known to be valid
// are kept with their whole chains, and so is the newest one of the chain
// before the newest point's, which a restore falls back to when the newest
// base is damaged: no file numbered at or above the oldest base of those
// points is removed, so a base that a kept delta needs is never removed.
//
// Scheduling: a Scheduler decides when a daemon checkpoints — every
// interval, and when asked — and keeps the outcome: a failed checkpoint
// degrades the daemon's health until one succeeds. What a checkpoint holds
// is the daemon's business.
package checkpoint

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"streamd/internal/codec"
)

// ErrNone is returned by Latest when the directory holds no valid
// checkpoint.
var ErrNone = errors.New("no checkpoint")

const (
	magic   = "CKPT"
	version = 1
	prefix  = "checkpoint-"
	suffix  = ".bin"
	invalid = ".invalid"
	keep    = 2

	// keepInvalid is how many files renamed aside are kept.
	keepInvalid = 1

	// The names of temporary files, as for os.CreateTemp.
	tmpPattern = ".checkpoint-*.tmp"

	// bufferSize is the size of the writes to a checkpoint file.
	bufferSize = 1 << 20
)

// Store is a directory of checkpoints. Its methods are not safe for
// concurrent use.
type Store struct {
	Dir    string
	Logger *slog.Logger

	// MaxDeltas is how many deltas a chain holds before DeltaDue asks
	// for a new base; 0 means DefaultMaxDeltas.
	MaxDeltas int
	// DeltaFraction is how large the deltas of a chain grow, in all,
	// relative to its base, before DeltaDue asks for a new base; 0 means
	// DefaultDeltaFraction.
	DeltaFraction float64

	last uint64   // the highest number written
	good []uint64 // restore points known to be valid, oldest first
	// baseOf maps each of good to the base of its chain.
	baseOf map[uint64]uint64

	// The head: the newest restore point written or restored (0: none),
	// and its chain: its base's size, its deltas' count and total size.
	head, headBase uint64
	baseSize       int64
	deltas         int
	deltaSize      int64
}

// The envelope of a delta: version is a base's.
const (
	// deltaVersion is the envelope of a delta, whose predecessor's number
	// follows the version.
	deltaVersion = 2
	// deltaHeader is the length of a delta's header: magic, version, the
	// predecessor's number.
	deltaHeader = 4 + 1 + 8
)

// The defaults of Store.MaxDeltas and Store.DeltaFraction.
const (
	DefaultMaxDeltas     = 16
	DefaultDeltaFraction = 0.5
)

func (s *Store) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

func name(seq uint64) string { return fmt.Sprintf("%s%016d%s", prefix, seq, suffix) }

// Write writes a new checkpoint, durably, numbered above every checkpoint
// file in the directory, and returns its number. content writes the
// checkpoint's content to w, which is buffered and computes the checksum on
// the way: the content goes to disk as content makes it. Write then syncs
// the file, renames it into place and syncs the directory, and removes the
// checkpoints older than the newest two known to be valid (see the package
// comment). If content fails, nothing is left behind and its error is
// returned.
func (s *Store) Write(content func(w io.Writer) error) (uint64, error) {
	return s.write(content, false)
}

// WriteDelta writes a new checkpoint as Write does, a delta following the
// head: the newest checkpoint written or restored (see the package
// comment). content writes what changed since the head. It fails, writing
// nothing, when there is no head: a base must come first.
func (s *Store) WriteDelta(content func(w io.Writer) error) (uint64, error) {
	if s.head == 0 {
		return 0, errors.New("write checkpoint delta: no checkpoint to follow")
	}
	return s.write(content, true)
}

// DeltaDue reports whether the next checkpoint should be a delta
// (WriteDelta) rather than a base (Write): there is a head, the last write
// did not fail, and the head's chain has fewer than MaxDeltas deltas,
// which take no more than DeltaFraction of its base's size.
func (s *Store) DeltaDue() bool {
	maxDeltas := s.MaxDeltas
	if maxDeltas <= 0 {
		maxDeltas = DefaultMaxDeltas
	}
	return s.head != 0 && s.deltas < maxDeltas && float64(s.deltaSize) <= s.Fraction()*float64(s.baseSize)
}

// Fraction reports the DeltaFraction in force: DeltaFraction, or
// DefaultDeltaFraction when it is 0. A caller that bounds a chain by some
// other measure of its deltas (as the daemon does by streams) holds them
// to the same fraction of the base.
func (s *Store) Fraction() float64 {
	if s.DeltaFraction <= 0 {
		return DefaultDeltaFraction
	}
	return s.DeltaFraction
}

func (s *Store) write(content func(w io.Writer) error, delta bool) (seq uint64, err error) {
	defer func() {
		if err != nil {
			// A failed write may leave its file in place (one renamed but
			// not synced): the next checkpoint is a base, numbered above
			// it, so that no restore prefers it to newer state.
			s.head = 0
		}
	}()
	files, err := s.list()
	if err != nil {
		return 0, err
	}
	// Above every checkpoint file; but a file set aside at the top of the
	// range, which is never read again, must not wrap the numbers around
	// below the checkpoint restored: then above every other file.
	top := s.last
	for _, f := range files {
		if f.seq < math.MaxUint64 || !f.invalid {
			top = max(top, f.seq)
			break // files is newest first
		}
	}
	if top == math.MaxUint64 {
		return 0, fmt.Errorf("write checkpoint: no number above %s: remove it", name(top))
	}
	seq = top + 1
	s.removeTemps()
	tmp, err := os.CreateTemp(s.Dir, tmpPattern)
	if err != nil {
		return 0, fmt.Errorf("write checkpoint: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	var prev uint64
	if delta {
		prev = s.head
	}
	size, err := writeFile(tmp, content, delta, prev)
	if err != nil {
		tmp.Close()
		return 0, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return 0, fmt.Errorf("sync checkpoint: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return 0, fmt.Errorf("close checkpoint: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(s.Dir, name(seq))); err != nil {
		return 0, fmt.Errorf("rename checkpoint: %w", err)
	}
	if err := syncDir(s.Dir); err != nil {
		return 0, err
	}
	s.last = seq
	if delta {
		s.deltas++
		s.deltaSize += size
	} else {
		s.headBase, s.baseSize, s.deltas, s.deltaSize = seq, size, 0, 0
	}
	s.head = seq
	s.addGood(seq, s.headBase)
	if err := s.prune(append(files, file{seq: seq, name: name(seq)})); err != nil {
		// The checkpoint is on disk: an old file left behind is no failure
		// of it. The next write tries again.
		s.logger().Warn("remove old checkpoints", "err", err)
	}
	return seq, nil
}

// removeTemps removes the temporary files of writes that did not finish:
// with one writer, those of a writer that was killed.
func (s *Store) removeTemps() {
	tmps, err := filepath.Glob(filepath.Join(s.Dir, tmpPattern))
	if err != nil {
		return // the pattern is well-formed
	}
	for _, name := range tmps {
		if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.logger().Warn("remove a checkpoint's leftover temporary file", "file", filepath.Base(name), "err", err)
		}
	}
}

// writeFile writes the envelope of a checkpoint with the content that
// content writes to f: the header (for a delta, with prev), the content
// through a buffer that computes the checksum, then the checksum. It
// returns the file's size.
func writeFile(f *os.File, content func(w io.Writer) error, delta bool, prev uint64) (int64, error) {
	table := crc32.MakeTable(crc32.Castagnoli)
	sum := crc32.New(table)
	cw := &countWriter{w: io.MultiWriter(f, sum)}
	w := bufio.NewWriterSize(cw, bufferSize)
	header := codec.Begin(nil, magic, version)
	if delta {
		header = binary.LittleEndian.AppendUint64(codec.Begin(nil, magic, deltaVersion), prev)
	}
	if _, err := w.Write(header); err != nil {
		return 0, fmt.Errorf("write checkpoint: %w", err)
	}
	if err := content(w); err != nil {
		return 0, err
	}
	if err := w.Flush(); err != nil {
		return 0, fmt.Errorf("write checkpoint: %w", err)
	}
	if _, err := f.Write(binary.LittleEndian.AppendUint32(nil, sum.Sum32())); err != nil {
		return 0, fmt.Errorf("write checkpoint: %w", err)
	}
	return cw.n + 4, nil
}

// A countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// addGood records seq as a restore point known to be valid, of the chain
// of base.
func (s *Store) addGood(seq, base uint64) {
	if !slices.Contains(s.good, seq) {
		s.good = append(s.good, seq)
		slices.Sort(s.good)
	}
	if s.baseOf == nil {
		s.baseOf = make(map[uint64]uint64)
	}
	s.baseOf[seq] = base
}

// prune keeps the newest restore points known to be valid, and the newest
// one of the chain before the newest point's, and removes the checkpoint
// files numbered below them and their chains' bases, and the files renamed
// aside but the newest keepInvalid; files is the directory's, newest
// first. Every point of a chain needs its base: the chain before is what
// a restore falls back to when the newest base is damaged.
func (s *Store) prune(files []file) error {
	slices.Sort(s.good)
	kept := slices.Clone(s.good[max(0, len(s.good)-keep):])
	if hb, ok := s.baseOf[s.good[len(s.good)-1]]; ok {
		for _, q := range slices.Backward(s.good) {
			if b, ok := s.baseOf[q]; ok && b < hb {
				if !slices.Contains(kept, q) {
					kept = append([]uint64{q}, kept...)
				}
				break
			}
		}
	}
	for _, q := range s.good {
		if !slices.Contains(kept, q) {
			delete(s.baseOf, q)
		}
	}
	s.good = kept
	// The points' chains go back to their bases: none of them goes.
	oldest := s.good[0]
	for _, q := range s.good {
		if b, ok := s.baseOf[q]; ok {
			oldest = min(oldest, b)
		}
	}
	if len(s.good) < keep {
		oldest = 0 // no file but those set aside goes until keep are known valid
	}
	invalids := 0
	for _, f := range files {
		if f.invalid {
			if invalids++; invalids <= keepInvalid {
				continue
			}
		} else if f.seq >= oldest {
			continue
		}
		if err := os.Remove(filepath.Join(s.Dir, f.name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove old checkpoint: %w", err)
		}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync checkpoint dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync checkpoint dir: %w", err)
	}
	return nil
}

// A file is a checkpoint file in the directory.
type file struct {
	seq     uint64
	name    string
	invalid bool // renamed aside
}

// list returns the checkpoint files, those renamed aside included, newest
// first.
func (s *Store) list() ([]file, error) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil, fmt.Errorf("list checkpoints: %w", err)
	}
	var files []file
	for _, e := range entries {
		if e.IsDir() {
			continue // not a checkpoint file, whatever its name
		}
		n, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		n, bad := strings.CutSuffix(n, invalid)
		n, ok = strings.CutSuffix(n, suffix)
		if !ok {
			continue
		}
		if seq, err := strconv.ParseUint(n, 10, 64); err == nil {
			files = append(files, file{seq: seq, name: e.Name(), invalid: bad})
		}
	}
	slices.SortFunc(files, func(a, b file) int { return cmp.Compare(b.seq, a.seq) })
	return files, nil
}

// Latest returns the newest base checkpoint whose envelope is intact, with
// its sequence number, and remembers it as the one in use and the head:
// retention keeps it until two newer ones are written, and WriteDelta
// follows it. Each newer base file that is corrupt, truncated or of
// another version is logged and renamed aside; deltas are passed over
// (RestoreChain applies them). It returns ErrNone if none is valid.
func (s *Store) Latest() (uint64, []byte, error) {
	return s.newest(0, false)
}

// Older returns the newest valid base checkpoint older than seq, for a
// caller whose decoding of checkpoint seq failed: checkpoint seq is renamed
// aside as invalid, and the one returned is the one in use, as with
// Latest.
func (s *Store) Older(seq uint64) (uint64, []byte, error) {
	s.good = slices.DeleteFunc(s.good, func(q uint64) bool { return q == seq })
	files, err := s.list()
	if err != nil {
		return 0, nil, err
	}
	for _, f := range files {
		if f.seq == seq && !f.invalid {
			s.setAside(f, errors.New("its content does not decode"))
		}
	}
	return s.newest(seq, true)
}

// Restore is RestoreChain for a directory of bases only, as written by
// Write: it fails if the base restored from is followed by a delta.
func (s *Store) Restore(restore func(content []byte) error) (uint64, error) {
	return s.RestoreChain(restore, nil)
}

// RestoreChain restores from the newest consistent point (see the package
// comment). It calls base with the content of the newest valid base
// checkpoint (Latest) and, while base fails, logs the failure and calls it
// with the next older one (Older, which sets the one that failed aside).
// Then it calls delta with the content of the newest valid delta following
// it, and so on along the chain, until no valid delta follows: a delta
// that is damaged, or whose content delta fails with, is logged and set
// aside, and the next older delta following the same checkpoint, if any,
// is tried instead (one left by a write that failed after its rename).
// delta must change nothing when it fails. The point restored is the head
// that WriteDelta follows.
//
// It stops at a content that base or delta fails with an error wrapping
// codec.ErrVersion, and returns that error: the checkpoint is not damaged
// but written by another version of the program, and falling back past it
// would serve older state. It returns the number of the checkpoint
// restored to, ErrNone if no checkpoint was restored from, or the error of
// a checkpoint that cannot be read. With a nil delta, a delta following
// the base is an error.
func (s *Store) RestoreChain(base, delta func(content []byte) error) (uint64, error) {
	seq, data, err := s.Latest()
	for err == nil {
		rerr := base(data)
		if rerr == nil {
			break
		}
		if errors.Is(rerr, codec.ErrVersion) {
			return 0, versionError(seq, rerr)
		}
		s.logger().Error("bad checkpoint; trying the previous one", "seq", seq, "err", rerr)
		seq, data, err = s.Older(seq)
	}
	if err != nil {
		return 0, err
	}
	first := seq
	for {
		next, err := s.follow(seq, delta)
		if err != nil {
			return 0, err
		}
		if next == 0 {
			break
		}
		seq = next
	}
	if seq != first {
		s.good = slices.DeleteFunc(s.good, func(q uint64) bool { return q == first })
		delete(s.baseOf, first)
		s.addGood(seq, first)
		s.head = seq
	}
	return seq, nil
}

func versionError(seq uint64, err error) error {
	return fmt.Errorf("checkpoint %d was written by another version of streamd (run that version, or move the data dir aside): %w", seq, err)
}

// follow applies the newest valid delta following checkpoint prev with
// delta, and returns its number, or 0 if none follows.
func (s *Store) follow(prev uint64, delta func(content []byte) error) (uint64, error) {
	files, err := s.list()
	if err != nil {
		return 0, err
	}
	for _, f := range files {
		if f.invalid || f.seq <= prev {
			continue
		}
		p, ok, err := s.header(f)
		if err != nil {
			return 0, err
		}
		if !ok || p != prev {
			continue
		}
		if delta == nil {
			return 0, fmt.Errorf("restore checkpoint: delta %s follows checkpoint %d", f.name, prev)
		}
		data, d, _, err := s.read(f)
		if err == nil && !d {
			err = fmt.Errorf("%w: not a delta", codec.ErrCorrupt)
		}
		if err != nil {
			if errors.Is(err, codec.ErrCorrupt) && !errors.Is(err, codec.ErrVersion) {
				s.setAside(f, err)
				continue
			}
			return 0, err
		}
		if err := delta(data); err != nil {
			if errors.Is(err, codec.ErrVersion) {
				return 0, versionError(f.seq, err)
			}
			s.setAside(f, fmt.Errorf("its content does not decode: %w", err))
			continue
		}
		s.deltas++
		s.deltaSize += int64(len(data)) + deltaHeader + 4
		return f.seq, nil
	}
	return 0, nil
}

// header reads the start of f: for a delta, ok and the number of the
// checkpoint it follows. A file too short, of another magic or another
// version is no delta; its full read tells what it is.
func (s *Store) header(f file) (prev uint64, ok bool, err error) {
	fh, err := os.Open(filepath.Join(s.Dir, f.name))
	if err != nil {
		return 0, false, fmt.Errorf("read checkpoint: %w", err)
	}
	defer fh.Close()
	var b [deltaHeader]byte
	if _, err := io.ReadFull(fh, b[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, false, nil
		}
		return 0, false, fmt.Errorf("read checkpoint: %w", err)
	}
	if string(b[:4]) != magic || b[4] != deltaVersion {
		return 0, false, nil
	}
	return binary.LittleEndian.Uint64(b[5:]), true, nil
}

// newest returns the newest valid base checkpoint, below seq if below is
// set, and makes it the head.
func (s *Store) newest(seq uint64, below bool) (uint64, []byte, error) {
	files, err := s.list()
	if err != nil {
		return 0, nil, err
	}
	for _, f := range files {
		if f.invalid || below && f.seq >= seq {
			continue
		}
		if _, d, err := s.header(f); err != nil {
			return 0, nil, err
		} else if d {
			continue
		}
		data, _, _, err := s.read(f)
		if err == nil {
			s.addGood(f.seq, f.seq)
			s.head, s.headBase, s.baseSize, s.deltas, s.deltaSize = f.seq, f.seq, int64(len(data))+5+4, 0, 0
			return f.seq, data, nil
		}
		if errors.Is(err, codec.ErrCorrupt) && !errors.Is(err, codec.ErrVersion) {
			s.setAside(f, err)
			continue
		}
		// Unreadable (a permission or I/O error), or written by another
		// version: it may hold newer state than any older one, so the
		// store neither falls back past it nor sets it aside.
		return 0, nil, err
	}
	return 0, nil, ErrNone
}

// setAside renames an invalid checkpoint file aside, with why in the log.
func (s *Store) setAside(f file, why error) {
	aside := f.name + invalid
	if err := os.Rename(filepath.Join(s.Dir, f.name), filepath.Join(s.Dir, aside)); err != nil {
		s.logger().Error("skipping bad checkpoint; trying the previous one", "file", f.name, "err", why, "rename_err", err)
		return
	}
	s.logger().Error("skipping bad checkpoint, renamed aside; trying the previous one", "file", f.name, "renamed", aside, "err", why)
}

// read returns the content of checkpoint f and, for a delta, delta set and
// the number of the checkpoint it follows.
func (s *Store) read(f file) (data []byte, delta bool, prev uint64, err error) {
	raw, err := os.ReadFile(filepath.Join(s.Dir, f.name))
	if err != nil {
		return nil, false, 0, fmt.Errorf("read checkpoint: %w", err)
	}
	data, v, err := codec.OpenVersions(raw, magic, version, deltaVersion)
	if err == nil && v == deltaVersion {
		if len(data) < 8 {
			err = fmt.Errorf("%w: delta header truncated", codec.ErrCorrupt)
		} else {
			data, delta, prev = data[8:], true, binary.LittleEndian.Uint64(data)
		}
	}
	if err != nil {
		return nil, false, 0, fmt.Errorf("read checkpoint %s: %w", f.name, err)
	}
	return data, delta, prev, nil
}
