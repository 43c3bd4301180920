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
# ways on each), across the pair and on one daemon: both exit statuses decide.
#   rdmacm.sh BUILD_DIR
set -u
. "$(dirname "$0")/common.sh"
command -v rping >/dev/null 2>&1 || { echo "rping (rdmacm-utils) missing: skipped"; exit 77; }
pair_up "$1"
count=10
log=$(mktemp -d)
fail=0

# The lines rping -v prints for COUNT pings of the default 64 bytes, each
# prefixed with PREFIX: "rdma-ping-N: " then letters from 'A' + N on,
# cycling 'A'..'z', up to byte 63 (rping_test_client's pattern).
expected() {	# PREFIX COUNT
	awk -v prefix="$1" -v n="$2" 'BEGIN {
		start = 65
		for (p = 0; p < n; p++) {
			s = "rdma-ping-" p ": "
			c = start
			for (i = length(s); i < 63; i++) {
				s = s sprintf("%c", c)
				if (++c > 122) c = 65
			}
			print prefix s
			if (++start > 122) start = 65
		}
	}'
}

# Wait (bounded) until daemon SIDE has a listener: rping -s prints nothing before.
wait_listener() {	# SIDE
	eval "ns=\$DROCE_NS_$1"
	i=0
	while [ $i -lt 100 ]; do
		n=$(ip netns exec "$ns" "$build/app/ctl/droce-ctl" -p "droce$DROCE_TAG$1" stats |
			awk '$1 == "cm_LISTENERS" { print $2 }')
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
	$run_s timeout 60 rping -s -a "$ip" -v -C $count >"$log/$name.server" 2>&1 &
	pid=$!
	if wait_listener "$srv"; then
		$run_c timeout 60 rping -c -a "$ip" -v -C $count >"$log/$name.client" 2>&1
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
run one-daemon A A

# ucmatose NAME SERVER_SIDE CLIENT_SIDE
ucmatose_run() {
	name=$1 srv=$2 cli=$3
	eval "run_s=\$DROCE_RUN_$srv run_c=\$DROCE_RUN_$cli ip=\$DROCE_IP_$srv"
	$run_s timeout 60 ucmatose -c 4 >"$log/$name.server" 2>&1 &
	pid=$!
	rc_c=1
	if wait_listener "$srv"; then
		$run_c timeout 60 ucmatose -s "$ip" -c 4 >"$log/$name.client" 2>&1
		rc_c=$?
	else
		kill "$pid" 2>/dev/null
	fi
	wait "$pid"
	rc_s=$?
	if [ $rc_s = 0 ] && [ $rc_c = 0 ]; then
		echo "ok   $name: ucmatose, 4 connections, both sides exit 0"
	else
		echo "FAIL $name: ucmatose server exit $rc_s, client exit $rc_c"
		sed 's/^/    server: /' "$log/$name.server"
		sed 's/^/    client: /' "$log/$name.client" 2>/dev/null
		fail=1
	fi
}
command -v ucmatose >/dev/null 2>&1 && {
	ucmatose_run ucmatose-a-to-b B A
	ucmatose_run ucmatose-one-daemon A A
}
rm -rf "$log"
exit $fail
