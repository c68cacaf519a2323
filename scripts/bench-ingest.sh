#!/usr/bin/env bash
# End-to-end ingest throughput: starts streamd (sorter $SORTER, default
# cpu), sends COUNT values of a synthetic stream with loadgen in a separate
# process through each target, and times from the first value sent until
# the daemon has counted the last.
#
#   scripts/bench-ingest.sh BIN_DIR [TARGET ...]   (targets: tcp-binary tcp grpc)
#
# STREAMD_TOKEN sets the token of the daemon and its clients; with
# STREAMD_TLS_CERT and STREAMD_TLS_KEY the daemon serves TLS, and TLS_CA is
# the certificate its clients trust.
set -euo pipefail
bin=$1
shift
targets=${*:-tcp-binary tcp grpc}
count=${COUNT:-50000000}
dir=$(mktemp -d)
send_tls=() query_tls=()
if [ -n "${TLS_CA:-}" ]; then send_tls=(--tls-ca "$TLS_CA"); query_tls=(--tls --ca "$TLS_CA"); fi
"$bin/streamd" serve --sorter "${SORTER:-cpu}" --data-dir "$dir" --checkpoint-interval 0 --metrics-addr "" >"$dir/log" 2>&1 &
pid=$!
# Wait for the daemon to exit, so that a next run finds the ports free.
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 200); do "$bin/streamd" query streams "${query_tls[@]}" >/dev/null 2>&1 && break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null || { echo "streamd did not start:" >&2; cat "$dir/log" >&2; exit 1; }
for target in $targets; do
	n=$count
	[ "$target" = tcp ] && n=$((count / 4)) # the line protocol is slower; keep runs short
	stream="bench.$target"
	start=$(date +%s.%N)
	"$bin/loadgen" synth --dist lognormal --count "$n" --stream "$stream" --target "$target" \
		--batch 65536 --progress off "${send_tls[@]}" >/dev/null
	until [ "$("$bin/streamd" query stats "$stream" --json "${query_tls[@]}" | sed -n 's/.*"count": *"\{0,1\}\([0-9]*\).*/\1/p')" = "$n" ]; do
		sleep 0.01
	done
	end=$(date +%s.%N)
	awk -v n="$n" -v a="$start" -v b="$end" -v t="$target" \
		'BEGIN { printf "%-10s %11d values in %6.2f s: %6.2f M values/s end to end\n", t, n, b - a, n / (b - a) / 1e6 }'
done
