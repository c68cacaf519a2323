#!/usr/bin/env bash
# Runs streamd once per sorter named on the command line, replays the
# household sample into it with loadgen --verify, records its answers, then
# measures end-to-end ingest of a synthetic stream as bench-ingest.sh does
# (the daemon's intake rate, its CPU use and profile, and whether the
# sender or the daemon was the limit); finally diffs the answers of every
# sorter against the first one.
#
#   scripts/compare-sorters.sh BIN_DIR OUT_DIR SORTER [SORTER ...]
#
# Run it from the repository root (it reads data/). Environment: COUNT
# (default 200,000,000 values), CONNS (default 8), STREAMS (default
# CONNS: a stream per connection), DAEMON_CPUS and SENDER_CPUS (taskset
# lists), and those of scripts/bench-lib.sh.
set -euo pipefail
bin=$1 out=$2
shift 2
mkdir -p "$out"
# shellcheck source=scripts/bench-lib.sh
source "$(dirname "$0")/bench-lib.sh"
trap 'daemon_stop' EXIT
cols=Global_active_power,Voltage,Global_intensity,Sub_metering_1
count=${COUNT:-200000000}
conns=${CONNS:-8}
streams=${STREAMS:-$conns}
load=(synth --dist lognormal --count "$count" --streams "$streams" --conns "$conns" --target tcp-binary --float32)
: >"$out/summary.txt"
echo "$count values, $conns connections, $streams streams; daemon on ${DAEMON_CPUS:-all}" \
	"($(cpu_count "${DAEMON_CPUS:-}") cores), loadgen on ${SENDER_CPUS:-all} ($(cpu_count "${SENDER_CPUS:-}") cores)" | tee -a "$out/summary.txt"
solo=$(solo_rate "${load[@]}")
awk -v r="$solo" 'BEGIN { printf "loadgen alone: %.1f M values/s\n", r / 1e6 }' | tee -a "$out/summary.txt"
for sorter in "$@"; do
	daemon_start "$sorter" "$out/$sorter.log"
	{
		echo "== sorter $sorter"
		pinned "${SENDER_CPUS:-}" "$bin/loadgen" replay --file data/household_power_consumption.csv.gz --csv-columns "$cols" \
			--target tcp-binary --addr "$TCP_ADDR" --grpc-addr "$GRPC_ADDR" --verify --progress off
	} >"$out/$sorter.verify.txt" 2>&1 || echo "verify failed for $sorter" | tee -a "$out/$sorter.verify.txt"
	for s in ${cols//,/ }; do
		"$bin/streamd" query quantiles "$s" 0.001 0.01 0.1 0.5 0.9 0.99 0.999 --json --addr "$GRPC_ADDR"
		"$bin/streamd" query heavy-hitters "$s" --support 0.01 --json --addr "$GRPC_ADDR"
	done >"$out/$sorter.answers.json"
	# End-to-end ingest: from the first value sent until the daemon has
	# counted the last, in sorted and summarised windows or pending.
	measure "$sorter" "$count" synth "$solo" "${load[@]}" | tee "$out/$sorter.ingest.txt"
	daemon_stop
done
first=$1
for sorter in "$@"; do
	[ "$sorter" = "$first" ] && continue
	if diff -q "$out/$first.answers.json" "$out/$sorter.answers.json" >/dev/null; then
		echo "$sorter: answers identical to $first"
	else
		echo "$sorter: answers differ from $first (each must still pass --verify):"
		diff "$out/$first.answers.json" "$out/$sorter.answers.json" | head -40
	fi
done | tee "$out/compare.txt"
