# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# Sourced by scripts/bench-*: where the binaries are, how to run two
# DPDK processes over one net_memif link (one core each), and how results
# are printed ("RESULT name value unit" lines that bench-all collects).
# Benchmarks, not tests: they measure and report, they do not judge.

top=$(cd "$(dirname "$0")/.." && pwd)
build=${DROCE_BUILD:-$top/build}
tp=$build/app/testpmd/droce-testpmd
work=$(mktemp -d /tmp/droce-bench.XXXXXX)
trap 'bench_cleanup' EXIT INT TERM
# 2 cores: each side of a link owns one; an lcore thread may share its core
# with the process's main thread, which only sleeps.
eal_a="--lcores 0@0,1@0 --no-huge -m 1024 --no-pci --no-shconf"
eal_b="--lcores 0@1,1@1 --no-huge -m 1024 --no-pci --no-shconf"
memif="net_memif0,socket=$work/memif.sock,socket-abstract=no"
memif_client="$memif,role=client"
# BENCH_HUGEPAGES=1: DPDK's memory from 2 MB hugepages (scripts/setup
# --hugepages 1024), one file per process (--single-file-segments) so that
# the memif client can share its mbufs with the server: zero-copy on the
# client's side. Results are named huge.<name>.
huge=""
if [ "${BENCH_HUGEPAGES:-0}" = 1 ]; then
	huge="huge."
	hmem="--huge-dir /dev/hugepages -m 768 --single-file-segments --no-pci"
	eal_a="--lcores 0@0,1@0 $hmem --file-prefix droce-bench-a$$"
	eal_b="--lcores 0@1,1@1 $hmem --file-prefix droce-bench-b$$"
	memif_client="$memif_client,zero-copy=yes"
fi
addr_a="--ip 10.0.0.1/24 --mac 02:00:00:00:00:01 --neigh 10.0.0.2=02:00:00:00:00:02 --remote 10.0.0.2"
addr_b="--ip 10.0.0.2/24 --mac 02:00:00:00:00:02 --neigh 10.0.0.1=02:00:00:00:00:01 --remote 10.0.0.1"
SECONDS_RUN=${BENCH_SECONDS:-5}
# memif between two processes runs in two speed modes here (6 or 20 Mpps
# for dpdk-testpmd, 3 or 5.4 M for droce, from run to run): the figures
# that compare are measured in alternating pairs, and medians reported
REPEAT=${BENCH_REPEAT:-3}

bench_cleanup() {
	[ -n "${bg_pids:-}${droced_pid:-}" ] && kill ${bg_pids:-} ${droced_pid:-} 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
	# DPDK leaves its hugepage files (--huge-unlink excludes --single-file-segments)
	[ -n "$huge" ] && rm -f /dev/hugepages/droce-bench-a$$map_* /dev/hugepages/droce-bench-b$$map_*
}

result() {	# name value unit [note]
	printf 'RESULT %s%s %s %s%s\n' "$huge" "$1" "$2" "$3" "${4:+ $4}"
}

# Median of the numbers on stdin.
median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2];
		else { m = (v[NR / 2] + v[NR / 2 + 1]) / 2; printf(m >= 1000 ? "%.0f\n" : "%.3f\n", m) } }'
}

# "min/median/max" of the numbers on stdin: how far the pairs spread (a
# fresh run is read by its median, the spread says how much to trust it)
spread() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%g/%g/%g\n", v[1], m, v[NR] }'
}

# tp_pair "RESPONDER OPTIONS" "GENERATOR OPTIONS": droce-testpmd responder
# (memif server, core 1) and generator (memif client, core 0) for
# SECONDS_RUN seconds after a one-second warm-up. The generator's log is
# $work/gen, the responder's $work/resp; prints the median of the
# generator's per-second message rates.
tp_pair() {
	rm -f "$work/memif.sock"
	$tp $eal_b --vdev "$memif,role=server" -- --port net_memif0 $addr_b --quiet \
		--mode responder $1 --cmd "start; sleep 600" >"$work/resp" 2>&1 &
	resp=$!
	bg_pids="$resp"
	i=0
	while [ ! -S "$work/memif.sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	$tp $eal_a --vdev "$memif_client" -- --port net_memif0 $addr_a $2 \
		--cmd "start; sleep $((SECONDS_RUN + 1)); stop; show stats; halt; sleep 1" \
		>"$work/gen" 2>&1 &
	gen=$!
	i=0
	until grep -q '^halted' "$work/gen" || [ $i -gt 1200 ]; do sleep 0.05; i=$((i + 1)); done
	kill -TERM $resp 2>/dev/null
	wait $resp $gen 2>/dev/null
	bg_pids=
	# per-second lines after the first (warm-up)
	awk '/^progress/ { n++; if (n > 1) print $4 + 0 }' "$work/gen" | median
}

# testpmd_ref FRAME_BYTES: dpdk-testpmd txonly -> macswap over the same kind
# of memif link as tp_pair, one core each; prints the macswap side's received
# frames per second (the reference of the rate and bandwidth benchmarks).
testpmd_ref() {
	rm -f "$work/memif.sock"
	{ sleep 3; echo start; sleep 2; echo "show port stats all"; sleep "$SECONDS_RUN"
	  echo "show port stats all"; sleep 0.5; echo stop; sleep 1; echo quit; } |
		timeout 60 dpdk-testpmd $eal_b --vdev "$memif,role=server" -- -i \
			--total-num-mbufs=16384 --forward-mode=macswap >"$work/ref-srv" 2>&1 &
	srv=$!
	i=0
	while [ ! -S "$work/memif.sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	{ sleep 2.5; echo start; sleep $((SECONDS_RUN + 4)); echo stop; sleep 1; echo quit; } |
		timeout 60 dpdk-testpmd $eal_a --vdev "$memif_client" -- -i \
			--total-num-mbufs=16384 --forward-mode=txonly --txpkts="$1" >"$work/ref-cli" 2>&1
	wait $srv
	awk '/Rx-pps:/ { v = $2 } END { print v + 0 }' "$work/ref-srv"
}

# ring_droced_start / ring_droced_stop: a droced of its own on core 1 over a
# net_ring loop, serving $work/shim.sock (its clients run through $run; one
# busy droced would take core 1 from whatever runs after it)
run="$build/app/run/droce-run --socket $work/shim.sock"
ring_droced_start() {
	: >"$work/droced"	# emptied before the start: the wait must not see an old READY
	"$build/app/droced/droced" --lcores 0@1,1@1 --no-huge -m 512 --no-pci --no-shconf \
		--vdev net_ring0 -- --port net_ring0 --ip 10.0.0.1/24 --socket "$work/shim.sock" \
		>"$work/droced" 2>&1 &
	droced_pid=$!
	i=0
	until grep -q '^READY' "$work/droced" || [ $i -gt 200 ]; do sleep 0.05; i=$((i + 1)); done
}
ring_droced_stop() {
	kill -TERM $droced_pid
	wait $droced_pid
	droced_pid=
}

# a / b with @2 decimals: ratio A B [DIGITS]
ratio() {
	awk -v a="$1" -v b="$2" -v d="${3:-2}" 'BEGIN { printf "%.*f", d, b ? a / b : 0 }'
}

# Per-second counter of a generator log: tp_stat FILE COUNTER
tp_stat() {
	awk -v k="$2" '$1 == k { print $2 }' "$1" | tail -n 1
}
