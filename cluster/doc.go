// Package cluster lets the daemons of one Kafka consumer group answer for
// the whole of their topics: any member answers a query with scope
// SCOPE_CLUSTER by asking the others for their summaries of the stream
// (the Peer service) and merging them, each partition counted once.
//
// # Members
//
// A Directory is how the members find each other: each announces its id,
// gRPC address, group generation and partitions in a compacted topic
// (DefaultTopic) and reads everyone else's. Static peer addresses may be
// given besides. Calls to peers carry the daemon's bearer token, over TLS
// when the daemon serves TLS (Peers).
//
// # State per partition
//
// A daemon keeps each stream's values from each Kafka partition apart
// (package pipeline: one part per source). Its state of a partition p —
// the parts of p of all streams — is paired with an offset o, and holds
// exactly the values of p's messages before o, from where the state began
// (the partition's first offset). The pair never comes apart:
//
//   - delivery advances both, one unit at a time, under the consumer's
//     gate (ingest.KafkaConsumer.Barrier);
//   - checkpoints, and the state handed to another member, take both in
//     one cut, with delivery paused;
//   - a restart restores both from one checkpoint;
//   - a new owner starts consuming p at exactly the offset of the state it
//     installs (ingest.KafkaConsumer.Assigned), never at the group's
//     committed offset, and with no state at p's first offset.
//
// # Moves
//
// When the group gives p to a new owner, the new owner takes the state of
// p that goes furthest among those it can reach: its own (from an earlier
// generation, or its checkpoint), or a peer's — the previous owner keeps
// the state it had when p was revoked, and a daemon that stops gracefully
// stays up until its partitions' states are fetched. It installs that
// state and consumes p from its offset. If the previous owner died, the
// values it consumed after the state the new owner found are consumed
// again; they are counted once, because the dead member's state of p is
// never counted again: a daemon counts only the partitions the group gives
// it (the others are released: kept, as states to hand over, but out of
// its answers), and if p comes back to it, the furthest state wins. With
// no state of p in reach, p is consumed from its first offset; under
// Kafka retention the messages already deleted are then missing from the
// answers (the daemon logs it). A state handed over carries p's whole
// history, deleted messages included.
//
// Package handoff makes the moves. It uses the Peers and the Directory of
// this package, but also the daemon's pipeline, its Kafka consumer and the
// lock of its checkpoints, which the answers here do not need.
//
// # Cluster answers
//
// A Gatherer asks every member for its share: the summaries of its local
// inputs and of the partitions it consumes in its current generation, with
// the offset of each. A member claims a partition only once its state is
// installed. The answer takes each partition from the member that claims
// it in the newest generation (a member that has not noticed a rebalance
// claims an older one), and the local inputs of every member that answered.
// So no partition is counted twice. A partition that no member that
// answered claims — its owner did not answer within the timeout, or the
// group is rebalancing — is named in Missing and the answer is Partial;
// so is an answer missing a member of the current generation, whose local
// inputs no one else holds. An answer covers each partition up to the
// offset its owner had consumed, as any streaming answer lags the log.
//
// A member does not claim a partition it resumed behind the group's
// committed offset (ingest.KafkaConsumer.CatchingUp) until its consumed
// offset reaches it: after a member died, its partitions' new owners
// consume again, from older states, what it had consumed, and until they
// are back where it was their states hold fewer values than the answers
// counted before. The committed offset is the mark because every member
// commits only offsets its checkpoint covers: the group consumed and
// counted at least that far, and it is known to the new owner when the
// generation starts. The dead member may have consumed a little further,
// up to one checkpoint interval, before it died; answers count those
// values again once the new owner has consumed them, as any answer lags
// the log. A member announces no offsets (and the dead member's
// checkpoints are out of reach), so no higher mark is known.
//
// # Bounds
//
// A part's quantile summary is within ε·n of its n values; it is
// compressed to exactly that budget before it is sent
// (summary.View.Compact). Merged GK summaries add their absolute errors
// (gksketch.Merge, MergeAll), and so do merged lossy counts (the Δ and
// absence bounds add: lossy.Summary.MergeCounts). So the merged answer is
// within Σ εᵢ·nᵢ = ε·N of its N values, ε being the count-weighted mean of
// the parts' εᵢ: their common ε when the members agree on the stream's ε,
// and never more than the largest. The answers state that ε and N.
//
// # Last n and time windows
//
// Queries of the last n values, and of the values of the last d, are
// refused over a cluster: the partitions of a topic share no order of
// arrival, so "the last n" has no meaning across them, and the daemons
// share no clock. Each daemon answers them for the values it received.
//
// # Item streams
//
// Item streams have no cluster answers (ErrItemStream): each daemon counts
// items by their fingerprints under its own item key, so the members'
// summaries of one item stream do not merge. A partition's state of an
// item stream still moves between members: the new owner hashes the
// strings it carries again under its own key (package pipeline).
package cluster
