#!/usr/bin/env bash
# End-to-end ingest throughput: starts streamd (sorter $SORTER, default
# cpu), sends COUNT values of a synthetic stream with loadgen in a separate
# process through each target, and times from the first value sent until
# the daemon has counted the last.
#
#   scripts/bench-ingest.sh BIN_DIR [TARGET ...]   (targets: tcp-binary tcp grpc tcp-items)
#
# tcp-items sends items to an item stream over the framed protocol: Zipf
# strings over 10^6 distinct items (exponent 1.1), recorded once by loadgen
# and replayed in a loop, since replaying costs loadgen less per item than
# drawing Zipf ranks. CONNS sets its number of connections (default 1).
set -euo pipefail
bin=$1
shift
targets=${*:-tcp-binary tcp grpc}
count=${COUNT:-50000000}
dir=$(mktemp -d)
"$bin/streamd" serve --sorter "${SORTER:-cpu}" --data-dir "$dir" --checkpoint-interval 0 --metrics-addr "" >"$dir/log" 2>&1 &
pid=$!
# Wait for the daemon to exit, so that a next run finds the ports free.
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 200); do "$bin/streamd" query streams >/dev/null 2>&1 && break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null || { echo "streamd did not start:" >&2; cat "$dir/log" >&2; exit 1; }
# cpu prints the CPU time (user + system) the daemon has used, in seconds:
# per value, it does not depend on how busy a shared machine is.
cpu() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$pid/stat"; }
for target in $targets; do
	n=$count
	[ "$target" = tcp ] && n=$((count / 4)) # the line protocol is slower; keep runs short
	stream="bench.$target"
	if [ "$target" = tcp-items ]; then
		items="$dir/items.sdb"
		"$bin/loadgen" record --listen 127.0.0.1:7173 --out "$items" --count 4194304 >"$dir/record.log" 2>&1 &
		for _ in $(seq 100); do
			"$bin/loadgen" synth --items --dist zipf --zipf-s 1.1 --zipf-distinct 1000000 --count 4194304 \
				--stream items --target tcp-binary --addr 127.0.0.1:7173 --progress off >/dev/null 2>&1 && break
			sleep 0.1
		done
		wait $!
		stream="bench.items"
		c0=$(cpu)
		start=$(date +%s.%N)
		"$bin/loadgen" replay --file "$items" --loop 0 --count "$n" --stream-prefix bench. --target tcp-binary \
			--conns "${CONNS:-1}" --batch 65536 --progress off >/dev/null
	else
		c0=$(cpu)
		start=$(date +%s.%N)
		"$bin/loadgen" synth --dist lognormal --count "$n" --stream "$stream" --target "$target" \
			--batch 65536 --progress off >/dev/null
	fi
	until [ "$("$bin/streamd" query stats "$stream" --json | sed -n 's/.*"count": *"\{0,1\}\([0-9]*\).*/\1/p')" = "$n" ]; do
		sleep 0.01
	done
	end=$(date +%s.%N)
	c1=$(cpu)
	awk -v n="$n" -v a="$start" -v b="$end" -v t="$target" -v c0="$c0" -v c1="$c1" \
		'BEGIN { printf "%-10s %11d values in %6.2f s: %6.2f M values/s end to end; daemon CPU %.1f ns/value\n", t, n, b - a, n / (b - a) / 1e6, (c1 - c0) / n * 1e9 }'
done
