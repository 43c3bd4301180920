#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# A hostile client and clients killed mid-transfer against droced: the
# daemon stays up, frees what they owned, counts the abuse, and serves the
# next client. A kill proves it hit a running transfer (both counters of
# the victim's daemon rising between two samples just before, the victim
# still running); the surviving peer must see it: a requester whose
# responder died gets a retry-exceeded completion (status 12) and exits
# non-zero.   hostile.sh BUILD_DIR
set -u
. "$(dirname "$0")/common.sh"
pair_up "$1"
fail=0
log=$(mktemp -d)
stat() {	# side counter
	ip netns exec "droce$DROCE_TAG$1" "$build/app/ctl/droce-ctl" -p "droce$DROCE_TAG$1" stats |
		awk -v k="$2" '$1 == k { print $2 }'
}
alive() {
	for side in A B; do
		kill -0 "$(cat $DROCE_STATE/droced-$side.pid)" 2>/dev/null ||
			{ echo "FAIL droced $side died"; fail=1; }
	done
}

echo "== hostile client"
ip netns exec $DROCE_NS_A "$build/tests/integration/hostile_client" $DROCE_STATE/A.sock || fail=1
sleep 0.5
alive
[ "$(stat A qps)" = 0 ] && [ "$(stat A clients)" = 0 ] && [ "$(stat A mrs)" = 0 ] ||
	{ echo "FAIL objects left after the hostile client:"; stat A qps; fail=1; }
[ "$(stat A BAD_WQE)" -ge 3 ] && [ "$(stat A BAD_RING)" -ge 1 ] ||
	{ echo "FAIL abuse not counted: BAD_WQE $(stat A BAD_WQE) BAD_RING $(stat A BAD_RING)"; fail=1; }

# objects_freed SIDE: no QP and no client left (teardown may take a moment)
objects_freed() {
	i=0
	until [ "$(stat $1 qps)" = 0 ] && [ "$(stat $1 clients)" = 0 ]; do
		i=$((i + 1))
		[ $i -gt 50 ] && return 1
		sleep 0.1
	done
}

# kill_mid_transfer SIDE: SIGKILL the ib_write_bw of SIDE once its daemon's
# TX_PKTS and RX_PKTS both rose between two samples and it still runs
kill_mid_transfer() {
	ns=droce$DROCE_TAG$1
	i=0
	while [ $i -lt 40 ]; do
		t1=$(stat $1 TX_PKTS) r1=$(stat $1 RX_PKTS)
		sleep 0.25
		t2=$(stat $1 TX_PKTS) r2=$(stat $1 RX_PKTS)
		victim=
		for p in $(ip netns pids "$ns"); do	# only that namespace's tool
			[ "$(cat /proc/$p/comm 2>/dev/null)" = ib_write_bw ] && victim=$p
		done
		if [ -n "$victim" ] && [ "${t1:-0}" -gt 0 ] && [ "${r1:-0}" -gt 0 ] &&
			[ "${t2:-0}" -gt "$t1" ] && [ "${r2:-0}" -gt "$r1" ] &&
			kill -9 "$victim" 2>/dev/null; then
			echo "ok   killed side $1's ib_write_bw mid-transfer (its daemon's TX_PKTS $t1 -> $t2, RX_PKTS $r1 -> $r2)"
			return 0
		fi
		i=$((i + 1))
	done
	echo "FAIL no transfer running on side $1 to kill (TX_PKTS $t1 -> $t2, RX_PKTS $r1 -> $r2)"
	fail=1
	return 1
}

# write_bw_then_kill SIDE: ib_write_bw, server (responder) on B and client
# (requester) on A, the tool on SIDE killed mid-transfer; sets $crc, $src
write_bw_then_kill() {
	$DROCE_RUN_B timeout 60 ib_write_bw -d "$DROCE_DEV" -x "$DROCE_GID_INDEX" -n 1000000 \
		>"$log/server" 2>&1 &
	spid=$!
	sleep 1
	$DROCE_RUN_A timeout 60 ib_write_bw -d "$DROCE_DEV" -x "$DROCE_GID_INDEX" -n 1000000 \
		"$DROCE_IP_B" >"$log/client" 2>&1 &
	cpid=$!
	kill_mid_transfer "$1" || kill $cpid $spid 2>/dev/null
	wait $cpid
	crc=$?
	wait $spid
	src=$?
}

peer_sees() {	# NAME EXIT LOG: the survivor exited on its own, non-zero
	if [ "$2" != 0 ] && [ "$2" != 124 ]; then
		echo "ok   $1 exited $2: $(grep -m 1 -i 'fail' "$3")"
	else
		echo "FAIL $1 exited $2 (want non-zero, not the timeout's 124)"
		sed 's/^/    /' "$3" | tail -n 10
		fail=1
	fi
}

freed() {	# after a kill: both daemons up, everything freed
	alive
	for side in A B; do
		objects_freed $side ||
			{ echo "FAIL side $side kept objects: qps $(stat $side qps) clients $(stat $side clients)"; fail=1; }
	done
}

echo "== kill -9 the responder mid-transfer: the requester sees retry exceeded"
write_bw_then_kill B
peer_sees "the requester (ib_write_bw client)" $crc "$log/client"
grep -q 'Failed status 12:' "$log/client" &&
	echo "ok   its completion status is 12, IBV_WC_RETRY_EXC_ERR" ||
	{ echo "FAIL the requester reported no status 12 (retry exceeded)"; fail=1; }
freed

echo "== kill -9 the requester mid-transfer: the responder's tool is not left hanging"
write_bw_then_kill A
peer_sees "the responder (ib_write_bw server)" $src "$log/server"
freed

echo "== the next client is served"
$DROCE_RUN_B timeout 60 ibv_rc_pingpong -d "$DROCE_DEV" -g "$DROCE_GID_INDEX" -n 20 -c -e >/dev/null 2>&1 &
spid=$!
sleep 0.7
$DROCE_RUN_A timeout 60 ibv_rc_pingpong -d "$DROCE_DEV" -g "$DROCE_GID_INDEX" -n 20 -c -e "$DROCE_IP_B" >/dev/null 2>&1 ||
	{ echo "FAIL pingpong after the abuse"; fail=1; }
wait $spid || { echo "FAIL pingpong server after the abuse"; fail=1; }
rm -rf "$log"
[ $fail = 0 ] && echo "ok"
exit $fail
