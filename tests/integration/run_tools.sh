#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# Integration test: Debian's unmodified rdma-core tools through droce.
#   run_tools.sh pair|single|fault|fault10|jumbo|wait|memif BUILD_DIR
# pair: two droced in two network namespaces joined by a veth pair
# (net_af_packet); single: both sides on one droced (loopback); fault: the
# pair with droce's fault-injection vdev on both ports (1.5% loss, 1%
# duplication, 5% reordering, 0.5% corruption, each direction, fixed seed);
# fault10: 10% loss, 5% duplication, 10% reordering, 2% corruption of
# every frame, applied once (on the sending port); jumbo: the pair on a
# 9000-byte veth, path MTU 4096; wait: the pair with --idle wait; memif:
# the pair joined by net_memif (a queue per worker) instead of the veth.
# Each tool must exit 0 on both sides. The stock tools check little data
# (rdma-core 44's pingpong -c compares one byte per page and still exits 0
# on a mismatch; perftest checks none), so every mode also runs the
# project's traffic checker (tests/traffic/traffic_check.c), which verifies
# every byte, the memory around it and every completion of RC, UC and UD
# traffic. Clients use completion events (-e) where the tool has them: on a
# 2-core machine busy-polling clients starve the daemons.
# Exit 77 (skipped) without root or network namespaces.
set -u
mode=$1
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)"; exit 77; }
command -v ibv_rc_pingpong >/dev/null || { echo "ibverbs-utils missing"; exit 77; }
ip netns add droce-probe 2>/dev/null && ip netns del droce-probe || { echo "no netns"; exit 77; }

. "$(dirname "$0")/common.sh"
case "$mode" in
single) pair_up "$2" --single ;;
jumbo) pair_up "$2" --mtu 9000 ;;
# fault: both ports fault both ways, so a frame crosses two stages: 1.5%
# loss and 0.5% corruption per stage lose ~4% of frames, a go-back-N round
# fails at most ~8%, and a run (~1 000 rounds that fail, perftest's and
# traffic_check's) ends a QP by retry_cnt 7's eight failed rounds with
# probability ~1000 x 0.08^7 < 3e-5 (measured in 20 runs: 968 first rounds
# failed per run, 1 in 16 of those and of the next continued, deepest 5).
# At 5% and 1% (~12% of frames, rounds ~20%) 40 runs had 1 QP end so, as
# on any IBA device (rxe takes retry_cnt 7 as forever).
fault) pair_up "$2" -- --fault seed=7,loss=0.015,dup=0.01,reorder=0.05,corrupt=0.005,dir=both ;;
# fault10 faults each frame once, on its sender's TX: with dir=both a frame
# crosses two stages (~22% lost or damaged each way, ~40% of round trips),
# where retry_cnt 7's eight go-back-N rounds fail running often enough to
# end a QP in one CI run of ten, on any RoCE device (measured: one lost
# round in 3 continued into the next; with dir=tx, one in 5)
fault10) pair_up "$2" -- --fault seed=11,loss=0.1,dup=0.05,reorder=0.1,corrupt=0.02,dir=tx ;;
# wait: the pair with both daemons sleeping in epoll when idle (--idle
# wait): woken by the shim's doorbell eventfd, the af_packet wake socket
# and the control thread, never by a poll
wait) pair_up "$2" -- --idle wait ;;
# memif: the pair joined by net_memif instead of the veth (a queue per
# worker: with two workers frames arrive on the queue their sender used)
memif) pair_up "$2" --memif ;;
# pair with workers: hand-off rings of 64 frames, so that frames the kernel's
# fanout puts on the wrong worker's queue often find the ring full and must
# wait (none may be dropped: the checks after the tools)
*) if [ "${DROCE_WORKERS:-1}" -gt 1 ]; then
	pair_up "$2" -- --handoff-slots 64
   else
	pair_up "$2"
   fi ;;
esac

fail=0
log=$(mktemp -d)

# wait_listen PID: until the server (PID) listens on the tools' TCP port
# 18515 in its namespace (at most 10 s), not a fixed sleep: under load a
# client started too early could not connect and its server waited 120 s
srv_ns=$DROCE_NS_B
[ "$DROCE_IP_B" = "$DROCE_IP_A" ] && srv_ns=$DROCE_NS_A
wait_listen() {
	i=0
	while [ $i -lt 200 ] && kill -0 "$1" 2>/dev/null &&
		! ip netns exec "$srv_ns" ss -Hltn 'sport = :18515' | grep -q .; do
		sleep 0.05
		i=$((i + 1))
	done
}

# run NAME SERVER_AND_CLIENT_ARGS...: server on side B, client on side A
run() {
	name=$1
	shift
	$DROCE_RUN_B timeout 120 "$@" >"$log/server" 2>&1 &
	spid=$!
	wait_listen $spid
	$DROCE_RUN_A timeout 120 "$@" "$DROCE_IP_B" >"$log/client" 2>&1
	crc=$?
	wait $spid
	src=$?
	if [ $crc -eq 0 ] && [ $src -eq 0 ]; then
		echo "ok   $name: $(grep -E 'iters in|^ *[0-9]+ +[0-9]+ ' "$log/client" | tail -n 1 | tr -s ' ')"
	else
		echo "FAIL $name: client exit $crc, server exit $src"
		sed 's/^/    client: /' "$log/client" | tail -n 15
		sed 's/^/    server: /' "$log/server" | tail -n 15
		fail=1
	fi
}

# traffic NAME OPTIONS...: the traffic checker, serving on side B, driven
# from side A; both must exit 0 (every check passed). Its case lines go to
# the log either way.
tc=$build/tests/traffic/traffic_check
traffic() {
	name=$1
	shift
	$DROCE_RUN_B timeout 600 "$tc" serve -d "$DROCE_DEV" -g "$DROCE_GID_INDEX" "$@" \
		>"$log/server" 2>&1 &
	spid=$!
	$DROCE_RUN_A timeout 600 "$tc" drive -d "$DROCE_DEV" -g "$DROCE_GID_INDEX" "$@" \
		"$DROCE_IP_B" >"$log/client" 2>&1
	crc=$?
	wait $spid
	src=$?
	sed 's/^/    /' "$log/client"
	if [ $crc -eq 0 ] && [ $src -eq 0 ]; then
		echo "ok   traffic_check $name"
	else
		echo "FAIL traffic_check $name: client exit $crc, server exit $src"
		sed 's/^/    server: /' "$log/server" | tail -n 20
		fail=1
	fi
}

g="-g $DROCE_GID_INDEX"
if [ "$mode" = jumbo ]; then
	# veth MTU 9000: path MTU 4096 (and 1024 still allowed below it)
	$DROCE_RUN_A ibv_devinfo | grep -q "active_mtu:.*4096" ||
		{ echo "FAIL active_mtu is not 4096"; fail=1; }
	run "rc_pingpong mtu 4096" ibv_rc_pingpong -d "$DROCE_DEV" $g -n 50 -s 20000 -m 4096 -c -e
	run "rc_pingpong mtu 4096, 1 MiB" ibv_rc_pingpong -d "$DROCE_DEV" $g -n 10 -s 1048576 -m 4096 -c -e
	run "rc_pingpong mtu 1024 on a jumbo link" ibv_rc_pingpong -d "$DROCE_DEV" $g -n 20 -s 5000 -m 1024 -c -e
	run "ud_pingpong 4 KiB" ibv_ud_pingpong -d "$DROCE_DEV" $g -n 20 -s 4096 -c -e
	run "ib_write_bw mtu 4096" ib_write_bw -d "$DROCE_DEV" -x "$DROCE_GID_INDEX" -n 300 -m 4096
	run "ib_read_bw mtu 4096" ib_read_bw -d "$DROCE_DEV" -x "$DROCE_GID_INDEX" -n 300 -m 4096
	traffic "mtu 4096" -m 4096 -s 4
	traffic "mtu 2048 on a jumbo link" -m 2048 -s 5 -c rc-write,rc-send,rc-read,uc,ud
	rm -rf "$log"
	exit $fail
fi
if [ "$mode" = fault ] || [ "$mode" = fault10 ]; then
	# (no pingpong here: its client exits right after its last receive, so a
	# lost final ACK leaves the server retrying against a destroyed QP, on
	# any RoCE device; the traffic checker ends only when everything it
	# sent is acknowledged)
	run "ib_write_bw, lossy" ib_write_bw -d "$DROCE_DEV" -x "$DROCE_GID_INDEX" -n 100 -s 16384
	run "ib_read_bw, lossy" ib_read_bw -d "$DROCE_DEV" -x "$DROCE_GID_INDEX" -n 100 -s 16384
	run "ib_atomic_bw, lossy" ib_atomic_bw -d "$DROCE_DEV" -x "$DROCE_GID_INDEX" -n 200
	# RC must hide the loss completely; UC/UD may lose whole messages.
	# Go-back-N resends whole windows and a lost retransmission waits for
	# the ACK timeout, so big messages crawl through loss: every case up to
	# 4 KiB + 1, then RC up to 1 MiB (fault) or WRITE and READ up to 64 KiB
	# (fault10).
	traffic "lossy" --lossy -s 6 --max-size 4097
	if [ "$mode" = fault ]; then
		traffic "lossy, RC up to 1 MiB" --lossy -s 8 -c rc-send,rc-write,rc-read -n 3 \
			--budget 2 --max-size 1048579
	else
		traffic "lossy, RC WRITE and READ up to 64 KiB" --lossy -s 8 \
			-c rc-write,rc-write_imm,rc-read -n 3 --max-size 65537
	fi
	rm -rf "$log"
	exit $fail
fi
run "ibv_devices" true
$DROCE_RUN_A ibv_devices | grep -q "$DROCE_DEV" || { echo "FAIL ibv_devices lists no $DROCE_DEV"; fail=1; }
$DROCE_RUN_A ibv_devinfo -v >"$log/devinfo" 2>&1 && grep -q "PORT_ACTIVE" "$log/devinfo" &&
	grep -q "RoCE v2" "$log/devinfo" && echo "ok   ibv_devinfo -v" ||
	{ echo "FAIL ibv_devinfo -v"; cat "$log/devinfo"; fail=1; }

run "rc_pingpong" ibv_rc_pingpong -d "$DROCE_DEV" $g -n 100 -c -e
run "rc_pingpong 1 MiB" ibv_rc_pingpong -d "$DROCE_DEV" $g -n 10 -s 1048576 -c -e
run "rc_pingpong 100 B polling" ibv_rc_pingpong -d "$DROCE_DEV" $g -n 20 -s 100 -c
run "rc_pingpong mtu 1024" ibv_rc_pingpong -d "$DROCE_DEV" $g -n 20 -s 5000 -m 1024 -c -e
run "uc_pingpong" ibv_uc_pingpong -d "$DROCE_DEV" $g -n 50 -s 2048 -c -e
run "ud_pingpong" ibv_ud_pingpong -d "$DROCE_DEV" $g -n 50 -s 512 -c -e
run "srq_pingpong" ibv_srq_pingpong -d "$DROCE_DEV" $g -n 50 -c -e
run "ib_write_bw" ib_write_bw -d "$DROCE_DEV" -x "$DROCE_GID_INDEX" -n 500
run "ib_send_bw" ib_send_bw -d "$DROCE_DEV" -x "$DROCE_GID_INDEX" -n 500
# four QPs of one context on one CQ: with --workers N they run on different
# workers. 4 KiB messages: 4 QPs x 128 in flight x 64 KiB would be 32 768
# frames in flight, eight times a hand-off ring (and the kernel's RX ring),
# lost whenever the receiving worker is not scheduled in time on this
# machine's two shared cores (RC then retransmits: no error, but a drop)
run "ib_write_bw -q 4" ib_write_bw -d "$DROCE_DEV" -x "$DROCE_GID_INDEX" -n 500 -q 4 -s 4096
run "ib_send_bw -q 4" ib_send_bw -d "$DROCE_DEV" -x "$DROCE_GID_INDEX" -n 500 -q 4 -s 4096
run "ib_read_bw" ib_read_bw -d "$DROCE_DEV" -x "$DROCE_GID_INDEX" -n 500
run "ib_atomic_bw" ib_atomic_bw -d "$DROCE_DEV" -x "$DROCE_GID_INDEX" -n 500
run "ib_atomic_bw cmp_swap" ib_atomic_bw -d "$DROCE_DEV" -x "$DROCE_GID_INDEX" -n 500 -A CMP_AND_SWAP
run "ib_write_lat" ib_write_lat -d "$DROCE_DEV" -x "$DROCE_GID_INDEX" -n 200
run "ib_send_lat" ib_send_lat -d "$DROCE_DEV" -x "$DROCE_GID_INDEX" -n 200
run "ib_read_lat" ib_read_lat -d "$DROCE_DEV" -x "$DROCE_GID_INDEX" -n 200
traffic "all cases" -s 1
traffic "all cases, polling, path MTU 256" --poll -m 256 -s 2 --max-size 70000
traffic "atomics, many ops" -c atomic -n 256 -s 3

# wait: the daemons slept, and what woke them includes the clients'
# doorbell eventfds and the port's wake socket (not only the timeout)
if [ "$mode" = wait ]; then
	for side in A B; do
		eval "ns=\$DROCE_NS_$side"
		ip netns exec "$ns" "$2/app/ctl/droce-ctl" -p "droce$DROCE_TAG$side" stats \
			>"$log/stats-$side"
		for c in wait_sleeps wait_woken_client wait_woken_port; do
			v=$(awk -v n=$c '$1 == n { print $2 }' "$log/stats-$side")
			if [ "${v:-0}" -gt 0 ]; then
				echo "ok: daemon $side $c $v"
			else
				echo "FAIL: daemon $side $c ${v:-missing}"
				fail=1
			fi
		done
	done
fi

# --workers N (DROCE_WORKERS): every engine of every daemon ran QPs and
# carried packets of its own QPs (each QP is placed on the least loaded
# engine), and hand-offs between workers lost nothing
if [ "${DROCE_WORKERS:-1}" -gt 1 ]; then
	sides="A B"
	[ "$mode" = single ] && sides=A
	for side in $sides; do
		eval "ns=\$DROCE_NS_$side"
		ip netns exec "$ns" "$2/app/ctl/droce-ctl" -p "droce$DROCE_TAG$side" stats \
			>"$log/stats-$side"
		e=0
		while [ $e -lt "$DROCE_WORKERS" ]; do
			v=$(awk -v n="engine${e}_rx_pkts" '$1 == n { print $2 }' "$log/stats-$side")
			q=$(awk -v n="engine${e}_qps_created" '$1 == n { print $2 }' "$log/stats-$side")
			if [ "${v:-0}" -gt 0 ] && [ "${q:-0}" -gt 0 ]; then
				echo "ok: daemon $side engine $e ran $q QPs, received $v packets for them"
			else
				echo "FAIL: daemon $side engine $e ran ${q:-no count of} QPs," \
					"received ${v:-no count of} packets"
				fail=1
			fi
			e=$((e + 1))
		done
		# how many arrived on another worker's queue (the kernel's fanout hash decides)
		awk '$1 == "handoff_frames" || $1 == "RX_HANDOFF" { print "daemon '"$side"': " $1, $2 }' \
			"$log/stats-$side"
		awk '$1 == "handoff_held" { print "daemon '"$side"': " $1, $2 }' "$log/stats-$side"
		for c in RX_HANDOFF_FAIL handoff_dropped; do
			v=$(awk -v n=$c '$1 == n { print $2 }' "$log/stats-$side")
			if [ "${v:-x}" = 0 ]; then
				echo "ok: daemon $side $c 0"
			else
				echo "FAIL: daemon $side $c ${v:-missing}"
				fail=1
			fi
		done
	done
fi

rm -rf "$log"
exit $fail
