#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# ucx.sh BUILD_DIR: Debian's UCX, unmodified, on droce across the namespace
# pair, through droce-run and its Linux view (droced_sysfs.c):
#   1. the view: /dev/infiniband/uverbs0 is a character device, the sysfs
#      tree agrees with ibv_devinfo -v (node GUID, port state, GIDs, types,
#      netdevs), device/net/<if> leads to the interface;
#   2. ucx_info -d lists droce0:1 with rc_verbs and ud_verbs;
#   3. ucx_perftest tag_lat, tag_bw, ucp_put_bw, ucp_get, ucp_am_bw with
#      UCX_TLS=rc_v and ud_v, the registration cache forced on
#      (UCX_IB_RCACHE=yes): server on side B, client on side A; both must
#      exit 0 and the client must report its final line with every iteration;
#      tag_bw with both again with hugepages reserved (the test reserves 128
#      if fewer than 64 are free): UCX's memory pools then come from System V
#      hugetlb segments it registers, and it must have taken some; then
#      ucp_put_bw and ucp_get again with UCX_IB_REG_METHODS=odp (UCX's
#      implicit on-demand paging region): both daemons must copy through ODP,
#      and tests/integration/ucx_rma_check's puts and gets keep every byte;
#   4. the counters afterwards: device-lifetime (every QP is gone by then),
#      equal to droce-ctl's, port_*_data in 4-byte words;
#   5. Prometheus node_exporter's infiniband collector reads them unchanged.
# Skips (77) only without root or without UCX (ucx-utils).
set -u

. "$(dirname "$0")/common.sh"

for p in ucx_info ucx_perftest; do
	command -v $p >/dev/null 2>&1 || { echo "UCX is not installed ($p: apt-get install ucx-utils)"; exit 77; }
done
pair_up "$1"

fails=0

# ---- 1. the view ----
sysdev=/sys/class/infiniband/$DROCE_DEV
ifa=dra$DROCE_TAG
$DROCE_RUN_A sh -c "test -c /dev/infiniband/uverbs0 && test -r /dev/infiniband/uverbs0 &&
	test -w /dev/infiniband/uverbs0" && ok "/dev/infiniband/uverbs0 is a character device" ||
	fail "/dev/infiniband/uverbs0 is not a readable, writable character device"
devinfo=$($DROCE_RUN_A ibv_devinfo -v) || fail "ibv_devinfo -v"
view() {	# FILE under the device's sysfs directory, read through droce-run
	$DROCE_RUN_A cat "$sysdev/$1" 2>/dev/null
}
want=$(echo "$devinfo" | awk '$1 == "node_guid:" { print $2 }')
[ -n "$want" ] && [ "$(view node_guid)" = "$want" ] && ok "node_guid $want" ||
	fail "node_guid: sysfs '$(view node_guid)', ibv_devinfo '$want'"
[ "$(view node_type)" = "1: CA" ] && ok "node_type" || fail "node_type '$(view node_type)'"
want=$(echo "$devinfo" | awk '$1 == "state:" { print $3 }' | tr -d '()')
[ "$(view ports/1/state)" = "$want: ACTIVE" ] && ok "port state" ||
	fail "ports/1/state '$(view ports/1/state)', ibv_devinfo $want"
[ "$(view ports/1/link_layer)" = Ethernet ] && ok "link_layer" || fail "link_layer"
# every GID: the same address as ibv_devinfo's (which compresses it), RoCE v2, on the veth
echo "$devinfo" | sed -n 's/.*GID\[ *\([0-9]*\)\]:[[:space:]]*\([^,]*\),.*/\1 \2/p' >"$DROCE_STATE/gids"
[ -s "$DROCE_STATE/gids" ] || fail "ibv_devinfo -v lists no GID"
while read -r idx addr; do
	got=$(view "ports/1/gids/$idx")
	/usr/bin/python3 -c 'import ipaddress, sys; sys.exit(ipaddress.ip_address(sys.argv[1]) != ipaddress.ip_address(sys.argv[2]))' \
		"$got" "$addr" 2>/dev/null && ok "gids/$idx $got" || fail "gids/$idx '$got', ibv_devinfo $addr"
	[ "$(view "ports/1/gid_attrs/types/$idx")" = "RoCE v2" ] || fail "gid_attrs/types/$idx"
	[ "$(view "ports/1/gid_attrs/ndevs/$idx")" = "$ifa" ] || fail "gid_attrs/ndevs/$idx"
done <"$DROCE_STATE/gids"
$DROCE_RUN_A test -r "$sysdev/device/net/$ifa/address" && ok "device/net/$ifa" ||
	fail "device/net/$ifa does not lead to the interface"
[ "$($DROCE_RUN_A cat /sys/class/infiniband_verbs/uverbs0/ibdev)" = "$DROCE_DEV" ] &&
	ok "infiniband_verbs/uverbs0/ibdev" || fail "infiniband_verbs/uverbs0/ibdev"
# a non-root user gets the same view (through a user namespace)
[ "$(ip netns exec "$DROCE_NS_A" setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$build/app/run/droce-run" --socket "$DROCE_STATE/A.sock" cat "$sysdev/ports/1/state")" = "4: ACTIVE" ] &&
	ok "the view as uid 65534" || fail "uid 65534 does not get the view"
# outside droce-run nothing changed
[ ! -e "$sysdev" ] || fail "$sysdev exists outside droce-run"

# ---- 2. ucx_info ----
export UCX_NET_DEVICES="$DROCE_DEV:1"
info=$($DROCE_RUN_A ucx_info -d) || fail "ucx_info -d exited $?"
for tl in rc_verbs ud_verbs; do
	echo "$info" | awk -v tl="$tl" -v dev="$DROCE_DEV:1" '
		/Transport:/ { t = $3 } /Device:/ && t == tl && $3 == dev { found = 1 }
		END { exit !found }' && ok "ucx_info -d: $tl on $DROCE_DEV:1" ||
		fail "ucx_info -d does not list $tl on $DROCE_DEV:1"
done

# ---- 3. ucx_perftest ----
export UCX_IB_RCACHE=yes	# registration cache on; UCX fails if it cannot have it
port=13400
# perf_run TLS TEST [LABEL]: one ucx_perftest, server on B, client on A
perf_run() {
	port=$((port + 1))
	n=1000 s=8
	case $2 in *_bw | ucp_get) n=200 s=65536 ;; esac
	srv_log=$DROCE_STATE/ucx-srv-$1-$2.log cli_log=$DROCE_STATE/ucx-cli-$1-$2.log
	UCX_TLS=$1 timeout 180 $DROCE_RUN_B ucx_perftest -p $port >"$srv_log" 2>&1 &
	srv=$!
	i=0
	until ip netns exec "$DROCE_NS_B" ss -ltn | grep -q ":$port "; do
		i=$((i + 1))
		[ $i -le 200 ] && kill -0 $srv 2>/dev/null || break
		sleep 0.1
	done
	UCX_TLS=$1 timeout 180 $DROCE_RUN_A ucx_perftest -p $port -t $2 -n $n -s $s \
		"$DROCE_IP_B" >"$cli_log" 2>&1
	crc=$?
	wait $srv
	src=$?
	final=$(awk '$1 == "Final:" { print $2 }' "$cli_log")
	# segv_after_final=1: UCX 1.13.1's crash in ucp_cleanup with implicit ODP
	# (3c), on either side, once the client has reported every iteration
	if [ "${segv_after_final:-0}" = 1 ] && [ "$final" = $n ]; then
		[ $crc = 139 ] && grep -q 'Caught signal 11' "$cli_log" && crc=0
		[ $src = 139 ] && grep -q 'Caught signal 11' "$srv_log" && src=0
	fi
	if [ $crc = 0 ] && [ $src = 0 ] && [ "$final" = $n ]; then
		ok "UCX_TLS=$1 $2${3:-}: $(awk '$1 == "Final:"' "$cli_log" | tr -s ' ')"
	else
		fail "UCX_TLS=$1 $2${3:-}: client exit $crc, server exit $src, final iterations '$final'"
		grep -v '^ *[0-9]* ' "$cli_log" | tail -n 5 | sed 's/^/    client: /'
		grep -v '^ *[0-9]* ' "$srv_log" | tail -n 5 | sed 's/^/    server: /'
	fi
}
for tls in rc_v ud_v; do
	for t in tag_lat tag_bw ucp_put_bw ucp_get ucp_am_bw; do
		perf_run $tls $t
	done
done

# ---- 3b. on a machine with hugepages ----
# UCX then takes its memory pools from System V hugetlb segments (shmget
# SHM_HUGETLB, removed at once) and registers them: the shim must move
# them like private memory (lib/shim/shim_mem.c). Reserve some for the
# run if there are none, give them back after.
huge_file=/proc/sys/vm/nr_hugepages
huge_before=$(cat $huge_file)
huge_free() { awk '$1 == "HugePages_Free:" { print $2 }' /proc/meminfo; }
[ "$(huge_free)" -ge 64 ] || echo $((huge_before + 128)) >$huge_file 2>/dev/null
huge_total=$(huge_free)
if [ "$huge_total" -ge 64 ]; then
	: >"$DROCE_STATE/huge-watch"	# before the watcher looks for it
	( lo=$huge_total
	  while [ -e "$DROCE_STATE/huge-watch" ]; do
		f=$(huge_free); [ "$f" -lt "$lo" ] && lo=$f && echo $lo >"$DROCE_STATE/huge-low"
		sleep 0.05
	  done ) &
	watcher=$!
	perf_run rc_v tag_bw " (hugepages)"
	perf_run ud_v tag_bw " (hugepages)"
	rm -f "$DROCE_STATE/huge-watch"
	wait $watcher
	low=$(cat "$DROCE_STATE/huge-low" 2>/dev/null || echo "$huge_total")
	[ "$low" -lt "$huge_total" ] &&
		ok "UCX took $((huge_total - low)) of $huge_total free hugepages, registered on droce" ||
		fail "UCX took none of the $huge_total free hugepages: System V hugetlb not exercised"
else
	echo "note no hugepages could be reserved: the hugetlb memory pools not tried"
fi
echo "$huge_before" >$huge_file 2>/dev/null

# ---- 3c. on-demand paging ----
# UCX_IB_REG_METHODS=odp: UCX 1.13 registers one implicit ODP region (our
# odp_caps claim IMPLICIT) and reaches every buffer through its keys; both
# daemons must then copy through ODP. ucx_perftest checks no data:
# ucx_rma_check does, every byte of its puts and gets. UCX
# 1.13.1 closes that region by handing its handle to a function that now
# takes a parameter struct (doc/user-guide.md): the client may die of
# SIGSEGV in ucp_cleanup after its final line, taken here for that only.
odp_copies() {	# SIDE
	eval "ns=\$DROCE_NS_$1"
	timeout 10 ip netns exec "$ns" "$build/app/ctl/droce-ctl" -p "droce$DROCE_TAG$1" stats |
		awk '$1 == "ODP_COPIES" { print $2 }'
}
export UCX_IB_REG_METHODS=odp UCX_IB_RCACHE=try
for t in ucp_put_bw ucp_get; do
	a0=$(odp_copies A) b0=$(odp_copies B)
	segv_after_final=1
	perf_run rc_v $t " (on-demand paging)"
	segv_after_final=0
	a1=$(odp_copies A) b1=$(odp_copies B)
	# 200 messages of 64 KiB, a copy per packet of at most 4096 bytes on each side
	[ $((a1 - a0)) -ge 3200 ] && [ $((b1 - b0)) -ge 3200 ] &&
		ok "$t through UCX's implicit ODP key: ODP_COPIES +$((a1 - a0)) on A, +$((b1 - b0)) on B" ||
		fail "$t: ODP_COPIES +$((a1 - a0)) on A, +$((b1 - b0)) on B: UCX did not use ODP"
done
# every byte: tests/integration/ucx_rma_check (UCP puts and gets), where built
rma=$build/tests/integration/ucx_rma_check
if [ -x "$rma" ]; then
	port=$((port + 1))
	a0=$(odp_copies A) b0=$(odp_copies B)
	UCX_TLS=rc_v timeout 120 $DROCE_RUN_B "$rma" server $port >"$DROCE_STATE/rma-srv.log" 2>&1 &
	srv=$!
	i=0
	until grep -q listening "$DROCE_STATE/rma-srv.log" || [ $i -gt 200 ]; do sleep 0.1; i=$((i + 1)); done
	UCX_TLS=rc_v timeout 120 $DROCE_RUN_A "$rma" client "$DROCE_IP_B" $port >"$DROCE_STATE/rma-cli.log" 2>&1
	crc=$?
	wait $srv
	src=$?
	a1=$(odp_copies A) b1=$(odp_copies B)
	sed 's/^/    /' "$DROCE_STATE/rma-cli.log" "$DROCE_STATE/rma-srv.log" | grep -v '^    ok'
	nok=$(cat "$DROCE_STATE/rma-cli.log" "$DROCE_STATE/rma-srv.log" | grep -c '^ok')
	if [ $crc = 0 ] && [ $src = 0 ] && [ $((a1 - a0)) -gt 0 ] && [ $((b1 - b0)) -gt 0 ]; then
		ok "UCP put and get through UCX's implicit ODP key, every byte checked ($nok checks)"
	else
		fail "ucx_rma_check: client exit $crc, server exit $src, ODP_COPIES +$((a1 - a0)) on A, +$((b1 - b0)) on B"
	fi
else
	echo "skip ucx_rma_check: not built (apt-get install libucx-dev, meson setup --reconfigure)"
fi
unset UCX_IB_REG_METHODS
export UCX_IB_RCACHE=yes

# ---- 4. the counters, with every QP destroyed ----
sleep 1.5	# droced refreshes the view once a second
ctl=$(timeout 10 "$build/app/ctl/droce-ctl" -p "droce${DROCE_TAG}A" stats)
want=$(echo "$ctl" | awk '$1 == "TX_PKTS" { print $2 }')
got=$(view ports/1/hw_counters/tx_pkts)
[ -n "$want" ] && [ "$want" -gt 0 ] && [ "$got" = "$want" ] &&
	ok "hw_counters/tx_pkts $got (droce-ctl: $want), no QP alive" ||
	fail "hw_counters/tx_pkts '$got', droce-ctl TX_PKTS '$want'"
pk=$(view ports/1/counters/port_xmit_packets)
words=$(view ports/1/counters/port_xmit_data)
# 4-byte words: 4 * words / packets is a frame length (58 to 4200 bytes);
# bytes would give four times that (over 4200 for these 1 KB-MTU frames)
if [ -n "$pk" ] && [ "$pk" -gt 0 ] && [ $((4 * words / pk)) -ge 58 ] && [ $((4 * words / pk)) -le 4200 ]; then
	ok "port_xmit_data $words words over $pk packets"
else
	fail "port_xmit_data '$words' over port_xmit_packets '$pk'"
fi

# ---- 5. monitoring reads them unchanged ----
# Debian's Prometheus node_exporter (its infiniband collector) in side A's
# view: droce0's port up and active, and the byte and packet counters it
# reports are the files' (bytes = 4 * port_xmit_data, as on Linux).
if command -v prometheus-node-exporter >/dev/null 2>&1; then
	$DROCE_RUN_A timeout 20 prometheus-node-exporter --collector.disable-defaults \
		--collector.infiniband --web.listen-address=127.0.0.1:19111 >/dev/null 2>&1 &
	nepid=$!
	m=
	for i in 1 2 3 4 5 6 7 8 9 10; do
		m=$(ip netns exec "$DROCE_NS_A" curl -s 127.0.0.1:19111/metrics) && [ -n "$m" ] && break
		sleep 0.5
	done
	kill $nepid 2>/dev/null
	wait $nepid 2>/dev/null
	metric() {	# NAME: its value for droce0 port 1
		echo "$m" | awk -v n="$1" -v d="$DROCE_DEV" \
			'$1 == n "{device=\"" d "\",port=\"1\"}" { printf "%d", $2 }'
	}
	txb=$(metric node_infiniband_port_data_transmitted_bytes_total)
	txp=$(metric node_infiniband_port_packets_transmitted_total)
	st=$(metric node_infiniband_state_id)
	if [ "$st" = 4 ] && [ -n "$txb" ] && [ "$txb" = $((4 * words)) ] && [ "$txp" = "$pk" ]; then
		ok "node_exporter: droce0 port 1 active, $txb bytes in $txp packets sent"
	else
		fail "node_exporter: state '$st', bytes '$txb' (want $((4 * words))), packets '$txp' (want $pk)"
	fi
else
	echo "skip node_exporter: not installed (apt-get install prometheus-node-exporter)"
fi

[ $fails = 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all UCX checks passed"
