// Package soak holds a fault-injection soak test of the real streamd
// binary, in the spirit of Jepsen and of TigerBeetle's simulator but on
// real processes: producers write known streams into the daemon over every
// way in while a seeded driver kills, stops, restarts and starves it, and
// a checker holds every answer to what the README promises.
//
// # Model
//
// Each stream has one producer and a sequence of values that is a pure
// function of the seed, the stream and the position (values k/16 with k
// below 2^16, exact in float32: heavy hitters among drifting values). A
// producer never sends a value twice: after a failed connection or call it
// goes on with the next position. So the values a stream holds are always
// a concatenation of ranges of its sequence — one per life of the daemon,
// each cut short where a restart lost its tail — and the count the daemon
// reports after a restart says exactly where the cut is. The checker keeps
// these ranges (the lineage), so it knows the exact multiset of every
// stream at every restart and at the end, and checks quantiles, ranks,
// frequencies and heavy hitters (all history and the last n values)
// against it.
//
// The streams: tcp.lines (line protocol), tcp.frames (binary frames,
// float64), tcp.hostile (line protocol with bad values, bad stream names and
// over-long lines mixed in; only its good values count), push.plain (gRPC
// Push), push.durable (gRPC Push with durable set), soak.fence (see below),
// and kafka.bin and kafka.text (binary and text messages keyed by stream,
// spread over the four partitions of a topic on an in-process kfake
// broker). Producers learn the daemon's addresses through a gate that the
// driver opens only once it has checked a restarted daemon, so nothing
// reaches a daemon before its restored state is known.
//
// A fence is a durable Push of one value to soak.fence, made after reading
// every stream's count: when it returns, a checkpoint taken after those
// counts is on disk, and its sequence number is at most the newest valid
// checkpoint file then listed. A checkpoint at least that new holds at
// least those counts. Fences run every quarter second; they are how the
// checker knows what a checkpoint holds without reading its format.
//
// # Faults
//
// At random, from the seed: SIGKILL and SIGTERM of the daemon, restarted on
// the same data dir; the newest checkpoint file truncated or a byte of it
// flipped while the daemon is down; the data dir filled (it is a small
// tmpfs when `mount -t tmpfs` works; otherwise this fault is skipped and
// the test says so) while the daemon runs — then freed, or the daemon
// killed or stopped while full — or before a restart; and a second daemon
// started on the same data dir. Faults are counted by kind and printed at
// the end.
//
// # Invariants
//
// After each restart, for each stream:
//
//   - no stream holds more than was sent (never a duplicate);
//   - the daemon restores the newest checkpoint that was not damaged;
//   - retention never removes a valid checkpoint so that a single valid one
//     is left beside damaged ones (watched while checkpoints resume after
//     a restart on a full disk, which leaves a damaged one among them);
//   - every stream holds at least the counts of every fence whose
//     checkpoint is no newer than the restored one: TCP and Push lose at
//     most what arrived after the last checkpoint;
//   - push.durable holds every value of every acknowledged call (unless
//     the newest checkpoint was damaged);
//   - after a SIGTERM on which the daemon exits 0, every stream holds every
//     value it counted before the signal and every acknowledged Push; a
//     daemon whose final checkpoint fails must say so with a non-zero exit;
//   - Kafka streams never count more than was produced;
//   - every answer is within ε of the exact answer of the stream's values.
//
// And besides: checkpoints resume once a full disk is freed; a second
// daemon on a data dir in use refuses to start; at the end, with producers
// stopped and no fault pending, TCP and Push streams hold exactly their
// lineage and each Kafka stream exactly what was produced, each value once.
//
// # Running
//
// `go test ./soak` runs a short soak: 45 seconds of faults, about a minute
// in all (10 seconds of faults with -short). `make soak DURATION=30m SEED=42` runs a long one. The seed is
// printed at the start and in every failure; -seed and -duration (or
// SOAK_SEED and SOAK_DURATION) replay a run, and -faults (SOAK_FAULTS)
// limits the fault kinds, for example -faults kill,corrupt. A seed fixes
// the values and the schedule of faults, not the interleaving of the
// processes, so a replay reproduces a failure often, not always.
package soak
