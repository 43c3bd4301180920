#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# droce-testpmd against itself on the af_packet namespace pair, two workers
# a side on one port: a queue pair (a socket in one PACKET_FANOUT group)
# per worker, the kernel spreading flows over them by hash. Both sides
# start without a static neighbour, so each resolves the other by ARP
# whichever queue the reply lands on; frames that land on the worker not
# owning their QP are handed over. WRITE and SEND, 4 QPs, with --check:
# both exit statuses decide, the generator completed the count without an
# error, the SEND receiver counted every message, each generator worker
# moved messages.
#   fanout.sh BUILD_DIR
set -u
. "$(dirname "$0")/../integration/common.sh"
command -v ip >/dev/null || { echo "no iproute2"; exit 77; }
pair_up "$1"
# the link without the daemons: droce-testpmd owns both ends
"$top/scripts/netns-pair" stop A >/dev/null || exit 1
"$top/scripts/netns-pair" stop B >/dev/null || exit 1
tp="$build/app/testpmd/droce-testpmd --no-huge -m 512 --no-pci"
tmp=$(mktemp -d)
fail=0
count=20000

val() {	# LOG COUNTER
	awk -v k="$2" '$1 == k { print $2 }' "$1" | tail -n 1
}

for mode in write send; do
	recv=
	[ $mode = send ] && recv="--count $count"
	ip netns exec "$DROCE_NS_B" $tp -l 1 --file-prefix "fanout${DROCE_TAG}b" -- \
		--iface "$DROCE_IF_B" --ip "$DROCE_IP_B/24" --remote "$DROCE_IP_A" --workers 2 \
		--idle yield --quiet --check --mode responder --qps 4 $recv \
		--cmd 'start; wait 120; show stats' >"$tmp/peer" 2>&1 &
	ppid=$!
	i=0
	until grep -q '^mode ' "$tmp/peer" || [ $i -gt 200 ]; do sleep 0.05; i=$((i + 1)); done
	ip netns exec "$DROCE_NS_A" $tp -l 0 --file-prefix "fanout${DROCE_TAG}a" -- \
		--iface "$DROCE_IF_A" --ip "$DROCE_IP_A/24" --remote "$DROCE_IP_B" --workers 2 \
		--idle yield --quiet --check --mode $mode --qps 4 --count $count --size 256 \
		--cmd 'start; wait 120; stop; show stats' >"$tmp/gen" 2>&1
	grc=$?
	[ $mode = send ] || kill -TERM $ppid 2>/dev/null
	wait $ppid
	prc=$?
	why=
	[ $grc -eq 0 ] || why="$why; generator exit $grc"
	[ $prc -eq 0 ] || why="$why; receiver exit $prc"
	[ "$(val "$tmp/gen" MSGS)" = $count ] || why="$why; generator MSGS $(val "$tmp/gen" MSGS)"
	[ $mode = write ] || [ "$(val "$tmp/peer" MSGS)" = $count ] ||
		why="$why; receiver MSGS $(val "$tmp/peer" MSGS)"
	for w in 0 1; do
		[ "$(val "$tmp/gen" worker$w.MSGS)" -gt 0 ] 2>/dev/null ||
			why="$why; generator worker $w moved no message"
	done
	if [ -z "$why" ]; then
		echo "ok   $mode, 2 workers on one af_packet port: $count messages," \
			"handed over $(val "$tmp/gen" HANDOFF) / $(val "$tmp/peer" HANDOFF)"
	else
		echo "FAIL $mode, 2 workers on one af_packet port$why"
		grep -v EAL "$tmp/gen" | sed 's/^/    gen:  /' | tail -n 25
		grep -v EAL "$tmp/peer" | sed 's/^/    peer: /' | tail -n 25
		fail=1
	fi
done
rm -rf "$tmp"
exit $fail
