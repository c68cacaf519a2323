# shellcheck shell=bash
# shellcheck disable=SC2154 # bin and out are set by the sourcing script
# Functions shared by bench-ingest.sh and compare-sorters.sh, to be sourced
# after setting bin (the directory of the streamd and loadgen binaries) and
# out (where logs and profiles go). They need only bash, awk, curl, date,
# getconf and, for pinning, taskset; `go tool pprof` summarises the CPU
# profiles when go is on the PATH.
#
# Environment:
#   DAEMON_CPUS, SENDER_CPUS  CPU lists for taskset, such as 0-3 and 4-15
#                             (Go sets GOMAXPROCS to the number of CPUs
#                             listed; the daemon doubles it with a GPU
#                             sorter). Unset: no pinning.
#   GRPC_ADDR, TCP_ADDR, METRICS_ADDR
#                             the daemon's addresses (default 127.0.0.1:7070,
#                             :7071, :7072); the sender measured alone sends to
#                             a discarding listener on TCP_ADDR
#   PROFILE_SECONDS           length of the daemon's CPU profile (default: five
#                             times the run's length at the sender's rate
#                             alone, 2 to 30 s; 10 s when that is unknown)
#   DAEMON_FLAGS              more flags for streamd serve, such as
#                             "--sort-workers 4 --window-size 262144"

GRPC_ADDR=${GRPC_ADDR:-127.0.0.1:7070}
TCP_ADDR=${TCP_ADDR:-127.0.0.1:7071}
METRICS_ADDR=${METRICS_ADDR:-127.0.0.1:7072}
clk_tck=$(getconf CLK_TCK 2>/dev/null || echo 100)

# cpu_count LIST: the number of CPUs in a taskset list such as 0-3,8,10-11;
# with no list, the CPUs of this machine.
cpu_count() {
	if [ -z "${1:-}" ]; then
		nproc
		return
	fi
	echo "$1" | awk -F, '{ for (i = 1; i <= NF; i++) { n = split($i, r, "-"); c += n == 2 ? r[2] - r[1] + 1 : 1 } } END { print c }'
}

# pinned CPUS CMD...: runs CMD on the CPUs of the list CPUS, or as it is
# when CPUS is empty.
pinned() {
	local cpus=$1
	shift
	if [ -n "$cpus" ]; then
		taskset -c "$cpus" "$@"
	else
		"$@"
	fi
}

# spawn CPUS CMD...: starts CMD in the background as pinned does, so that
# $! is the process id of CMD itself.
spawn() {
	local cpus=$1
	shift
	if [ -n "$cpus" ]; then
		taskset -c "$cpus" "$@" &
	else
		"$@" &
	fi
}

# proc_cpu PID: the CPU seconds (user and system) the process has used.
proc_cpu() {
	sed 's/.*) //' "/proc/$1/stat" | awk -v hz="$clk_tck" '{ printf "%.3f\n", ($12 + $13) / hz }'
}

# proc_wait PID: the seconds the process's threads have spent runnable but
# waiting for a CPU (taken by other processes, or by more threads than
# cores), from /proc/PID/task/*/schedstat; 0 where the kernel does not keep
# them.
proc_wait() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ w += $2 } END { printf "%.3f\n", w / 1e9 }'
}

# now: seconds since the epoch, with nanoseconds.
now() { date +%s.%N; }

# daemon_start SORTER LOG: starts streamd with the sorter, pinned to
# DAEMON_CPUS, serving the profiler and not sampling its streams for the
# web page; sets daemon_pid and daemon_dir, and waits until it answers.
daemon_start() {
	daemon_dir=$(mktemp -d)
	# shellcheck disable=SC2086 # DAEMON_FLAGS is words
	spawn "${DAEMON_CPUS:-}" "$bin/streamd" serve --sorter "$1" --data-dir "$daemon_dir" --checkpoint-interval 0 \
		--grpc-addr "$GRPC_ADDR" --tcp-addr "$TCP_ADDR" --metrics-addr "$METRICS_ADDR" --pprof --web-history 0 --metrics-max-streams 0 ${DAEMON_FLAGS:-} >"$2" 2>&1
	daemon_pid=$!
	for _ in $(seq 300); do
		"$bin/streamd" query streams --addr "$GRPC_ADDR" >/dev/null 2>&1 && break
		kill -0 "$daemon_pid" 2>/dev/null || break
		sleep 0.1
	done
	if ! kill -0 "$daemon_pid" 2>/dev/null || ! "$bin/streamd" query streams --addr "$GRPC_ADDR" >/dev/null 2>&1; then
		echo "streamd did not start:" >&2
		cat "$2" >&2
		return 1
	fi
}

# daemon_stop: stops the daemon gracefully and waits for it.
daemon_stop() {
	[ -n "${daemon_pid:-}" ] || return 0
	kill -TERM "$daemon_pid" 2>/dev/null || true
	wait "$daemon_pid" 2>/dev/null || true
	rm -rf "$daemon_dir"
	daemon_pid=
}

# stream_total NAME: the values the daemon counts in stream NAME and in
# streams NAME.0, NAME.1, ..., from its /api/streams (their Stats; cheaper
# than /metrics, which computes quantiles), a page of 10,000 streams at a
# time, following the page's cursor to the last.
stream_total() {
	local cursor="" total=0 n
	while :; do
		read -r n cursor < <(curl -sG "http://$METRICS_ADDR/api/streams" --data-urlencode "prefix=$1" \
			--data-urlencode "cursor=$cursor" --data-urlencode limit=10000 | page_total "$1")
		total=$((total + n))
		[ -n "$cursor" ] || break
	done
	echo "$total"
}

# page_total NAME: the values counted in stream NAME and in streams NAME.0,
# NAME.1, ... of the /api/streams page on its input, and the page's
# nextCursor.
page_total() {
	tr '{,' '\n\n' | awk -v s="$1" '
		/^"stream":"/ {
			name = $0
			sub(/^"stream":"/, "", name)
			sub(/".*/, "", name)
			rest = substr(name, length(s) + 1)
			want = name == s || (index(name, s ".") == 1 && rest ~ /^\.[0-9]+$/)
		}
		/^"count":/ && want {
			c = $0
			sub(/^"count":"?/, "", c)
			sub(/[^0-9].*/, "", c)
			total += c
			want = 0
		}
		/^"nextCursor":"/ {
			cursor = $0
			sub(/^"nextCursor":"/, "", cursor)
			sub(/".*/, "", cursor)
		}
		END { printf "%d %s\n", total, cursor }'
}

# tcp_values: the values and items the daemon has accepted from TCP
# connections, every stream's together (streamd_tcp_values_total, cheap to
# ask for since daemon_start exports no per-stream series).
tcp_values() {
	curl -s "http://$METRICS_ADDR/metrics" | awk '$1 == "streamd_tcp_values_total" { v = $2 } END { printf "%d\n", v }'
}

# intake STREAM ARGS...: the values the daemon has accepted of a run of
# `loadgen ARGS` into STREAM: tcp_values for a TCP target, stream_total
# STREAM for gRPC.
intake() {
	local stream=$1
	shift
	case " $* " in
	*" --target grpc "*) stream_total "$stream" ;;
	*) tcp_values ;;
	esac
}

# sent_rate FILE: the values/s of the summary loadgen wrote to FILE.
sent_rate() {
	sed -n 's/^sent .* values\/s.*/&/p' "$1" | sed 's/.*: \([0-9,]*\) values\/s.*/\1/' | tr -d , | tail -1
}

# solo_rate ARGS...: runs `loadgen ARGS --addr TCP_ADDR` pinned to
# SENDER_CPUS, into `loadgen sink` on TCP_ADDR pinned to DAEMON_CPUS, and
# prints loadgen's rate in values/s (0 if it failed). ARGS name a TCP
# target.
solo_rate() {
	local log=$out/solo.$$.log
	spawn "${DAEMON_CPUS:-}" "$bin/loadgen" sink --listen "$TCP_ADDR" >"$log.sink" 2>&1
	local sink=$!
	for _ in $(seq 100); do
		grep -q 'loadgen sink' "$log.sink" 2>/dev/null && break
		sleep 0.05
	done
	if pinned "${SENDER_CPUS:-}" "$bin/loadgen" "$@" --addr "$TCP_ADDR" >"$log" 2>&1; then
		sent_rate "$log"
	else
		echo 0
	fi
	kill -TERM "$sink" 2>/dev/null || true
	wait "$sink" 2>/dev/null || true
	cat "$log" "$log.sink" >>"$out/solo.log"
	rm -f "$log" "$log.sink"
}

# measure LABEL N STREAM SOLO ARGS...: runs `loadgen ARGS` pinned to
# SENDER_CPUS into the running daemon until it has accepted N values more
# (intake: from its TCP connections, or in STREAM, STREAM.0, STREAM.1, ...
# for gRPC), while taking a CPU profile of the daemon
# into $out/LABEL.cpu.pprof. It prints the daemon's intake rate (from the
# first value sent until the last is counted), the daemon's and the
# sender's CPU use, the top of the profile when go is installed, and a
# verdict: daemon-limited when the daemon's cores were busy, sender-limited
# when they were not and the sender sent at close to SOLO (its rate alone,
# in values/s; 0 if unknown). The daemon counts as limited by its cores too
# when it was busy or runnable but waiting for a core (other processes
# running there) for 75% of their time.
measure() {
	local label=$1 n=$2 stream=$3 solo=$4
	shift 4
	local lgout=$out/$label.loadgen.txt lgerr=$out/$label.loadgen.log timef=$out/$label.time
	local dcpus scpus base
	base=$(intake "$stream" "$@")
	dcpus=$(cpu_count "${DAEMON_CPUS:-}")
	scpus=$(cpu_count "${SENDER_CPUS:-}")
	(
		TIMEFORMAT='%R %U %S'
		time pinned "${SENDER_CPUS:-}" "$bin/loadgen" "$@" --addr "$TCP_ADDR" --grpc-addr "$GRPC_ADDR" --progress off >"$lgout" 2>"$lgerr"
	) 2>"$timef" &
	local lg=$!
	# loadgen renders its frames first; the run starts when it sends.
	until grep -q 'msg="loadgen sending"' "$lgerr" 2>/dev/null; do
		if ! kill -0 "$lg" 2>/dev/null; then
			echo "$label: loadgen failed before sending:" >&2
			cat "$lgerr" >&2
			return 1
		fi
		sleep 0.01
	done
	local cpu0 wait0 start
	cpu0=$(proc_cpu "$daemon_pid")
	wait0=$(proc_wait "$daemon_pid")
	start=$(sed -n 's/^time=\([^ ]*\) .*msg="loadgen sending".*/\1/p' "$lgerr" | head -1)
	# Never date -d "": that is midnight, and the rate would be nonsense.
	if [ -n "$start" ]; then
		start=$(date -d "$start" +%s.%N)
	else
		start=$(now)
	fi
	local secs=${PROFILE_SECONDS:-}
	if [ -z "$secs" ]; then
		# The daemon is slower than the sender alone: five times the
		# sender's time, so that the profile covers most of the run.
		secs=$(awk -v n="$n" -v r="$solo" 'BEGIN { s = r > 0 ? int(5 * n / r + 0.999) : 10; print (s < 2 ? 2 : (s > 30 ? 30 : s)) }')
	fi
	curl -sf -o "$out/$label.cpu.pprof" "http://$METRICS_ADDR/debug/pprof/profile?seconds=$secs" &
	local prof=$!
	local got=0 last=0 still
	still=$(now)
	while [ "$got" -lt "$n" ]; do
		sleep 0.01
		got=$(($(intake "$stream" "$@") - base))
		if [ "$got" != "$last" ]; then
			last=$got
			still=$(now)
		elif ! kill -0 "$lg" 2>/dev/null && awk -v a="$still" -v b="$(now)" 'BEGIN { exit !(b - a > 10) }'; then
			echo "$label: the daemon counts $got values of $n, and loadgen has ended:" >&2
			cat "$lgout" "$lgerr" >&2
			break
		fi
	done
	local end cpu1 wait1
	end=$(now)
	cpu1=$(proc_cpu "$daemon_pid")
	wait1=$(proc_wait "$daemon_pid")
	wait "$lg" || echo "$label: loadgen failed (see $lgerr)" >&2
	wait "$prof" || true
	local sender
	sender=$(sent_rate "$lgout")
	read -r real user sys <"$timef" || true
	awk -v l="$label" -v n="$got" -v a="$start" -v b="$end" -v c0="$cpu0" -v c1="$cpu1" -v dc="$dcpus" -v w0="$wait0" -v w1="$wait1" \
		-v sr="${sender:-0}" -v solo="$solo" -v su="${user:-0}" -v ss="${sys:-0}" -v sreal="${real:-0}" -v sc="$scpus" '
		BEGIN {
			wall = b - a; cpu = c1 - c0; load = cpu / (wall * dc); waited = w1 - w0
			want = (cpu + waited) / (wall * dc)
			printf "%s: %d values in %.2f s: %.1f M values/s into the daemon\n", l, n, wall, n / wall / 1e6
			printf "%s: daemon used %.2f CPU-s (%.1f CPU-ns/value) of %d cores x %.2f s: %.0f%% busy, %.0f%% idle; its threads waited %.1f s for a core\n", l, cpu, (n > 0 ? 1e9 * cpu / n : 0), dc, wall, 100 * load, 100 * (1 - load), waited
			soloText = solo > 0 ? sprintf("%.1f M values/s alone", solo / 1e6) : "alone not measured"
			printf "%s: loadgen sent at %.1f M values/s (%s), used %.1f CPU-s of %d cores in %.1f s\n", l, sr / 1e6, soloText, su + ss, sc, sreal
			if (load >= 0.85)
				v = sprintf("daemon-limited: the daemon kept %.0f%% of its %d cores busy", 100 * load, dc)
			else if (want >= 0.75)
				v = sprintf("daemon-limited: the daemon was %.0f%% busy and waited for its cores %.0f%% of the time (other processes ran on them)", 100 * load, 100 * waited / (wall * dc))
			else if (solo > 0 && sr >= 0.85 * solo)
				v = sprintf("sender-limited: the daemon was %.0f%% busy, and loadgen sent at %.0f%% of its rate alone", 100 * load, 100 * sr / solo)
			else
				v = sprintf("neither saturated: the daemon was %.0f%% busy, loadgen at %s of its rate alone (the daemon waits on something other than its cores)", 100 * load, solo > 0 ? sprintf("%.0f%%", 100 * sr / solo) : "an unknown share")
			printf "%s: verdict: %s\n", l, v
		}' | tee -a "$out/summary.txt"
	if command -v go >/dev/null 2>&1 && [ -s "$out/$label.cpu.pprof" ]; then
		go tool pprof -top -nodecount=20 "$bin/streamd" "$out/$label.cpu.pprof" 2>/dev/null | sed -n '1,30p' >"$out/$label.top.txt" || true
		sed "s/^/$label: /" "$out/$label.top.txt"
	else
		echo "$label: profile in $out/$label.cpu.pprof (summarise with: go tool pprof -top $bin/streamd $out/$label.cpu.pprof)"
	fi
}
