#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# qemu_migrate.sh BUILD_DIR: Debian's QEMU, unmodified, migrating a guest
# over RDMA (`-incoming rdma:`, `migrate rdma:`) through droce-run from
# side A to side B of the namespace pair. The guest is a TCG pc machine of
# 64 MiB with no disk: its firmware runs a second and writes its RAM. Each
# case must end in "completed", and the guest's RAM on both sides (QMP
# pmemsave) must be the same byte for byte, and unlike what the destination
# held before:
#   1. default RAM (private anonymous memory: the shim moves it), paused;
#   2. the same with the rdma-pin-all capability (all RAM registered first);
#   3. memory-backend-memfd,share=on (shared memory, registered in place:
#      what vhost-user and virtiofs need);
#   4. memory-backend-file,share=on on tmpfs;
#   5. a running guest, migrated while it runs (both stop at the end).
# Then the same RAM over kernel TCP on the same veth, for the figure beside
# it (printed, not judged). Skips (77) without root or QEMU.
set -u

. "$(dirname "$0")/../integration/common.sh"

command -v qemu-system-x86_64 >/dev/null 2>&1 ||
	{ echo "QEMU is not installed (apt-get install qemu-system-x86)"; exit 77; }
pair_up "$1"
qmp="/usr/bin/python3 $(dirname "$0")/qmp.py"
work=$(mktemp -d /dev/shm/droce-qemu.XXXXXX)	# tmpfs: mem-path's files
fails=0
port=4444
mem=64M
bytes=$((64 << 20))

qemu_down() {
	[ -n "${spid:-}" ] && kill "$spid" 2>/dev/null
	[ -n "${dpid:-}" ] && kill "$dpid" 2>/dev/null
	wait 2>/dev/null
	spid= dpid=
}
trap 'rc=$?; qemu_down; rm -rf "$work"; (exit $rc); pair_down' EXIT

# migrate NAME TRANSPORT "MACHINE OPTIONS" [pin-all] [running]
migrate() {
	name=$1 tr=$2 m=$3
	shift 3
	port=$((port + 1))
	rm -f "$work"/*.sock "$work"/*.mem "$work"/ram-*
	if [ "$tr" = rdma ]; then
		run_s=$DROCE_RUN_A run_d=$DROCE_RUN_B uri=rdma:$DROCE_IP_B:$port
	else	# the kernel's TCP on the same veth, in the same namespaces
		run_s="ip netns exec $DROCE_NS_A" run_d="ip netns exec $DROCE_NS_B"
		uri=tcp:$DROCE_IP_B:$port
	fi
	# @ in a mem-path: each side its own file
	common="-display none -nodefaults -S -accel tcg"
	$run_d qemu-system-x86_64 $common $(echo "$m" | sed "s|@|$work/ram-dst|g") -qmp "unix:$work/dst.sock,server=on,wait=off" \
		-incoming "$uri" >"$work/dst.log" 2>&1 &
	dpid=$!
	$run_s qemu-system-x86_64 $common $(echo "$m" | sed "s|@|$work/ram-src|g") -qmp "unix:$work/src.sock,server=on,wait=off" \
		>"$work/src.log" 2>&1 &
	spid=$!
	i=0
	while { [ ! -S "$work/src.sock" ] || [ ! -S "$work/dst.sock" ]; } && [ $i -lt 100 ]; do
		sleep 0.1; i=$((i + 1)); done
	caps=
	for c in "$@"; do
		[ "$c" = pin-all ] && caps='{"execute":"migrate-set-capabilities","arguments":{"capabilities":[{"capability":"rdma-pin-all","state":true}]}}'
	done
	[ -n "$caps" ] && $qmp "$work/dst.sock" "$caps" >/dev/null
	# the firmware runs a second: its RAM is not all zero
	if echo "$*" | grep -q running; then
		$qmp "$work/src.sock" '{"execute":"cont"}' >/dev/null
		sleep 1
	else
		$qmp "$work/src.sock" '{"execute":"cont"}' >/dev/null
		sleep 1
		$qmp "$work/src.sock" '{"execute":"stop"}' >/dev/null
	fi
	# the destination before: unlike the source's RAM, or the check proves nothing
	$qmp "$work/dst.sock" "{\"execute\":\"pmemsave\",\"arguments\":{\"val\":0,\"size\":$bytes,\"filename\":\"$work/pre.mem\"}}" >/dev/null
	t0=$(date +%s%N)
	res=$($qmp "$work/src.sock" ${caps:+"$caps"} \
		"{\"execute\":\"migrate\",\"arguments\":{\"uri\":\"$uri\"}}" wait-migrate | tail -n 1)
	t1=$(date +%s%N)
	st=$(echo "$res" | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["return"].get("status"))' 2>/dev/null)
	# after the migration both are stopped: the same RAM on both sides?
	$qmp "$work/src.sock" '{"execute":"stop"}' >/dev/null
	$qmp "$work/src.sock" "{\"execute\":\"pmemsave\",\"arguments\":{\"val\":0,\"size\":$bytes,\"filename\":\"$work/src.mem\"}}" >/dev/null
	$qmp "$work/dst.sock" "{\"execute\":\"pmemsave\",\"arguments\":{\"val\":0,\"size\":$bytes,\"filename\":\"$work/dst.mem\"}}" >/dev/null
	nz=$(tr -d '\000' <"$work/src.mem" 2>/dev/null | wc -c)
	ms=$(( (t1 - t0) / 1000000 ))
	if [ "$st" = completed ] && cmp -s "$work/src.mem" "$work/dst.mem" && [ "$nz" -gt 0 ] &&
		! cmp -s "$work/pre.mem" "$work/dst.mem"; then
		ok "$name: completed in $ms ms, the RAM alike on both sides ($nz non-zero bytes)"
	else
		fail "$name: status '$st', RAM $(cmp "$work/src.mem" "$work/dst.mem" 2>&1 | head -n 1)"
		sed 's/^/    source: /' "$work/src.log" | tail -n 5
		sed 's/^/    dest:   /' "$work/dst.log" | tail -n 5
	fi
	qemu_down
}

plain="-m $mem"
migrate "RDMA, default RAM, paused" rdma "$plain"
migrate "RDMA, rdma-pin-all, paused" rdma "$plain" pin-all
migrate "RDMA, memory-backend-memfd share=on" rdma \
	"-object memory-backend-memfd,id=ram,size=$mem,share=on -machine pc,memory-backend=ram -m $mem"
migrate "RDMA, memory-backend-file share=on (tmpfs)" rdma \
	"-object memory-backend-file,id=ram,size=$mem,share=on,mem-path=@ -machine pc,memory-backend=ram -m $mem"
migrate "RDMA, running guest" rdma "$plain" running
migrate "TCP (kernel, same veth), default RAM, paused" tcp "$plain"
[ "$fails" = 0 ]
