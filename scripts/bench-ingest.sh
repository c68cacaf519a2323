#!/usr/bin/env bash
# End-to-end ingest throughput: measures loadgen alone (into `loadgen
# sink`, pinned as the daemon would be), then starts streamd (sorter
# $SORTER, default cpu) and sends COUNT values of a lognormal stream
# through each target with loadgen in a separate process. For each target
# it prints the daemon's intake rate (from the first value sent until the
# daemon counts the last), the daemon's and the sender's CPU use, the top
# of a CPU profile of the daemon taken during the run, and whether the
# sender or the daemon was the limit.
#
#   scripts/bench-ingest.sh BIN_DIR [TARGET ...]   (targets: tcp-binary tcp grpc tcp-items)
#
# tcp-items sends items to an item stream in item frames: Zipf strings over
# 10^6 distinct items (exponent 1.1), 2^22 of them drawn and recorded once
# by loadgen, then replayed in a loop, since replaying costs loadgen less
# per item than drawing Zipf ranks.
#
# Environment (see scripts/bench-lib.sh for the addresses and
# PROFILE_SECONDS):
#   COUNT        values per target (default 50,000,000; a quarter of it for tcp)
#   CONNS        loadgen connections (default 1)
#   STREAMS      streams, dealt to the connections (default 1; as many as
#                CONNS gives each connection its own)
#   FLOAT32      1 (default) sends float32 values to the tcp targets, 0 float64
#   POOL         values per stream that tcp-binary renders ahead and sends over
#                and over (loadgen synth --pool; default: each stream's whole
#                share), so that many streams' long runs render in seconds
#   SORTER       the daemon's --sorter (default cpu)
#   DAEMON_CPUS, SENDER_CPUS  pin the daemon and loadgen with taskset, such as
#                0-3 and 4-15
#   OUT          directory for the logs, profiles and summary.txt (default: a
#                new temporary directory, kept)
set -euo pipefail
bin=$1
shift
targets=${*:-tcp-binary tcp grpc}
count=${COUNT:-50000000}
conns=${CONNS:-1}
streams=${STREAMS:-1}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
# shellcheck source=scripts/bench-lib.sh
source "$(dirname "$0")/bench-lib.sh"
trap 'daemon_stop' EXIT

# items_file: records the items that tcp-items replays, once, into
# $out/items.sdb, and prints its path.
items_file() {
	local f=$out/items.sdb
	if [ ! -s "$f" ]; then
		"$bin/loadgen" record --listen 127.0.0.1:7173 --out "$f" --count 4194304 >"$out/record.log" 2>&1 &
		local rec=$!
		for _ in $(seq 100); do
			"$bin/loadgen" synth --items --dist zipf --zipf-s 1.1 --zipf-distinct 1000000 --count 4194304 \
				--stream items --target tcp-binary --addr 127.0.0.1:7173 --progress off >/dev/null 2>&1 && break
			sleep 0.1
		done
		wait "$rec"
	fi
	echo "$f"
}

# args TARGET N: loadgen's arguments for a run of N values to TARGET.
args() {
	if [ "$1" = tcp-items ]; then
		echo "replay --file $(items_file) --loop 0 --count $2 --stream-prefix bench.tcp- --conns $conns --target tcp-binary --batch 65536"
		return
	fi
	local a=(synth --dist lognormal --count "$2" --stream "bench.$1" --streams "$streams" --conns "$conns" --target "$1")
	[ "$1" != grpc ] && [ "${FLOAT32:-1}" = 1 ] && a+=(--float32)
	[ "$1" = tcp-binary ] && [ -n "${POOL:-}" ] && a+=(--pool "$POOL")
	[ "$1" = tcp-binary ] || a+=(--batch 65536)
	echo "${a[@]}"
}
size() { if [ "$1" = tcp ]; then echo $((count / 4)); else echo "$count"; fi; }

echo "sorter ${SORTER:-cpu}, $count values, $conns connections, $streams streams;" \
	"daemon on ${DAEMON_CPUS:-all} ($(cpu_count "${DAEMON_CPUS:-}") cores), loadgen on ${SENDER_CPUS:-all} ($(cpu_count "${SENDER_CPUS:-}") cores); output in $out" |
	tee "$out/summary.txt"
declare -A solo
for target in $targets; do
	solo[$target]=0
	# gRPC has no discarding listener: the sender alone is not measured.
	[ "$target" = grpc ] && continue
	# shellcheck disable=SC2046 # args are words
	solo[$target]=$(solo_rate $(args "$target" "$(size "$target")"))
	awk -v t="$target" -v r="${solo[$target]}" 'BEGIN { printf "%s: loadgen alone: %.1f M values/s\n", t, r / 1e6 }' | tee -a "$out/summary.txt"
done
daemon_start "${SORTER:-cpu}" "$out/streamd.log"
for target in $targets; do
	n=$(size "$target")
	# shellcheck disable=SC2046
	measure "$target" "$n" "bench.$target" "${solo[$target]}" $(args "$target" "$n")
done
