package pipeline

import (
	"streamd/feed"
	"streamd/internal/codec"
	"streamd/summary"
)

// Compatibility with version 1 snapshots, written before a stream kept its
// parts apart. Nothing writes them any more; Restore reads them so that
// old checkpoints still restore. Version 1 is version 2 without the item
// key, and with each stream encoded as:
//
//	name     (length-prefixed)
//	summary  a version 1 summary encoding, sliding window included
//	         (summary.DecodeV1; length-prefixed)
//	pending  as a part's
//	rejects  as a part's
//
// There were no item streams. Each stream restores with its sliding
// window, and the rest as its local part.

// readStreamV1 reads a stream of a version 1 snapshot: one summary with
// its sliding window, which becomes the stream's, and the rest its local
// part.
func (p *Pipeline) readStreamV1(r *codec.Reader, name string) (*Stream, error) {
	sumBytes := r.Bytes("summary", r.Remaining())
	if err := r.Err(); err != nil {
		return nil, err
	}
	sum, recent, err := summary.DecodeV1(sumBytes)
	if err != nil {
		return nil, err
	}
	// The stream and its part lie in one block, as a newer snapshot's do
	// (readStream): the history decoded moves there.
	blk := new(streamBlock)
	blk.first.history = *sum
	d := &decodedPart{src: feed.Local, sum: &blk.first.history, blk: &blk.first}
	d.pending = readPending(r)
	d.rejected = readRejects(r)
	if err := r.Err(); err != nil {
		return nil, err
	}
	if err := checkPending(sum, d.pending); err != nil {
		return nil, err
	}
	cfg := sum.Config()
	s := &blk.stream
	*s = Stream{name: blk.keepName(name), pool: &p.buffers, cfg: p.sharedConfig(cfg), recent: recent}
	s.first = s.install(d, p.itemKey)
	return s, nil
}
