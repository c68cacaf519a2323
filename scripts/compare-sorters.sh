#!/usr/bin/env bash
# Runs streamd once per sorter named on the command line, replays the
# household sample into it with loadgen --verify, records its answers, then
# measures end-to-end ingest with a synthetic stream; finally diffs the
# answers of every sorter against the first one.
#
#   scripts/compare-sorters.sh BIN_DIR OUT_DIR SORTER [SORTER ...]
set -euo pipefail
bin=$1 out=$2
shift 2
mkdir -p "$out"
cols=Global_active_power,Voltage,Global_intensity,Sub_metering_1
for sorter in "$@"; do
	dir=$(mktemp -d)
	"$bin/streamd" serve --sorter "$sorter" --data-dir "$dir" --checkpoint-interval 0 \
		--metrics-addr "" >"$out/$sorter.log" 2>&1 &
	pid=$!
	for _ in $(seq 200); do "$bin/streamd" query streams >/dev/null 2>&1 && break; sleep 0.1; done
	{
		echo "== sorter $sorter"
		"$bin/loadgen" replay --file data/household_power_consumption.csv.gz --csv-columns "$cols" \
			--target tcp-binary --verify --progress off
	} >"$out/$sorter.verify.txt" 2>&1 || echo "verify failed for $sorter" >>"$out/$sorter.verify.txt"
	for s in ${cols//,/ }; do
		"$bin/streamd" query quantiles "$s" 0.001 0.01 0.1 0.5 0.9 0.99 0.999 --json
		"$bin/streamd" query heavy-hitters "$s" --support 0.01 --json
	done >"$out/$sorter.answers.json"
	# End-to-end ingest: from the first value sent until the daemon has
	# counted the last, in sorted and summarised windows or pending.
	count=${COUNT:-200000000}
	start=$(date +%s.%N)
	"$bin/loadgen" synth --dist lognormal --count "$count" --streams 8 --conns 8 \
		--target tcp-binary --float32 --progress off >"$out/$sorter.ingest.txt" 2>&1 || true
	for i in 0 1 2 3 4 5 6 7; do
		until [ "$("$bin/streamd" query stats "synth.$i" --json 2>/dev/null | sed -n 's/.*"count": *"\{0,1\}\([0-9]*\).*/\1/p')" = "$((count / 8))" ]; do
			sleep 0.01
		done
	done
	end=$(date +%s.%N)
	awk -v n="$count" -v a="$start" -v b="$end" -v s="$sorter" \
		'BEGIN { printf "%s: %d values counted in %.2f s: %.1f M values/s end to end\n", s, n, b - a, n / (b - a) / 1e6 }' \
		| tee -a "$out/$sorter.ingest.txt"
	kill -TERM "$pid"
	wait "$pid" || true
	rm -rf "$dir"
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
