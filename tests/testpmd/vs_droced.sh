#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# droce-testpmd against droced: droced in one namespace serves a verbs
# program (verbs_peer, through the shim), droce-testpmd runs in the other
# on the veth's far end (net_af_packet). Each generator mode of
# droce-testpmd writes / sends / reads / adds into the program's memory
# region (UD: into its receives), and the program checks what arrived;
# the program drives droce-testpmd's responder and checks what it reads
# back; droce-testpmd's raw mode counts and checks UD frames from droced.
#   vs_droced.sh BUILD_DIR
set -u
. "$(dirname "$0")/../integration/common.sh"
command -v ip >/dev/null || { echo "no iproute2"; exit 77; }
pair_up "$1" --single
tp="ip netns exec $DROCE_NS_B $build/app/testpmd/droce-testpmd -l 0 --no-huge -m 512 --no-pci --"
tp_port="--iface $DROCE_IF_B --ip 10.99.0.2/24 --remote $DROCE_IP_A --idle yield --quiet"
peer=$build/tests/testpmd/verbs_peer
tmp=$(mktemp -d)
fail=0

# start_peer ARGS...: verbs_peer on droced, its stdin on fd 3
start_peer() {
	rm -f "$tmp/in" "$tmp/peer"
	mkfifo "$tmp/in"
	: >"$tmp/peer"		# empty before the peer opens it: no stale "qpn"
	$DROCE_RUN_A "$peer" "$@" <"$tmp/in" >>"$tmp/peer" 2>&1 &
	ppid=$!
	exec 3>"$tmp/in"
	i=0
	until grep -q '^qpn' "$tmp/peer" || [ $i -gt 200 ]; do sleep 0.05; i=$((i + 1)); done
	set -- $(grep '^qpn' "$tmp/peer")
	qpn=${2:-0} rkey=${4:-0} addr=${6:-0}
}

# finish_peer NAME: close its stdin, expect "ok"
finish_peer() {
	exec 3>&-
	wait $ppid
	if [ $? -eq 0 ] && grep -q '^ok' "$tmp/peer"; then
		echo "ok   $1"
	else
		echo "FAIL $1"
		sed 's/^/    peer: /' "$tmp/peer"
		grep -v EAL "$tmp/tp" | sed 's/^/    testpmd: /' | tail -n 25
		fail=1
	fi
}

size=512
count=2000
for mode in write send read fadd cswap ud; do
	kind=sink extra=
	[ $mode = ud ] && kind=udsink extra="--rate 5000"	# UD has no flow control
	start_peer $kind 10.99.0.2 0x100 $size
	$tp $tp_port --mode $mode --size $size --count $count --remote-qpn "$qpn" \
		--rkey "$rkey" --raddr "$addr" $extra --cmd 'start; wait 120; stop; show stats' \
		>"$tmp/tp" 2>&1 || echo "testpmd exited $?" >>"$tmp/peer"
	grep -q "^  MSGS *$count\$" "$tmp/tp" || echo "testpmd completed $(awk '$1 == "MSGS" { print $2 }' "$tmp/tp") of $count" >>"$tmp/peer"
	grep -q "^  ERRORS *0\$" "$tmp/tp" || echo "testpmd saw errors" >>"$tmp/peer"
	echo "check $mode $count" >&3
	finish_peer "droce-testpmd $mode -> droced ($count x $size B)"
done

# raw: droce-testpmd only checks and counts what droced sends it
start_peer udsource 10.99.0.2 0x100 500
$tp $tp_port --mode raw --cmd 'start; sleep 300; show stats' >"$tmp/tp" 2>&1 &
tpid=$!
i=0
until grep -q '^mode raw' "$tmp/tp" || [ $i -gt 200 ]; do sleep 0.05; i=$((i + 1)); done
echo go >&3
finish_peer "droced -> droce-testpmd raw: 500 UD messages sent"
sleep 0.5
kill -TERM $tpid
wait $tpid
ok=$(awk '$1 == "RX_OK" { print $2 }' "$tmp/tp")
if [ "$ok" = 500 ] && grep -q "^  RX_FRAMES *500\$" "$tmp/tp"; then
	echo "ok   droce-testpmd raw: 500 frames, 500 valid"
else
	echo "FAIL droce-testpmd raw: RX_OK '$ok' of 500"
	grep -v EAL "$tmp/tp" | sed 's/^/    testpmd: /'
	fail=1
fi

start_peer source 10.99.0.2 0x100 300
$tp $tp_port --mode responder --remote-qpn "$qpn" --cmd 'start; sleep 300; show stats' \
	>"$tmp/tp" 2>&1 &
tpid=$!
i=0
until grep -q '^mode responder' "$tmp/tp" || [ $i -gt 200 ]; do sleep 0.05; i=$((i + 1)); done
echo go >&3
finish_peer "droced -> droce-testpmd responder: WRITE, READ back, FETCH_ADD x 300"
kill -TERM $tpid
wait $tpid
rm -rf "$tmp"
exit $fail
