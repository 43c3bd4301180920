#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# tools_mock.sh DROCE_RUN MOCK_DROCED
#
# Debian's unmodified rdma-core and perftest binaries through the shim,
# against mock_droced (loopback inside the mock: both ends of each test are
# clients of the same stand-in daemon). Checks that each exits 0; the
# pingpongs and perftest verify what they can themselves. The real daemon's
# version of this is tests/integration. Exit 77 without the tools.

run=$1
mock=$2
for t in ibv_devinfo ibv_rc_pingpong ib_write_bw; do
	command -v $t >/dev/null 2>&1 || { echo "$t missing: skipped"; exit 77; }
done
tmp=$(mktemp -d)
sock=$tmp/mock.sock
"$mock" "$sock" >"$tmp/mock.log" 2>&1 &
mock_pid=$!
trap 'kill $mock_pid 2>/dev/null; wait $mock_pid 2>/dev/null; rm -rf "$tmp"' EXIT
i=0
while [ ! -S "$sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
[ -S "$sock" ] || { echo "mock_droced did not start"; cat "$tmp/mock.log"; exit 1; }

# below the ephemeral range (32768-) so no outgoing connection holds it
port=$((20000 + $$ % 10000))
fail=0

# server and client of one tool; the rest of the arguments are the tool's
pair() {
	port=$((port + 1))
	# skip a port something on this host already uses (CI runs suites side by side)
	while ss -Htan "sport = :$port" | grep -q .; do port=$((port + 1)); done
	sh "$run" --socket "$sock" timeout 60 "$@" -p $port >"$tmp/srv" 2>&1 &
	srv=$!
	sleep 0.3
	sh "$run" --socket "$sock" timeout 60 "$@" -p $port localhost >"$tmp/cli" 2>&1
	crc=$?
	wait $srv
	src=$?
	if [ $crc -ne 0 ] || [ $src -ne 0 ]; then
		echo "FAIL: $* (client $crc, server $src)"
		# whole logs: stderr is unbuffered and lands before stdout's lines
		sed 's/^/    client: /' "$tmp/cli"
		sed 's/^/    server: /' "$tmp/srv"
		tail -20 "$tmp/mock.log" | sed 's/^/    mock: /'
		fail=1
	else
		echo "ok: $*"
	fi
}

out=$(sh "$run" --socket "$sock" ibv_devinfo -v 2>&1)
if printf '%s\n' "$out" | grep -q 'PORT_ACTIVE' && printf '%s\n' "$out" | grep -q 'RoCE v2'; then
	echo "ok: ibv_devinfo -v"
else
	echo "FAIL: ibv_devinfo -v"
	printf '%s\n' "$out" | sed 's/^/    /'
	fail=1
fi
pair ibv_rc_pingpong -g 1 -n 100
pair ibv_rc_pingpong -g 1 -n 100 -e
pair ibv_rc_pingpong -g 1 -n 10 -s 1048576
pair ibv_uc_pingpong -g 1 -n 100
pair ibv_ud_pingpong -g 1 -n 100
pair ibv_srq_pingpong -g 1 -n 100
pair ib_write_bw -x 1 -n 500
pair ib_read_bw -x 1 -n 500
pair ib_send_bw -x 1 -n 500
pair ib_atomic_bw -x 1 -n 500
pair ib_write_lat -x 1 -n 200
pair ib_send_lat -x 1 -n 200
pair ib_read_lat -x 1 -n 200
exit $fail
