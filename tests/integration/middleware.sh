#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# middleware.sh BUILD_DIR: Debian's qperf and libfabric, unmodified, on
# droce across the namespace pair, through droce-run (the verbs shim, droce's
# librdmacm and the /sys view):
#   1. qperf -cm1 (rdma_cm connections, qperf's own TCP control connection
#      on 19765): server on B, client on A. rc_lat, rc_bw, rc_rdma_read_bw,
#      rc_rdma_write_lat and ver_rc_compare_swap, ver_rc_fetch_add (which
#      check every atomic's result) must exit 0 and report a number above 0,
#      and the client's daemon must have sent CM MADs. uc_lat, ud_lat and ud_bw
#      ignore -cm1 in qperf 0.4.11 and address the peer by LID alone, with
#      no GRH: a RoCE device refuses that (Linux's too, EINVAL), so they must
#      fail at once with that refusal (the client's, or the server's passed
#      on by the client or printed by the server), and the server must live on.
#   2. fi_info -p verbs: droce0's MSG domain (fabric IB-0x<GID 0's subnet
#      prefix>, rdma_cm's RC protocol, our IPv4 address as source), its
#      DGRAM domain droce0-dgram, verbs;ofi_rxm's RDM on droce0, and the
#      link as ibv_devinfo sees it (up, Ethernet, active MTU).
#   3. fi_pingpong with data checks (-c) across the pair: -p verbs -e msg
#      and -p "verbs;ofi_rxm" -e rdm; both sides exit 0, every size row has
#      each message sent and acknowledged, and the client's daemon sent CM
#      MADs. Then verbs;ofi_rxm again with FI_VERBS_PREFER_XRC=1 (droce has
#      no XRC: the provider must fall back to RC) and FI_VERBS_USE_ODP=1
#      (ON_DEMAND MRs are on-demand paged: droced reaches them at each access).
# Skips (77) only without root or without the packages (qperf,
# libfabric-bin), naming what is missing.
set -u

. "$(dirname "$0")/common.sh"

missing=""
command -v qperf >/dev/null 2>&1 || missing="$missing qperf"
for p in fi_info fi_pingpong; do
	command -v $p >/dev/null 2>&1 || { missing="$missing libfabric-bin"; break; }
done
[ -z "$missing" ] || { echo "not installed:$missing (apt-get install$missing)"; exit 77; }
pair_up "$1"

fails=0
log=$(mktemp -d)

# The value of droced's counter NAME on daemon SIDE.
stat_of() {	# SIDE NAME
	eval "ns=\$DROCE_NS_$1"
	timeout 10 ip netns exec "$ns" "$build/app/ctl/droce-ctl" -p "droce$DROCE_TAG$1" stats |
		awk -v n="$2" '$1 == n { print $2 }'
}

# Wait (bounded) until TCP PORT listens in namespace SIDE while PID lives.
wait_tcp() {	# SIDE PORT PID
	eval "ns=\$DROCE_NS_$1"
	i=0
	until ip netns exec "$ns" ss -ltn | grep -q ":$2 "; do
		i=$((i + 1))
		[ $i -le 200 ] && kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
	done
}

# ---- 1. qperf ----
$DROCE_RUN_B timeout 300 qperf >"$log/qperf.server" 2>&1 &
qsrv=$!
if ! wait_tcp B 19765 $qsrv; then
	fail "qperf server: not listening on 19765"
	sed 's/^/    /' "$log/qperf.server"
else
	for t in rc_lat rc_bw rc_rdma_read_bw rc_rdma_write_lat ver_rc_compare_swap ver_rc_fetch_add; do
		mads=$(stat_of A cm_TX_MADS)
		$DROCE_RUN_A timeout 60 qperf -cm1 -t 2 "$DROCE_IP_B" $t >"$log/qperf.$t" 2>&1
		rc=$?
		sent=$(($(stat_of A cm_TX_MADS) - mads))
		# "    latency  =  48.3 us", "    bw  =  193 MB/sec", "    msg_rate  =  12.9 K/sec"
		res=$(awk '$1 == "latency" || $1 == "bw" || $1 == "msg_rate" { print $3, $4 }' "$log/qperf.$t")
		if [ $rc = 0 ] && [ -n "$res" ] && awk -v v="${res% *}" 'BEGIN { exit !(v > 0) }' &&
			[ $sent -gt 0 ]; then
			ok "qperf -cm1 $t: $res, $sent CM MADs"
		else
			fail "qperf -cm1 $t: exit $rc, result '$res', $sent CM MADs"
			sed 's/^/    /' "$log/qperf.$t"
		fi
	done
	# LID-addressed, GRH-less: refused as on any RoCE device (EINVAL)
	for t in uc_lat:"failed to modify QP to RTR" ud_lat:"failed to create address handle: Invalid argument" \
		ud_bw:"failed to create address handle: Invalid argument"; do
		name=${t%%:*} why=${t#*:}
		seen=$(wc -c <"$log/qperf.server")
		$DROCE_RUN_A timeout 60 qperf -cm1 -t 2 "$DROCE_IP_B" $name >"$log/qperf.$name" 2>&1
		rc=$?
		# qperf's server sends its error as urgent data and then the text; a
		# client that reads before the text arrives prints "server: " alone
		# (qperf's race), so the server's own line counts too.
		tail -c +$((seen + 1)) "$log/qperf.server" >"$log/qperf.$name.server"
		if failed_cleanly $rc && cat "$log/qperf.$name" "$log/qperf.$name.server" | grep -q "$why"; then
			ok "qperf $name (no -cm1 in qperf, no GRH): refused, '$why', exit $rc"
		else
			fail "qperf $name: exit $rc, not the refusal '$why'"
			sed 's/^/    /' "$log/qperf.$name" "$log/qperf.$name.server"
		fi
	done
	kill -0 $qsrv 2>/dev/null && ok "qperf server alive after the refusals" ||
		fail "qperf server died"
fi
$DROCE_RUN_A timeout 30 qperf "$DROCE_IP_B" quit >/dev/null 2>&1
wait $qsrv
rc=$?
[ $rc = 0 ] && ok "qperf server: quit, exit 0" || { fail "qperf server exit $rc"; sed 's/^/    /' "$log/qperf.server"; }

# ---- 2. fi_info ----
fab="IB-0x$($DROCE_RUN_A cat "/sys/class/infiniband/$DROCE_DEV/ports/1/gids/0" | tr -d : | cut -c1-16)"
mtu=$($DROCE_RUN_A ibv_devinfo -v | awk '$1 == "active_mtu:" { print $2; exit }')
if ! $DROCE_RUN_A timeout 30 fi_info -p verbs >"$log/fi_info" 2>&1; then
	fail "fi_info -p verbs exited non-zero"
	sed 's/^/    /' "$log/fi_info"
fi
# one line per entry: provider fabric domain type protocol
awk '$1 == "provider:" { if (p != "") print p, f, d, t, pr; p = $2 }
	$1 == "fabric:" { f = $2 } $1 == "domain:" { d = $2 } $1 == "type:" { t = $2 }
	$1 == "protocol:" { pr = $2 } END { if (p != "") print p, f, d, t, pr }' "$log/fi_info" >"$log/entries"
for want in "verbs $fab $DROCE_DEV FI_EP_MSG FI_PROTO_RDMA_CM_IB_RC" \
	"verbs $fab $DROCE_DEV-dgram FI_EP_DGRAM FI_PROTO_IB_UD" \
	"verbs;ofi_rxm $fab $DROCE_DEV FI_EP_RDM FI_PROTO_RXM"; do
	grep -qxF "$want" "$log/entries" && ok "fi_info: $want" || fail "fi_info lists no '$want'"
done
other=$(awk -v d="$DROCE_DEV" '$3 != d && $3 != d "-dgram"' "$log/entries")
[ -z "$other" ] || fail "fi_info lists another domain: $other"
$DROCE_RUN_A timeout 30 fi_info -p verbs -t FI_EP_MSG -v >"$log/fi_info.v" 2>&1
# the MSG domain's first entry: its source address, device and link
awk '/^---/ { n++ } n == 1' "$log/fi_info.v" >"$log/msg.v"
for want in "src_addr: fi_sockaddr_in://$DROCE_IP_A:0" "name: $DROCE_DEV" "state: FI_LINK_UP" \
	"network_type: Ethernet" "mtu: $mtu"; do
	grep -q "^ *$want\$" "$log/msg.v" && ok "fi_info -v (MSG): $want" || fail "fi_info -v (MSG): no '$want'"
done

# ---- 3. fi_pingpong ----
n=50
for case in "verbs msg" "verbs;ofi_rxm rdm"; do
	prov=${case% *} ep=${case#* }
	name=$(echo "$prov-$ep" | tr ';' '+')
	mads=$(stat_of A cm_TX_MADS)
	$DROCE_RUN_B timeout 300 fi_pingpong -p "$prov" -e $ep -c -I $n >"$log/$name.server" 2>&1 &
	srv=$!
	crc=1
	if wait_tcp B 47592 $srv; then
		$DROCE_RUN_A timeout 300 fi_pingpong -p "$prov" -e $ep -c -I $n "$DROCE_IP_B" >"$log/$name.client" 2>&1
		crc=$?
	fi
	wait $srv
	src=$?
	sent=$(($(stat_of A cm_TX_MADS) - mads))
	# rows: bytes #sent #ack ...; "#ack" is "=N" when all came back
	rows=$(awk -v n=$n '$1 ~ /^[0-9]+[km]?$/ && $2 == n && $3 == "=" n { r++ } END { print r + 0 }' \
		"$log/$name.client")
	last=$(awk '$1 ~ /^[0-9]+[km]?$/ { l = $1 " bytes: " $7 " usec/xfer, " $6 " MB/sec" } END { print l }' \
		"$log/$name.client")
	if [ $crc = 0 ] && [ $src = 0 ] && [ "$rows" -ge 6 ] && [ $sent -gt 0 ]; then
		ok "fi_pingpong -p '$prov' -e $ep -c: both exit 0, $rows sizes x $n checked, $last; $sent CM MADs"
	else
		fail "fi_pingpong -p '$prov' -e $ep -c: client exit $crc, server exit $src, $rows full rows, $sent CM MADs"
		sed 's/^/    client: /' "$log/$name.client" 2>/dev/null
		sed 's/^/    server: /' "$log/$name.server"
	fi
done

# what the provider may ask for and droce lacks (XRC) or may serve (ODP):
# it must fall back or be served, never fail (64 KiB messages, -c)
for e in FI_VERBS_PREFER_XRC=1 FI_VERBS_USE_ODP=1; do
	$DROCE_RUN_B env $e timeout 300 fi_pingpong -p "verbs;ofi_rxm" -e rdm -c -I 20 -S 65536 \
		>"$log/$e.server" 2>&1 &
	srv=$!
	crc=1
	if wait_tcp B 47592 $srv; then
		$DROCE_RUN_A env $e timeout 300 fi_pingpong -p "verbs;ofi_rxm" -e rdm -c -I 20 -S 65536 \
			"$DROCE_IP_B" >"$log/$e.client" 2>&1
		crc=$?
	fi
	wait $srv
	src=$?
	if [ $crc = 0 ] && [ $src = 0 ] && grep -q '^64k *20 *=20 ' "$log/$e.client"; then
		ok "$e fi_pingpong verbs;ofi_rxm: both exit 0, 20 x 64 KiB checked"
	else
		fail "$e fi_pingpong verbs;ofi_rxm: client exit $crc, server exit $src"
		sed 's/^/    client: /' "$log/$e.client" 2>/dev/null
		sed 's/^/    server: /' "$log/$e.server"
	fi
done

rm -rf "$log"
[ $fails = 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all qperf and libfabric checks passed"
