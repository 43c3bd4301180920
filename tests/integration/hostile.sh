#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# A hostile client and a client killed mid-transfer against droced: the
# daemon stays up, frees what they owned, counts the abuse, and serves the
# next client.   hostile.sh BUILD_DIR
set -u
. "$(dirname "$0")/common.sh"
pair_up "$1"
fail=0
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

echo "== kill -9 a client mid-transfer"
$DROCE_RUN_B timeout 60 ib_write_bw -d "$DROCE_DEV" -x "$DROCE_GID_INDEX" -n 1000000 >/dev/null 2>&1 &
spid=$!
sleep 1
$DROCE_RUN_A ib_write_bw -d "$DROCE_DEV" -x "$DROCE_GID_INDEX" -n 1000000 "$DROCE_IP_B" >/dev/null 2>&1 &
sleep 3
for p in $(ip netns pids "$DROCE_NS_A"); do	# only our namespace's client
	[ "$(cat /proc/$p/comm 2>/dev/null)" = ib_write_bw ] && kill -9 "$p"
done
wait $spid
echo "server exited with $? after its peer died (not hung)"
sleep 0.5
alive
for side in A B; do
	[ "$(stat $side qps)" = 0 ] && [ "$(stat $side clients)" = 0 ] ||
		{ echo "FAIL side $side kept objects: qps $(stat $side qps) clients $(stat $side clients)"; fail=1; }
done

echo "== the next client is served"
$DROCE_RUN_B timeout 60 ibv_rc_pingpong -d "$DROCE_DEV" -g "$DROCE_GID_INDEX" -n 20 -c -e >/dev/null 2>&1 &
spid=$!
sleep 0.7
$DROCE_RUN_A timeout 60 ibv_rc_pingpong -d "$DROCE_DEV" -g "$DROCE_GID_INDEX" -n 20 -c -e "$DROCE_IP_B" >/dev/null 2>&1 ||
	{ echo "FAIL pingpong after the abuse"; fail=1; }
wait $spid || { echo "FAIL pingpong server after the abuse"; fail=1; }
[ $fail = 0 ] && echo "ok"
exit $fail
