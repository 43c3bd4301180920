#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# dapl.sh BUILD_DIR: Debian's DAPL 2.1 (libdapl2, dapl2-utils), unmodified,
# through droce-run across the namespace pair with its rdma_cm provider
# (libdaplofa.so.2, ofa-v2-cma-roe-* in /etc/dat.conf): each side reads a
# dat.conf of our own (DAT_OVERRIDE) naming its veth. Servers in B,
# clients in A:
#  - dtest: RDMA WRITE bursts each way with a SEND after them, RDMA READs
#    and a ping-pong of SENDs, at 64 B and 1 MiB; dtest checks each
#    completion's cookie, status and length and the strings written and
#    read; then its data-check mode (-D): 1000 RDMA WRITE round trips of
#    64 KiB, the client comparing every byte the server wrote back.
#  - dapltest's transaction test with validation (-V: every byte of every
#    buffer, each iteration's pattern) over two endpoints: SEND/RECV both
#    ways, RDMA WRITE and READ from the client (64 KiB) and RDMA WRITE from
#    the server (2 x 8 KiB), 100 iterations; then its quit request, which
#    the server must obey and exit 0.
# dtest exits 0 even when it prints "DAPL Test Complete. FAILED": each
# side must print PASSED. dtest's server tells its client where to connect
# (TCP port 15828) before it listens for the connection: a client that
# connects first is refused (REJ reason 8, no listener, as on Linux) and the
# server then waits for ever. That race is dtest's; dtest_relay.py passes
# the server's message on only once the server listens (doc/user-guide.md).
# Skips (77) without root or DAPL.
set -u

. "$(dirname "$0")/../integration/common.sh"

command -v dtest >/dev/null 2>&1 && command -v dapltest >/dev/null 2>&1 ||
	{ echo "dapl2-utils is not installed (apt-get install dapl2-utils libdapl2)"; exit 77; }
ldconfig -p | grep -q 'libdaplofa\.so\.2 ' ||
	{ echo "libdapl2 is not installed (no libdaplofa.so.2)"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
pair_up "$1"
work=$(mktemp -d)
trap 'rc=$?; kill ${spid:-} ${rpid:-} 2>/dev/null; rm -rf "$work"; (exit $rc); pair_down' EXIT
fails=0
provider=ofa-v2-droce
for side in A B; do
	eval "ifname=\$DROCE_IF_$side"
	echo "$provider u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 \"$ifname 0\" \"\"" \
		>"$work/dat-$side.conf"
done

# dtest NAME ARGS: server in B, client in A through dtest_relay.py (dtest's
# own race, there); both must print PASSED
dtest_pair() {
	name=$1
	shift
	# line-buffered: the relay reads when it listens, and a killed server's log is whole
	DAT_OVERRIDE=$work/dat-B.conf timeout 120 $DROCE_RUN_B stdbuf -oL dtest -P $provider -s "$@" \
		>"$work/srv" 2>&1 &
	spid=$!
	: >"$work/relay"
	timeout 100 ip netns exec "$DROCE_NS_A" /usr/bin/python3 "$here/dtest_relay.py" 127.0.0.1 \
		"$DROCE_IP_B" "$work/srv" >"$work/relay" 2>&1 &
	rpid=$!
	until grep -q listening "$work/relay" || ! kill -0 $rpid 2>/dev/null; do sleep 0.1; done
	DAT_OVERRIDE=$work/dat-A.conf timeout 120 $DROCE_RUN_A dtest -P $provider -h 127.0.0.1 "$@" \
		>"$work/cli" 2>&1
	crc=$?
	wait $rpid
	rrc=$?
	wait $spid
	src=$?
	spid='' rpid=''
	if [ $crc = 0 ] && [ $src = 0 ] && [ $rrc = 0 ] &&
		grep -q 'DAPL Test Complete. PASSED' "$work/cli" &&
		grep -q 'DAPL Test Complete. PASSED' "$work/srv"; then
		ok "dtest $name: $(sed -n \
			-e 's/^[0-9]*: \(.*PingPong\): (\([^)]*\)).*latency \([0-9.]*\) us, BW \([0-9.]*\).*/\1 (\2) \3 us \4 MB\/s;/p' \
			-e 's/^[0-9]*: RDMA write (bi-direction).* \([0-9.]*\) MB\/sec.*/RDMA write both ways \1 MB\/s;/p' \
			"$work/cli" | tr '\n' ' ')"
	else
		fail "dtest $name: client exit $crc, server exit $src, relay exit $rrc"
		grep -v '^$' "$work/relay" | sed 's/^/    relay: /'
		grep -v '^$' "$work/cli" | tail -n 6 | sed 's/^/    client: /'
		grep -v '^$' "$work/srv" | tail -n 4 | sed 's/^/    server: /'
	fi
}

dtest_pair "64 B, 1000 WRITEs each way" -b 64 -B 1000
dtest_pair "1 MiB, 100 WRITEs each way" -b 1048576 -B 100
dtest_pair "-D, 1000 WRITE round trips of 64 KiB checked" -D -b 65536 -B 1000
grep -q 'Running DATA CHECK mode' "$work/cli" ||
	fail "dtest -D: the client did not run in its data-check mode"

# dapltest: a server loop in B, a validated transaction test, then quit
DAT_OVERRIDE=$work/dat-B.conf timeout 120 $DROCE_RUN_B stdbuf -oL dapltest -T S -D $provider >"$work/srv" 2>&1 &
spid=$!
# its port is rdma_cm's, not TCP's: it says when it listens
i=0
while [ $i -lt 100 ] && ! grep -q 'Service Point Ready' "$work/srv"; do
	sleep 0.2
	i=$((i + 1))
done
DAT_OVERRIDE=$work/dat-A.conf timeout 120 $DROCE_RUN_A dapltest -T T -s "$DROCE_IP_B" -D $provider \
	-i 100 -t 1 -w 2 -V client SR 4096 server SR 4096 client RW 65536 client RR 65536 \
	server RW 8192 2 >"$work/cli" 2>&1
crc=$?
if [ $crc = 0 ] && grep -q 'End of Work -- Client Exiting' "$work/cli" &&
	! grep -qi 'error' "$work/cli"; then
	ok "dapltest -T T -V: $(grep -E '^Total (Send|RDMA)' "$work/cli" | sed 's/  */ /g' | tr '\n' ';')"
else
	fail "dapltest -T T -V: client exit $crc"
	grep -v '^$' "$work/cli" | tail -n 8 | sed 's/^/    client: /'
fi
DAT_OVERRIDE=$work/dat-A.conf timeout 60 $DROCE_RUN_A dapltest -T Q -s "$DROCE_IP_B" -D $provider \
	>"$work/quit" 2>&1
qrc=$?
wait $spid
src=$?
spid=
[ $qrc = 0 ] && [ $src = 0 ] && ok "dapltest -T Q: the server quit, exit 0" ||
	{ fail "dapltest -T Q: exit $qrc, server exit $src"; tail -n 4 "$work/srv" | sed 's/^/    server: /'; }

[ $fails = 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all DAPL checks passed"
