#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# droce-testpmd against itself over net_memif, every mode: a generator
# posts a fixed count of messages, the peer serves (or, in raw mode, only
# checks) them. Both run with --check, so their exit statuses say that
# every message completed without error; the generator also checks each
# READ's data and each atomic's returned value against the responder's
# memory (the pattern). Then the counters of both sides must agree with
# the count, and the responder's atomic word must end exactly where the
# fetch-adds or the compare-and-swap chain took it. (Neither side checks
# WRITE or SEND payloads here: vs_droced.sh does, byte for byte.)
# Then both sides run two workers, a memif link each (a 2-queue link that
# keeps each worker's traffic apart): the same checks, each worker must
# have moved messages, and no frame may have needed a hand-off; with QPNs
# that put each QP's peer on the other worker, every frame lands on the
# wrong worker and must be handed to its owner, still without a fault.
# Then the same on one memif port with a queue pair per worker.
#   modes.sh BUILD_DIR
set -u
build=$1
tp=$build/app/testpmd/droce-testpmd
tmp=$(mktemp -d)
trap 'kill $rpid 2>/dev/null; rm -rf "$tmp"' EXIT
rpid=
fail=0
n=0
eal="--no-huge -m 512 --no-pci"
memif="socket=$tmp/memif.sock,socket-abstract=no"
# the link: one memif, or (workers) one per worker
peer_link="--vdev net_memif0,role=server,$memif -- --port net_memif0"
gen_link="--vdev net_memif0,role=client,$memif -- --port net_memif0"
socks=memif.sock
ready=
A="--ip 10.0.0.1/24 --mac 02:00:00:00:00:01 --neigh 10.0.0.2=02:00:00:00:00:02 --remote 10.0.0.2"
B="--ip 10.0.0.2/24 --mac 02:00:00:00:00:02 --neigh 10.0.0.1=02:00:00:00:00:01 --remote 10.0.0.1"

stat() {	# log counter
	awk -v k="$2" '$1 == k { print $2 }' "$1" | tail -n 1
}

# run NAME "PEER OPTIONS" "GENERATOR OPTIONS": the peer is the memif server
run() {
	name=$1
	n=$((n + 1))
	rm -f "$tmp"/memif*.sock
	: >"$tmp/gen"	# before anything waits on it: the last run's "halted" is gone
	# the peer polls until told to stop, or (--count) until it received
	# that many; it yields (2 cores, two pollers)
	$tp -l 1 $eal $peer_link $B \
		--idle yield --quiet --check $2 --cmd 'start; wait 120; show stats' >"$tmp/peer" 2>&1 &
	rpid=$!
	i=0
	for sock in $socks; do
		while [ ! -S "$tmp/$sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	done
	# several ports: until the peer has set up the last one (its memif
	# server refuses a client that comes earlier, and the client gives up)
	while [ -n "$ready" ] && ! grep -q "$ready" "$tmp/peer" && [ $i -lt 200 ]; do
		sleep 0.05; i=$((i + 1)); done
	# the generator halts its poller before the peer is stopped, and stays
	# open until the peer has exited (memif crashes a poller whose peer
	# leaves: a fixed 1.5 s was too short for a loaded machine, the peer
	# then died of SIGSEGV after its stats)
	$tp -l 0 $eal $gen_link $A \
		--idle yield --quiet --check $3 --cmd 'start; wait 60; stop; show stats; halt; sleep 120' \
		>"$tmp/gen" 2>&1 &
	gpid=$!
	i=0
	until grep -q '^halted' "$tmp/gen" || [ $i -gt 1300 ]; do sleep 0.05; i=$((i + 1)); done
	kill -TERM $rpid
	wait $rpid
	prc=$?
	kill -TERM $gpid	# ends its sleep
	wait $gpid
	grc=$?
	rpid=
	if [ $prc -ne 0 ] || [ $grc -ne 0 ]; then
		echo "FAIL $name: generator exit $grc, peer exit $prc"
		sed 's/^/    gen:  /' "$tmp/gen" | grep -v EAL | tail -n 25
		sed 's/^/    peer: /' "$tmp/peer" | grep -v EAL | tail -n 25
		fail=1
		return 1
	fi
	return 0
}

# expect NAME LOG COUNTER VALUE
expect() {
	got=$(stat "$2" "$3")
	if [ "$got" = "$4" ]; then
		echo "ok   $1: $3 = $4"
	else
		echo "FAIL $1: $3 = '$got', expected $4"
		grep -v EAL "$2" | sed 's/^/    /' | tail -n 30
		fail=1
	fi
}

# completed NAME COUNT: the generator completed COUNT messages, the checks
# of both sides found nothing
completed() {
	for k in MSGS:$2 ERRORS:0 QP_ERRORS:0 BAD_DATA:0; do
		expect "$1" "$tmp/gen" ${k%:*} ${k#*:}
	done
	for k in ERRORS QP_ERRORS BAD_DATA; do
		expect "$1, peer" "$tmp/peer" $k 0
	done
}

c=20000
# the responder's first word starts as the pattern's bytes 0..7
word0=$((0x0706050403020100))
for m in write send read fadd cswap; do
	spread= recv=
	case $m in
	read) spread="--rlen 1048576" ;;	# READs over a MiB of the responder's memory
	send) recv="--count $c" ;;		# the peer waits until it received them all
	esac
	run "$m" "--mode responder $recv" "--mode $m --count $c --size 256 $spread" || continue
	completed "$m" $c
	case $m in
	send) expect "$m, peer" "$tmp/peer" MSGS $c ;;
	read) expect "$m" "$tmp/gen" BYTES $((c * 256)) ;;
	fadd|cswap) expect "$m, peer's word" "$tmp/peer" atomic-word $((word0 + c)) ;;
	esac
done
# multi-packet messages: 10 000 bytes at path MTU 1024 are 10 packets each,
# each accepted once (the generator's TX_FRAMES would count retransmissions)
run "write 10000 B" "--mode responder" "--mode write --count 2000 --size 10000 --path-mtu 1024" && {
	completed "write 10000 B" 2000
	expect "write 10000 B, peer" "$tmp/peer" RX_PKTS $((2000 * 10))
}
run "read 10000 B" "--mode responder" \
	"--mode read --count 2000 --size 10000 --path-mtu 1024 --rlen 1048576" &&
	completed "read 10000 B" 2000
run "send 64 QPs" "--mode responder --qps 64 --count 64000" \
	"--mode send --qps 64 --count 64000" && {
	completed "send 64 QPs" 64000
	expect "send 64 QPs, peer" "$tmp/peer" MSGS 64000
}
# UD is unreliable: what the generator could not hand to a full memif ring
# (TX_FULL, TX_NOMBUF: a peer starved of CPU) is lost, counted, and no more
run "ud" "--mode responder --ud --qps 4 --count $c" \
	"--mode ud --qps 4 --count $c --size 512 --rate 200000" && {
	completed "ud" $c
	lost=$(($(stat "$tmp/gen" TX_FULL) + $(stat "$tmp/gen" TX_NOMBUF)))
	expect "ud, peer (less $lost the generator could not send)" "$tmp/peer" MSGS $((c - lost))
	[ $lost -le $((c / 100)) ] || { echo "FAIL ud: $lost of $c not sent"; fail=1; }
}
run "raw" "--mode raw --count $c" "--mode ud --count $c --size 100 --rate 200000" && {
	completed "raw" $c
	expect "raw" "$tmp/peer" RX_OK $c
	expect "raw" "$tmp/peer" RX_FRAMES $c
}

# Two workers a side, a memif link each (worker i's port is net_memif<i>).
m1="socket=$tmp/memif1.sock,socket-abstract=no"
peer_link="--vdev net_memif0,role=server,$memif --vdev net_memif1,role=server,$m1 --
	--port net_memif0 --port net_memif1 --workers 2"
gen_link="--vdev net_memif0,role=client,$memif --vdev net_memif1,role=client,$m1 --
	--port net_memif0 --port net_memif1 --workers 2"
socks="memif.sock memif1.sock"
ready="^port net_memif1 "

# workers NAME LOG [HANDOFF]: each worker moved messages; HANDOFF "some":
# frames were handed between them, otherwise none were
workers() {
	for w in 0 1; do
		got=$(stat "$2" worker$w.MSGS)
		if [ "${got:-0}" -gt 0 ]; then
			echo "ok   $1: worker $w moved $got messages"
		else
			echo "FAIL $1: worker $w moved '$got' messages"
			fail=1
		fi
	done
	got=$(stat "$2" HANDOFF)
	if [ "${3:-none}" = some ]; then
		[ "${got:-0}" -gt 0 ] && echo "ok   $1: $got frames handed off" ||
			{ echo "FAIL $1: no frame handed off"; fail=1; }
	else
		expect "$1" "$2" HANDOFF 0
	fi
}

for m in write send read; do
	spread= recv=
	case $m in
	read) spread="--rlen 1048576" ;;
	send) recv="--count $c" ;;
	esac
	run "$m, 2 workers" "--mode responder --qps 4 $recv" \
		"--mode $m --qps 4 --count $c --size 256 $spread" || continue
	completed "$m, 2 workers" $c
	workers "$m, 2 workers" "$tmp/gen"
	case $m in
	send)
		expect "$m, 2 workers, peer" "$tmp/peer" MSGS $c
		workers "$m, 2 workers, peer" "$tmp/peer" ;;
	read) expect "$m, 2 workers" "$tmp/gen" BYTES $((c * 256)) ;;
	esac
done
# generator QP i talks to the peer's QP i + 1, which is the other worker's:
# every frame arrives on the wrong worker's link on both sides
run "send, 2 workers, crossed QPNs" \
	"--mode responder --qps 5 --qpn 0x100 --remote-qpn 0xff --count $c" \
	"--mode send --qps 4 --count $c --remote-qpn 0x101" && {
	completed "send, 2 workers, crossed QPNs" $c
	expect "send, 2 workers, crossed QPNs, peer" "$tmp/peer" MSGS $c
	workers "send, 2 workers, crossed QPNs" "$tmp/gen" some
	workers "send, 2 workers, crossed QPNs, peer" "$tmp/peer" some
}

# Two workers a side on one memif port with a queue pair each (memif
# delivers on the queue its peer sent on): the same checks; crossed QPNs
# again put every frame on the wrong worker's queue
peer_link="--vdev net_memif0,role=server,$memif -- --port net_memif0 --workers 2"
gen_link="--vdev net_memif0,role=client,$memif -- --port net_memif0 --workers 2"
socks=memif.sock
ready=
for m in write read; do
	spread=
	[ $m = read ] && spread="--rlen 1048576"
	run "$m, 2 workers, one 2-queue port" "--mode responder --qps 4" \
		"--mode $m --qps 4 --count $c --size 256 $spread" || continue
	completed "$m, 2 workers, one 2-queue port" $c
	workers "$m, 2 workers, one 2-queue port" "$tmp/gen"
done
run "send, 2 workers, one 2-queue port, crossed QPNs" \
	"--mode responder --qps 5 --qpn 0x100 --remote-qpn 0xff --count $c" \
	"--mode send --qps 4 --count $c --remote-qpn 0x101" && {
	completed "send, 2 workers, one 2-queue port, crossed QPNs" $c
	expect "send, 2 workers, one 2-queue port, crossed QPNs, peer" "$tmp/peer" MSGS $c
	workers "send, 2 workers, one 2-queue port, crossed QPNs" "$tmp/gen" some
	workers "send, 2 workers, one 2-queue port, crossed QPNs, peer" "$tmp/peer" some
}
exit $fail
