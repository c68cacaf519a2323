package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"time"

	"streamd/checkpoint"
	"streamd/feed"
	"streamd/internal/codec"
	"streamd/pipeline"
)

// State encoding, inside a checkpoint, magic "SDST", version 2:
//
//	magic    [4]byte, version uint8
//	offsets  uvarint count, then topic (length-prefixed), partition
//	         uvarint, next offset uvarint: where each Kafka partition
//	         resumes, exactly after the values in the snapshot
//	pipeline the pipeline's snapshot (pipeline.Pipeline.SnapshotTo), to
//	         the end of the checkpoint
//
// It is written as a stream, the snapshot stream by stream, and has no
// checksum of its own: the checkpoint's covers it. Version 1 was an
// envelope (see streamd/internal/codec) of the offsets and the snapshot,
// length-prefixed, built whole in memory; it still restores.
//
// Checkpoints are incremental (see streamd/checkpoint): a base checkpoint
// holds this state with the pipeline's whole snapshot; a delta holds it
// with the pipeline's delta (pipeline.Pipeline.SaveTo), the streams
// changed since the checkpoint before, and every offset, so that the
// offsets of the last delta restored are those of the state restored.
const (
	stateMagic   = "SDST"
	stateVersion = 2
)

type offsets = map[feed.Source]int64

// encodeState writes the state of off and p's snapshot, or with delta its
// delta, to w, and returns the number of bytes written and the pipeline's
// Saved, to commit once the checkpoint is durable.
func encodeState(w io.Writer, off offsets, p *pipeline.Pipeline, delta bool) (int64, *pipeline.Saved, error) {
	dst := codec.Begin(nil, stateMagic, stateVersion)
	dst = binary.AppendUvarint(dst, uint64(len(off)))
	for tp, o := range off {
		dst = codec.AppendBytes(dst, []byte(tp.Topic))
		dst = binary.AppendUvarint(dst, uint64(tp.Partition))
		dst = binary.AppendUvarint(dst, uint64(o))
	}
	n, err := w.Write(dst)
	if err != nil {
		return int64(n), nil, fmt.Errorf("write state: %w", err)
	}
	m, saved, err := p.SaveTo(w, delta)
	return int64(n) + m, saved, err
}

// decodeState reads a state of either version: its offsets and the
// pipeline's snapshot (a part of data, not a copy).
func decodeState(data []byte) (snapshot []byte, off offsets, err error) {
	if len(data) < 5 || string(data[:4]) != stateMagic {
		return nil, nil, fmt.Errorf("%w: not a state", codec.ErrCorrupt)
	}
	var r *codec.Reader
	switch data[4] {
	case 1:
		p, err := codec.Open(data, stateMagic, 1)
		if err != nil {
			return nil, nil, err
		}
		r = codec.NewReader(p)
	case stateVersion:
		r = codec.NewReader(data[5:])
	default:
		// The checkpoint's checksum covers the state: another version of
		// streamd wrote it.
		return nil, nil, fmt.Errorf("%w: %s version %d, want 1 to %d", codec.ErrVersion, stateMagic, data[4], stateVersion)
	}
	n := r.Int("offsets", int64(r.Remaining()))
	off = make(offsets, min(n, 1<<12))
	for range n {
		tp := feed.Source{Topic: string(r.Bytes("topic", 255)), Partition: int(r.Int("partition", 1<<31))}
		off[tp] = r.Int("offset", 1<<62)
	}
	if data[4] == 1 {
		snapshot = r.Bytes("snapshot", r.Remaining())
		if err := r.Done(); err != nil {
			return nil, nil, err
		}
		return snapshot, off, nil
	}
	if err := r.Err(); err != nil {
		return nil, nil, err
	}
	return data[len(data)-r.Remaining():], off, nil
}

// restore loads the newest checkpoint that decodes and restores into the
// pipeline (not yet open) — a base and the deltas that follow it, up to
// the first damaged one; a damaged base falls back to the one before — and
// gives the Handoff the Kafka offsets of the last checkpoint restored.
func (d *Daemon) restore() error {
	var off offsets
	seq, err := d.store.RestoreChain(func(data []byte) error {
		snap, o, err := decodeState(data)
		if err == nil {
			err = d.pipe.Restore(snap)
		}
		off = o
		d.chain = chainStreams{base: d.pipe.Len()}
		return err
	}, func(data []byte) error {
		snap, o, err := decodeState(data)
		if err != nil {
			return err
		}
		if err := d.pipe.RestoreDelta(snap); err != nil {
			return err
		}
		off = o
		// How many streams the delta held is not known here: as many
		// as the base, so that the next checkpoint is a base.
		d.chain.deltas += max(d.chain.base, 1)
		return nil
	})
	if errors.Is(err, checkpoint.ErrNone) {
		d.Logger.Info("no checkpoint to restore; starting empty", "data_dir", d.Config.DataDir)
		return nil
	}
	if err != nil {
		return err
	}
	d.Logger.Info("restored checkpoint", "seq", seq, "streams", d.pipe.Len(), "kafka_partitions", len(off))
	return d.handoff.Offsets(func(held offsets) error {
		maps.Copy(held, off)
		return nil
	})
}

// checkpoint writes one checkpoint: a snapshot of every stream, or a delta
// of those changed since the last checkpoint (checkpoint.Store.DeltaDue),
// and, when Kafka is consumed, the offsets up to which its values are in
// that state — a consistent cut taken with delivery paused while the
// snapshot is encoded and written to the file (not while it is synced).
// Once the checkpoint is durable, the offsets are committed to the group.
func (d *Daemon) checkpoint(ctx context.Context) error {
	return d.handoff.Offsets(func(off offsets) error {
		if d.kafka == nil || d.kafkaStopped.Load() {
			return d.writeCheckpoint(ctx, off, nil)
		}
		return d.writeCheckpoint(ctx, off, func(w io.Writer, delta bool) (int64, *pipeline.Saved, error) {
			var n int64
			var saved *pipeline.Saved
			err := d.kafka.Barrier(ctx, func(next offsets) error {
				maps.Copy(off, next)
				var err error
				n, saved, err = encodeState(w, off, d.pipe, delta)
				return err
			})
			return n, saved, err
		})
	})
}

// writeCheckpoint writes a checkpoint of what content writes (nil: off and
// a snapshot or delta of the pipeline), a delta when one is due, marks the
// pipeline's state saved, then commits off. The caller is inside
// Handoff.Offsets, which gave it off.
func (d *Daemon) writeCheckpoint(ctx context.Context, off offsets, content func(w io.Writer, delta bool) (int64, *pipeline.Saved, error)) error {
	if content == nil {
		content = func(w io.Writer, delta bool) (int64, *pipeline.Saved, error) {
			return encodeState(w, off, d.pipe, delta)
		}
	}
	start := time.Now()
	delta := d.store.DeltaDue() && d.chain.deltaDue(d.store.Fraction())
	write := d.store.Write
	if delta {
		write = d.store.WriteDelta
	}
	var size int64
	var saved *pipeline.Saved
	seq, err := write(func(w io.Writer) error {
		var err error
		size, saved, err = content(w, delta)
		return err
	})
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if saved != nil {
		saved.Commit()
		if delta {
			d.chain.deltas += saved.Streams()
		} else {
			d.chain = chainStreams{base: saved.Streams()}
		}
	}
	d.Logger.Debug("checkpoint written", "seq", seq, "delta", delta, "bytes", size, "took", time.Since(start))
	if d.kafka != nil && len(off) > 0 && !d.kafkaStopped.Load() {
		if err := d.kafka.Commit(ctx, off); err != nil {
			// The checkpoint holds the offsets; a failed commit only leaves
			// the group's view of the lag behind.
			d.Logger.Warn("commit kafka offsets", "err", err)
		}
	}
	return nil
}

// revoked is the Kafka consumer's hook before it gives partitions up:
// delivery has stopped, so a snapshot now matches off exactly.
func (d *Daemon) revoked(ctx context.Context, off offsets) error {
	d.handoff.Revoked(off)
	return d.ckpt.Record(d.handoff.Offsets(func(held offsets) error {
		maps.Copy(held, off)
		return d.writeCheckpoint(ctx, held, nil) // the snapshot is taken as the checkpoint is written
	}))
}

// chainStreams counts the streams held by the chain of checkpoints that
// the next delta would follow: by its base, and by its deltas in all.
// Restoring a chain rebuilds every stream of every delta in it, so the
// next checkpoint is a base once its deltas hold more streams than a
// fraction of its base's, as checkpoint.Store bounds their bytes: a
// delta's bytes follow the values added since the checkpoint before, but
// each stream in it costs a restore about what one of the base does.
type chainStreams struct {
	base, deltas int
}

// deltaDue reports whether the next checkpoint may be a delta, by the
// streams of the chain: whether its deltas hold no more than fraction of
// its base's streams (checkpoint.Store.Fraction).
func (c chainStreams) deltaDue(fraction float64) bool {
	return float64(c.deltas) <= fraction*float64(c.base)
}
