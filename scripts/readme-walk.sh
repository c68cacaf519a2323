#!/usr/bin/env bash
# Walk the README: run its ```sh blocks in order, as a newcomer would in one
# terminal, and fail on the first command that fails.
#
# Usage: scripts/readme-walk.sh [README.md]
#
# The walk copies the checkout (tracked files and untracked ones git does
# not ignore) into a scratch directory and runs there, so the README's
# relative paths (bin/, streamd-data/, cert.pem, ...) start empty and the
# checkout is left alone. Every command runs in one bash process, so the
# jobs a block starts with & are there for the next blocks (kill %1); after
# a command that starts a server in the background, the walk waits until its
# ports answer (at most 60 s), as a person would before typing on. Other
# commands run with a time limit (WALK_CMD_TIMEOUT, 120 s), the whole walk
# too (WALK_TIMEOUT, 300 s). At the end, and on any failure, every process
# it started is stopped. The block that runs `make test` is skipped: CI
# runs it already.
#
# It prints each command as it runs it. On failure it prints the block,
# its line in README.md, the command and its output, and the background
# jobs, and exits 1; WALK_KEEP=1 keeps the scratch directory, with every
# command's output in logs/ (named by the command's line). Everything
# listens on loopback only; the README's ports (7070-7072, 7000-7020, 7080,
# 9000, 9092-9094) must be free. It takes about a minute.

exec 3>&1
rw_repo=$(cd "$(dirname "$0")/.." && pwd)
rw_readme=$(cd "$(dirname "${1:-$rw_repo/README.md}")" && pwd)/$(basename "${1:-README.md}")
rw_cmd_timeout=${WALK_CMD_TIMEOUT:-120}
rw_deadline=$((SECONDS + ${WALK_TIMEOUT:-300}))
rw_scratch=$(mktemp -d "${TMPDIR:-/tmp}/readme-walk.XXXXXX")
rw_logs=$rw_scratch/logs
mkdir -p "$rw_logs" "$rw_scratch/streamd"

# grpcurl installed by `go install` lands in GOPATH/bin.
PATH=$PATH:$(go env GOPATH)/bin
# A token in the caller's environment would change what the README shows.
unset STREAMD_TOKEN STREAMD_GRPC_ADDR STREAMD_KAFKA_PASSWORD

# rw_stop stops the processes pids: SIGTERM, then SIGKILL to those that
# still run after 15 s. Each pass asks once whether any still runs: asking
# twice, a process that stops between the questions would make those
# still stopping look stopped, and they would be killed.
rw_stop() {
	[ $# -gt 0 ] || return 0
	kill -TERM "$@" 2>/dev/null
	local pid running
	for _ in $(seq 150); do
		running=()
		for pid in "$@"; do
			rw_alive "$pid" && running+=("$pid")
		done
		[ ${#running[@]} -gt 0 ] || return 0
		sleep 0.1
	done
	kill -KILL "${running[@]}" 2>/dev/null
}

# rw_cleanup stops every job the README started, the daemons before the
# brokers they talk to (so that they close cleanly and quickly), and removes
# the scratch directory.
rw_cleanup() {
	local pid daemons=() brokers=()
	kill "$rw_watchdog" 2>/dev/null
	for pid in $(jobs -p); do
		if grep -q kafkadev "/proc/$pid/cmdline" 2>/dev/null; then
			brokers+=("$pid")
		else
			daemons+=("$pid")
		fi
	done
	rw_stop "${daemons[@]}"
	rw_stop "${brokers[@]}"
	wait 2>/dev/null
	if [ "${WALK_KEEP:-}" = 1 ]; then
		echo "readme-walk: kept $rw_scratch"
	else
		rm -rf "$rw_scratch"
	fi
}
trap rw_cleanup EXIT
# Interrupted, or by the watchdog below: name the command that was running.
trap 'rw_fail "${rw_n:-?}" "${rw_fence:-?}" "${rw_line:-?}" "${rw_cmd:-}" "${rw_log:-/dev/null}" "interrupted, or ran past WALK_TIMEOUT"' INT TERM
# Not a job of this shell, so that the README's %1 is its own first job.
(
	while [ $SECONDS -lt $rw_deadline ]; do
		sleep 1
		kill -0 $$ 2>/dev/null || exit 0
	done
	kill -TERM $$
) &
rw_watchdog=$!
disown $rw_watchdog

for rw_tool in go make git nc kcat grpcurl curl openssl timeout; do
	command -v "$rw_tool" >/dev/null || {
		echo "readme-walk: $rw_tool is not installed (see .ci/run)" >&2
		exit 1
	}
done

(cd "$rw_repo" && git ls-files -z --cached --others --exclude-standard |
	xargs -0 tar --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$rw_scratch/streamd"
cd "$rw_scratch/streamd" || exit 1

# The README's commands, one a record: block number, line of the block's
# fence, line of the command, the command (lines joined as bash reads them:
# a line ending in \ or a command not yet complete, such as a for loop,
# continues on the next). Records are separated by NUL.
rw_parse() {
	local n=0 fence=0 ln=0 start=0 line buf="" inblock=0
	while IFS= read -r line || [ -n "$line" ]; do
		ln=$((ln + 1))
		if [ $inblock = 0 ]; then
			if [ "$line" = '```sh' ]; then
				inblock=1 n=$((n + 1)) fence=$ln
			fi
			continue
		fi
		if [ "$line" = '```' ]; then
			[ -n "$buf" ] && printf '%s\t%s\t%s\t%s\0' "$n" "$fence" "$start" "$buf"
			inblock=0 buf=""
			continue
		fi
		if [ -z "$buf" ]; then
			case $line in '' | '#'*) continue ;; esac
			start=$ln buf=$line
		else
			buf+=$'\n'$line
		fi
		case $buf in *\\) continue ;; esac
		bash -n <<<"$buf" 2>/dev/null || continue
		printf '%s\t%s\t%s\t%s\0' "$n" "$fence" "$start" "$buf"
		buf=""
	done <"$rw_readme"
}

rw_fail() { # block fence line command log message
	# To the walk's own output, also from a trap while a command's output
	# goes to its log.
	exec >&3 2>&1
	echo
	echo "readme-walk: FAILED in block $1 (README.md line $2), command at line $3:"
	printf '    %s\n' "$4"
	echo "$6"
	if [ -s "$5" ]; then
		echo "--- its output (last 60 lines):"
		tail -n 60 "$5"
	fi
	if [ -n "$(jobs -p)" ]; then
		echo "--- the background jobs:"
		jobs -l
	fi
	exit 1
}

# rw_background reports whether cmd starts a job with & (outside quotes).
rw_background() {
	local s=$1
	s=$(sed -e "s/'[^']*'//g" -e 's/"[^"]*"//g' <<<"$s")
	[[ $s =~ (^|[^\&\>])\&([^\&\>]|$) ]]
}

# rw_addrs prints the host:port addresses the process pid serves, from its
# command line: streamd serve's --grpc-addr, --tcp-addr and --metrics-addr
# (with their defaults), any other program's -addr or --listen (kafkadev's
# default 127.0.0.1:9092).
rw_addrs() {
	local -a argv
	mapfile -d '' -t argv <"/proc/$1/cmdline" 2>/dev/null || return 0
	local prog=${argv[0]##*/} i a flag val
	local -A addr=()
	case "$prog ${argv[1]:-}" in
	'streamd serve') addr=([grpc-addr]=127.0.0.1:7070 [tcp-addr]=127.0.0.1:7071 [metrics-addr]=127.0.0.1:7072) ;;
	kafkadev*) addr=([addr]=127.0.0.1:9092) ;;
	esac
	for ((i = 1; i < ${#argv[@]}; i++)); do
		a=${argv[i]}
		case $a in -*) ;; *) continue ;; esac
		flag=${a#-}
		flag=${flag#-}
		if [[ $flag == *=* ]]; then
			val=${flag#*=} flag=${flag%%=*}
		else
			val=${argv[i + 1]:-}
		fi
		case $flag in *addr | listen) addr[$flag]=$val ;; esac
	done
	for a in "${addr[@]}"; do
		[ -n "$a" ] && echo "$a"
	done
}

# rw_listens reports whether the process pid listens on TCP port port
# itself (not another process holding the port already): a listening socket
# of /proc/net/tcp{,6} on that port is one of its file descriptors.
rw_listens() { # pid port
	local inode
	for inode in $(awk -v p="$(printf ':%04X' "$2")" \
		'$4 == "0A" && substr($2, length($2) - 4) == p { print $10 }' /proc/net/tcp /proc/net/tcp6 2>/dev/null); do
		find "/proc/$1/fd" -lname "socket:\[$inode\]" 2>/dev/null | grep -q . && return 0
	done
	return 1
}

# rw_alive reports whether the process pid runs: it exists and one of its
# threads is no zombie. The main thread alone is not enough: it may be a
# zombie while the process's other threads still run, as they stop.
rw_alive() {
	local stat task
	for task in /proc/"$1"/task/*/stat; do
		stat=$(cat "$task" 2>/dev/null) || continue
		stat=${stat##*) }
		case ${stat%% *} in
		Z | X) ;;
		*) return 0 ;;
		esac
	done
	return 1
}

# rw_wait_ready waits until the ports of every new job answer, served by
# that job; it fails, saying why in rw_why, if a job exits first or they do
# not answer within 60 s.
rw_wait_ready() { # pids...
	local pid a end=$((SECONDS + 60)) shell
	shell=$(readlink -f "$BASH")
	for pid in "$@"; do
		# A job is a forked shell until it execs its command.
		for _ in $(seq 20); do
			[ "$(readlink -f "/proc/$pid/exe" 2>/dev/null)" = "$shell" ] || break
			sleep 0.1
		done
		if ! rw_alive "$pid"; then
			wait "$pid" && continue
			rw_why="the process it started in the background (pid $pid) exited with status $?"
			return 1
		fi
		for a in $(rw_addrs "$pid"); do
			until rw_listens "$pid" "${a##*:}" && nc -z "${a%:*}" "${a##*:}" 2>/dev/null; do
				if ! rw_alive "$pid"; then
					wait "$pid"
					rw_why="the process it started in the background (pid $pid) exited with status $? before $a answered"
					return 1
				fi
				if [ $SECONDS -ge $end ]; then
					rw_why="nothing answered on $a within 60 s"
					return 1
				fi
				sleep 0.1
			done
		done
	done
}

rw_start=$SECONDS
rw_block=0
rw_skip=0
while IFS=$'\t' read -r -d '' rw_n rw_fence rw_line rw_cmd; do
	if [ "$rw_n" != "$rw_block" ]; then
		rw_block=$rw_n rw_skip=0
		if [ "$rw_cmd" = "make test" ]; then
			rw_skip=1
			echo "== block $rw_n (README.md line $rw_fence): skipped, make test runs in CI on its own"
			continue
		fi
		echo "== block $rw_n (README.md line $rw_fence)"
	fi
	[ $rw_skip = 1 ] && continue
	if [ $SECONDS -ge $rw_deadline ]; then
		rw_fail "$rw_n" "$rw_fence" "$rw_line" "$rw_cmd" /dev/null "the walk ran past WALK_TIMEOUT"
	fi
	printf '$ %s\n' "$rw_cmd"
	rw_log=$rw_logs/$rw_line.log
	rw_t0=$SECONDS
	if rw_background "$rw_cmd" || [[ $rw_cmd =~ (^|[^[:alnum:]_])(kill|wait|cd|export)[[:space:]] ]]; then
		# Job control and shell state: in this shell, as typed.
		rw_before=" $(jobs -p | tr '\n' ' ') "
		{ eval "$rw_cmd"; } >"$rw_log" 2>&1 </dev/null
		rw_rc=$?
		rw_new=()
		for rw_pid in $(jobs -p); do
			[[ $rw_before == *" $rw_pid "* ]] || rw_new+=("$rw_pid")
		done
		if [ $rw_rc = 0 ] && [ ${#rw_new[@]} -gt 0 ]; then
			rw_wait_ready "${rw_new[@]}" ||
				rw_fail "$rw_n" "$rw_fence" "$rw_line" "$rw_cmd" "$rw_log" "$rw_why"
		fi
	else
		timeout -k 5 "$rw_cmd_timeout" bash -c "$rw_cmd" >"$rw_log" 2>&1 </dev/null 3>&-
		rw_rc=$?
		[ $rw_rc = 124 ] && rw_rc="124 (ran past WALK_CMD_TIMEOUT, ${rw_cmd_timeout}s)"
	fi
	[ "$rw_rc" = 0 ] || rw_fail "$rw_n" "$rw_fence" "$rw_line" "$rw_cmd" "$rw_log" "exit status $rw_rc"
	[ $((SECONDS - rw_t0)) -ge 5 ] && echo "   ($((SECONDS - rw_t0)) s)"
done < <(rw_parse)

echo
echo "readme-walk: every README block ran ($((SECONDS - rw_start)) s)"
