package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"streamd/checkpoint"
	"streamd/ingest"
	"streamd/internal/codec"
)

// State encoding, inside a checkpoint (see streamd/internal/codec for the
// envelope), magic "SDST", version 1:
//
//	offsets  uvarint count, then topic (length-prefixed), partition
//	         uvarint, next offset uvarint: where each Kafka partition
//	         resumes, exactly after the values in the snapshot
//	pipeline the pipeline's snapshot (length-prefixed)
const (
	stateMagic   = "SDST"
	stateVersion = 1
)

type offsets = map[ingest.TopicPartition]int64

func encodeState(snapshot []byte, off offsets) []byte {
	dst := codec.Begin(nil, stateMagic, stateVersion)
	dst = binary.AppendUvarint(dst, uint64(len(off)))
	for tp, o := range off {
		dst = codec.AppendBytes(dst, []byte(tp.Topic))
		dst = binary.AppendUvarint(dst, uint64(tp.Partition))
		dst = binary.AppendUvarint(dst, uint64(o))
	}
	dst = codec.AppendBytes(dst, snapshot)
	return codec.End(dst, 0)
}

func decodeState(data []byte) (snapshot []byte, off offsets, err error) {
	p, err := codec.Open(data, stateMagic, stateVersion)
	if err != nil {
		return nil, nil, err
	}
	r := codec.NewReader(p)
	n := r.Int("offsets", int64(r.Remaining()))
	off = make(offsets, min(n, 1<<12))
	for range n {
		tp := ingest.TopicPartition{Topic: string(r.Bytes("topic", 255)), Partition: int(r.Int("partition", 1<<31))}
		off[tp] = r.Int("offset", 1<<62)
	}
	snapshot = r.Bytes("snapshot", r.Remaining())
	if err := r.Done(); err != nil {
		return nil, nil, err
	}
	return snapshot, off, nil
}

// restore loads the newest checkpoint that decodes and restores into the
// pipeline (not yet open), falling back to the older one if it is corrupt.
// It returns the checkpoint's Kafka offsets.
func (d *Daemon) restore() (offsets, error) {
	seq, data, err := d.store.Latest()
	for err == nil {
		snap, off, derr := decodeState(data)
		if derr == nil {
			derr = d.pipe.Restore(snap)
		}
		if derr == nil {
			d.seq = seq
			d.Logger.Info("restored checkpoint", "seq", seq, "streams", d.pipe.Len(), "kafka_partitions", len(off))
			return off, nil
		}
		d.Logger.Error("bad checkpoint; trying the previous one", "seq", seq, "err", derr)
		seq, data, err = d.store.Older(seq)
	}
	if errors.Is(err, checkpoint.ErrNone) {
		d.Logger.Info("no checkpoint to restore; starting empty", "data_dir", d.Config.DataDir)
		return offsets{}, nil
	}
	return nil, err
}

// checkpoint writes one checkpoint: a snapshot of every stream and, when
// Kafka is consumed, the offsets up to which its values are in that
// snapshot — a consistent cut taken with delivery paused. Once the
// checkpoint is durable, the offsets are committed to the group.
func (d *Daemon) checkpoint(ctx context.Context) error {
	d.ckptMu.Lock()
	defer d.ckptMu.Unlock()
	var snap []byte
	if d.kafka != nil && !d.kafkaStopped.Load() {
		err := d.kafka.Barrier(ctx, func(off offsets) error {
			var err error
			snap, err = d.pipe.Snapshot()
			for tp, o := range off {
				d.offsets[tp] = o
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
	} else {
		var err error
		if snap, err = d.pipe.Snapshot(); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
	}
	return d.writeCheckpoint(ctx, snap)
}

// writeCheckpoint writes snap with the daemon's offsets, then commits them.
// The caller holds ckptMu.
func (d *Daemon) writeCheckpoint(ctx context.Context, snap []byte) error {
	start := time.Now()
	seq, err := d.store.Write(encodeState(snap, d.offsets))
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	d.seq = seq
	d.Logger.Debug("checkpoint written", "seq", d.seq, "bytes", len(snap), "took", time.Since(start))
	d.checkpoints.Add(1)
	if d.kafka != nil && len(d.offsets) > 0 && !d.kafkaStopped.Load() {
		if err := d.kafka.Commit(ctx, d.offsets); err != nil {
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
	if d.stopping.Load() {
		d.giveUp(off)
	}
	d.ckptMu.Lock()
	defer d.ckptMu.Unlock()
	snap, err := d.pipe.Snapshot()
	if err != nil {
		return err
	}
	for tp, o := range off {
		d.offsets[tp] = o
	}
	return d.writeCheckpoint(ctx, snap)
}

// checkpointLoop checkpoints every interval until ctx ends.
func (d *Daemon) checkpointLoop(ctx context.Context) {
	t := time.NewTicker(d.Config.CheckpointInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if err := d.checkpoint(ctx); err != nil && ctx.Err() == nil {
				d.Logger.Error("checkpoint failed", "err", err)
			}
		case <-ctx.Done():
			return
		}
	}
}
