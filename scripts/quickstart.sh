#!/usr/bin/env bash
# The README's quick start: start streamd with its defaults, replay the
# household power sample into it over TCP, show quantiles and heavy hitters,
# and shut the daemon down cleanly.
set -euo pipefail
bin=${1:-bin}
dir=${2:-bin/run}
mkdir -p "$dir"
log="$dir/streamd.log"
# The daemon keeps its state across restarts; the quick start starts empty,
# so that loadgen --verify compares with exactly what it sends.
rm -rf "$dir/data"

"$bin/streamd" serve --data-dir "$dir/data" >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT

# Wait until the daemon answers.
for _ in $(seq 100); do
	"$bin/streamd" query streams >/dev/null 2>&1 && break
	kill -0 "$pid" 2>/dev/null || { cat "$log"; exit 1; }
	sleep 0.1
done

echo "== replaying data/household_power_consumption.csv.gz (one stream per column)"
"$bin/loadgen" replay --file data/household_power_consumption.csv.gz \
	--csv-columns Global_active_power,Voltage,Global_intensity,Sub_metering_1 \
	--target tcp-binary --addr 127.0.0.1:7071 \
	--verify --grpc-addr 127.0.0.1:7070

for s in Global_active_power Voltage; do
	echo
	echo "== quantiles of $s"
	"$bin/streamd" query quantiles "$s"
done
echo
echo "== heavy hitters of Sub_metering_1 (support 1%)"
"$bin/streamd" query heavy-hitters Sub_metering_1 --support 0.01
echo
echo "== p99 of the last 10,000 Voltage readings"
"$bin/streamd" query quantiles Voltage 0.5 0.99 --last 10000
echo
echo "== stats of Global_active_power (the ? rows of the file were counted and skipped by loadgen)"
"$bin/streamd" query stats Global_active_power

kill -TERM "$pid"
wait "$pid"
trap - EXIT
echo
echo "streamd stopped cleanly; its log is in $log"
