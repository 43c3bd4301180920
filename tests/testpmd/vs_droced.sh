#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# droce-testpmd against droced: droced in one namespace serves a verbs
# program (verbs_peer, through the shim), droce-testpmd runs in the other
# on the veth's far end (net_af_packet). Each generator mode of
# droce-testpmd writes / sends / reads / adds / swaps into the program's
# memory region (UD: into its receives): the program checks every byte
# and word that arrived, droce-testpmd (--check) every byte it READ and
# every value its atomics returned. Then the program drives droce-testpmd's
# responder (READ of its memory, WRITE and READ back, atomic chains, all
# checked), and so does the project's traffic checker
# (tests/traffic/traffic_check.c, --responder); droce-testpmd's raw mode
# counts and checks UD frames from droced. Both programs' exit statuses
# and droce-testpmd's counters decide.
#   vs_droced.sh BUILD_DIR
set -u
. "$(dirname "$0")/../integration/common.sh"
command -v ip >/dev/null || { echo "no iproute2"; exit 77; }
pair_up "$1" --single
tp="ip netns exec $DROCE_NS_B $build/app/testpmd/droce-testpmd -l 0 --no-huge -m 512 --no-pci --"
tp_port="--iface $DROCE_IF_B --ip 10.99.0.2/24 --remote $DROCE_IP_A --idle yield --quiet --check"
peer=$build/tests/testpmd/verbs_peer
tmp=$(mktemp -d)
fail=0
prc=0 trc=0

# start_peer PROGRAM ARGS...: a verbs program on droced, its stdin on fd 3
start_peer() {
	rm -f "$tmp/in" "$tmp/peer" "$tmp/tp"
	mkfifo "$tmp/in"
	: >"$tmp/peer"		# empty before the peer opens it: no stale "qpn"
	$DROCE_RUN_A "$@" <"$tmp/in" >>"$tmp/peer" 2>&1 &
	ppid=$!
	exec 3>"$tmp/in"
	i=0
	until grep -q '^qpn' "$tmp/peer" || [ $i -gt 200 ]; do sleep 0.05; i=$((i + 1)); done
	set -- $(grep '^qpn' "$tmp/peer")
	qpn=${2:-0} rkey=${4:-0} addr=${6:-0} len=${8:-0}
}

# finish_peer: close its stdin (the generator is done), wait for its verdict
finish_peer() {
	exec 3>&-
	wait $ppid
	prc=$?
}

# start_tp ARGS...: droce-testpmd in the background, until its QPs are up
start_tp() {
	$tp $tp_port "$@" >"$tmp/tp" 2>&1 &
	tpid=$!
	i=0
	until grep -q '^mode ' "$tmp/tp" || [ $i -gt 200 ]; do sleep 0.05; i=$((i + 1)); done
}

# stop_tp [SECONDS]: let droce-testpmd end its command list, then end its wait
stop_tp() {
	i=0
	while kill -0 $tpid 2>/dev/null && [ $i -lt $((${1:-0} * 20)) ]; do
		sleep 0.05
		i=$((i + 1))
	done
	kill -TERM $tpid 2>/dev/null
	wait $tpid
	trc=$?
}

# judge NAME [COUNTER=VALUE ...]: both exit statuses, then droce-testpmd's counters
judge() {
	name=$1
	shift
	why=
	[ $prc -eq 0 ] || why="$why; the verbs program exited $prc"
	[ $trc -eq 0 ] || why="$why; droce-testpmd exited $trc"
	for want; do
		got=$(awk -v k="${want%%=*}" '$1 == k { print $2 }' "$tmp/tp" | tail -n 1)
		[ "$got" = "${want#*=}" ] || why="$why; ${want%%=*} is '$got', expected ${want#*=}"
	done
	if [ -z "$why" ]; then
		echo "ok   $name"
	else
		echo "FAIL $name$why"
		sed 's/^/    peer: /' "$tmp/peer"
		grep -v EAL "$tmp/tp" | sed 's/^/    testpmd: /' | tail -n 30
		fail=1
	fi
}

# multi-packet messages (path MTU 1024) that cross pages; UD fits a packet
count=2000
for mode in write send read fadd cswap ud; do
	size=3000 extra=
	[ $mode = ud ] && size=1000 extra="--rate 5000"	# UD has no flow control
	start_peer "$peer" $mode 10.99.0.2 0x100 $size $count
	$tp $tp_port --mode $mode --size $size --count $count --remote-qpn "$qpn" \
		--rkey "$rkey" --raddr "$addr" --rlen "$len" $extra \
		--cmd 'start; wait 120; stop; show stats' >"$tmp/tp" 2>&1
	trc=$?
	finish_peer
	case $mode in fadd|cswap) size=8 ;; esac
	judge "droce-testpmd $mode -> droced ($count x $size B)" \
		MSGS=$count ERRORS=0 QP_ERRORS=0 BAD_DATA=0
done

# raw: droce-testpmd only checks and counts what droced sends it
start_peer "$peer" udsource 10.99.0.2 0x100 500
start_tp --mode raw --count 500 --cmd 'start; wait 300; show stats'
echo go >&3
finish_peer
stop_tp 10	# its wait ends at the 500th frame
judge "droced -> droce-testpmd raw: 500 UD messages, 500 valid frames" RX_FRAMES=500 RX_OK=500

# the source's words start as droce-testpmd's pattern: bytes 0..7 and 8..15
start_peer "$peer" source 10.99.0.2 0x100 300
start_tp --mode responder --remote-qpn "$qpn" --cmd 'start; sleep 300; show stats'
echo go >&3
finish_peer
stop_tp
judge "droced -> droce-testpmd responder: READ, WRITE and READ back, atomic chains x 300" \
	ERRORS=0 QP_ERRORS=0 atomic-word=$((0x0706050403020100 + 300))

# the project's traffic checker drives the responder on its own: READs of
# the pattern, WRITEs read back (1 B to 300 KiB, 1 to 4 SGEs), atomic
# chains, then a READ of all 4 MiB, every byte and completion checked
start_peer "$build/tests/traffic/traffic_check" drive -d "$DROCE_DEV" -g "$DROCE_GID_INDEX" \
	-m 1024 -n 16 --budget 2 --deadline 120 --responder 0x100:0x1000:0:4194304 10.99.0.2
psn=$rkey	# its line is "qpn Q psn P"
start_tp --mode responder --mem 4194304 --path-mtu 1024 --remote-qpn "$qpn" \
	--remote-psn "$psn" --cmd 'start; sleep 300; show stats'
echo go >&3
finish_peer
stop_tp
judge "traffic_check -> droce-testpmd responder: READ, WRITE + READ back, atomics" \
	ERRORS=0 QP_ERRORS=0
rm -rf "$tmp"
exit $fail
