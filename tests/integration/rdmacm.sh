#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# rdma_cm end to end: Debian's unmodified rping (rdmacm-utils) through
# droce-run, i.e. droce's librdmacm.so.1 and verbs shim, connecting through
# droced's CM (REQ/REP/RTU on QP1, DREQ/DREP at the end): server on B and
# client on A, the reverse, and both on daemon A (the MADs never leave it).
# Each side must exit 0 and print every one of the pings with exactly the
# data rping puts in it (the client after its RDMA WRITE came back, the
# server after its RDMA READ), nothing else. Then ucmatose with 4
# connections at once (rdma_getaddrinfo, a listener's backlog, SENDs both
# ways on each), and perftest over rdma_cm (ib_send_bw, ib_write_bw,
# ib_read_lat with -R) and rdma_server / rdma_client (endpoints, synchronous
# ids, rdma_verbs.h), across the pair and on one daemon: both exit statuses
# decide, and the client's daemon must have sent CM MADs. rdma_client with
# no server must fail with ECONNREFUSED.
#
# fault: the pair with droce's fault-injection vdev on both ports (5% loss
# both ways, as run_tools.sh's fault mode): rping both ways and ucmatose
# across the pair must still connect, run and disconnect, the lost CM MADs
# made up by lib/cm's retransmissions (Linux's timeouts: 6.4 s per lost
# REQ, REP or DREQ), the lost data by RC's. The CM's retransmission and
# duplicate counters are printed.
#   rdmacm.sh [fault] BUILD_DIR
set -u
. "$(dirname "$0")/common.sh"
command -v rping >/dev/null 2>&1 || { echo "rping (rdmacm-utils) missing: skipped"; exit 77; }
mode=pair
tmo=60
if [ "$1" = fault ]; then
	mode=fault
	tmo=180		# a few lost MADs cost 6.4 s each
	pair_up "$2" -- --fault seed=7,loss=0.05,dir=both
else
	pair_up "$1"
fi
count=10
log=$(mktemp -d)
fail=0

# the lines rping -v prints: PREFIX COUNT
expected() {
	"$(dirname "$0")/rping_expected.sh" "$@"
}

# The value of droced's counter NAME on daemon SIDE.
cm_stat() {	# SIDE NAME
	eval "ns=\$DROCE_NS_$1"
	ip netns exec "$ns" "$build/app/ctl/droce-ctl" -p "droce$DROCE_TAG$1" stats |
		awk -v n="$2" '$1 == n { print $2 }'
}

# Wait (bounded) until daemon SIDE has no listener left from an earlier run
# (the worker frees a closed channel's ids after the tool has exited).
wait_no_listener() {	# SIDE
	i=0
	while [ $i -lt 100 ]; do
		[ "$(cm_stat "$1" cm_LISTENERS)" = 0 ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "FAIL a listener is left on daemon $1"
	return 1
}

# Wait (bounded) until daemon SIDE has a listener: rping -s prints nothing before.
wait_listener() {	# SIDE
	i=0
	while [ $i -lt 100 ]; do
		n=$(cm_stat "$1" cm_LISTENERS)
		[ "${n:-0}" -ge 1 ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "FAIL no listener on daemon $1"
	return 1
}

# run NAME SERVER_SIDE CLIENT_SIDE: rping between the two, judged.
run() {
	name=$1 srv=$2 cli=$3
	eval "run_s=\$DROCE_RUN_$srv run_c=\$DROCE_RUN_$cli ip=\$DROCE_IP_$srv"
	wait_no_listener "$srv" || { fail=1; return; }
	$run_s timeout $tmo rping -s -a "$ip" -v -C $count >"$log/$name.server" 2>&1 &
	pid=$!
	if wait_listener "$srv"; then
		$run_c timeout $tmo rping -c -a "$ip" -v -C $count >"$log/$name.client" 2>&1
		rc_c=$?
	else
		rc_c=1
		kill "$pid" 2>/dev/null
	fi
	wait "$pid"
	rc_s=$?
	expected "ping data: " $count >"$log/want.client"
	expected "server ping data: " $count >"$log/want.server"
	for side in client server; do
		eval "rc=\$rc_$(echo $side | cut -c1)"
		grep "ping data: " "$log/$name.$side" >"$log/got.$side"
		if [ "$rc" = 0 ] && cmp -s "$log/want.$side" "$log/got.$side"; then
			echo "ok   $name: $side exit 0, $count pings, every byte as sent"
		else
			echo "FAIL $name: $side exit $rc"
			sed 's/^/    /' "$log/$name.$side"
			fail=1
		fi
	done
}

run a-to-b B A
run b-to-a A B
[ $mode = fault ] || run one-daemon A A

# tool_run NAME SERVER_SIDE CLIENT_SIDE SERVER_CMD CLIENT_CMD: a server and
# a client tool through droce-run ($ip in CLIENT_CMD is the server's
# address); both exit statuses decide. The client's daemon must have sent CM
# MADs meanwhile, so the tool really connected through rdma_cm.
tool_run() {
	name=$1 srv=$2 cli=$3 scmd=$4 ccmd=$5
	eval "run_s=\$DROCE_RUN_$srv run_c=\$DROCE_RUN_$cli ip=\$DROCE_IP_$srv"
	wait_no_listener "$srv" || { fail=1; return; }
	mads=$(cm_stat "$cli" cm_TX_MADS)
	eval "$run_s timeout $tmo $scmd" >"$log/$name.server" 2>&1 &
	pid=$!
	rc_c=1
	if wait_listener "$srv"; then
		eval "$run_c timeout $tmo $ccmd" >"$log/$name.client" 2>&1
		rc_c=$?
	else
		kill "$pid" 2>/dev/null
	fi
	wait "$pid"
	rc_s=$?
	sent=$(($(cm_stat "$cli" cm_TX_MADS) - mads))
	if [ $rc_s = 0 ] && [ $rc_c = 0 ] && [ $sent -gt 0 ]; then
		echo "ok   $name: both sides exit 0, $sent CM MADs from the client's daemon"
	else
		echo "FAIL $name: server exit $rc_s, client exit $rc_c, $sent CM MADs"
		sed 's/^/    server: /' "$log/$name.server"
		sed 's/^/    client: /' "$log/$name.client" 2>/dev/null
		fail=1
	fi
}
command -v ucmatose >/dev/null 2>&1 && {
	tool_run ucmatose-a-to-b B A 'ucmatose -c 4' 'ucmatose -s $ip -c 4'
	[ $mode = fault ] || tool_run ucmatose-one-daemon A A 'ucmatose -c 4' 'ucmatose -s $ip -c 4'
}
if [ $mode = fault ]; then	# what the loss cost the CM (not judged: it depends on timing)
	for side in A B; do
		echo "info daemon $side: cm_RETRANSMITS $(cm_stat $side cm_RETRANSMITS)," \
			"cm_DUP_REQ $(cm_stat $side cm_DUP_REQ), cm_DUP_REP $(cm_stat $side cm_DUP_REP)," \
			"cm_DUP_DREQ $(cm_stat $side cm_DUP_DREQ), cm_TIMEOUTS $(cm_stat $side cm_TIMEOUTS)"
	done
	rm -rf "$log"
	exit $fail
fi

# perftest over rdma_cm (-R): the QPs connect through droced's CM, then the
# test runs; perftest exits non-zero on any failed call or completion.
command -v ib_send_bw >/dev/null 2>&1 && for t in ib_send_bw ib_write_bw ib_read_lat; do
	tool_run "$t-a-to-b" B A "$t -R -n 200" "$t -R -n 200 \$ip"
	tool_run "$t-one-daemon" A A "$t -R -n 200" "$t -R -n 200 \$ip"
done
# rdma_server / rdma_client: endpoints (rdma_getaddrinfo, rdma_create_ep with
# the id's own PD and CQs, synchronous ids, rdma_get_request) and the
# rdma_verbs.h helpers (rdma_reg_msgs, rdma_post_recv/send, rdma_get_*_comp).
# With no server, the client's synchronous rdma_connect fails as on Linux:
# ECONNREFUSED (REJ, Invalid Service ID), exit non-zero.
command -v rdma_server >/dev/null 2>&1 && {
	tool_run rdma_server-a-to-b B A 'rdma_server' 'rdma_client -s $ip'
	tool_run rdma_server-one-daemon A A 'rdma_server' 'rdma_client -s $ip'
	wait_no_listener B || fail=1
	$DROCE_RUN_A timeout $tmo rdma_client -s "$DROCE_IP_B" >"$log/refused" 2>&1
	rc=$?
	if [ $rc != 0 ] && [ $rc != 124 ] && grep -q "rdma_connect: Connection refused" "$log/refused"; then
		echo "ok   rdma_client with no server: exit $rc, rdma_connect: Connection refused"
	else
		echo "FAIL rdma_client with no server: exit $rc"
		sed 's/^/    /' "$log/refused"
		fail=1
	fi
}
rm -rf "$log"
exit $fail
