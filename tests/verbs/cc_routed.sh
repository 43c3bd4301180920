#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# ECN and DCQCN end to end on the routed pair, the router's kernel marking
# CE (an nftables rule: no queue of its own, every ECN-capable RoCEv2
# packet from A) so that B's notification point and A's reaction point
# run as on a congested fabric:
#   cc_routed.sh BUILD_DIR CC_TRAFFIC
# Both daemons start from a droced.conf (ecn-np, dcqcn keys) and
# command-line options (--ecn-rp, --dcqcn). Checked through droce-ctl,
# telemetry and the sysfs view: a rate-limited QP shows its limit, an
# unlimited one the line rate; once marks come, B counts them and sends
# CNPs at the configured DSCP, A handles them and its QPs run below line
# rate; switches changed at run time (droce-ctl set) take effect on the
# live QPs (B's NP off: no CNPs; A's RP off: no ECT, no marks, and CNPs
# for marks a router forced on anyway ignored); refusals leave the daemons
# up; counters stay after the QPs are gone.
set -u
. "$(dirname "$0")/../integration/common.sh"
prog=$2
work=$(mktemp -d)
cat >"$work/droced.conf" <<EOF
# as a user's droced.conf: NP on every priority, the CNP's DSCP moved
ecn-np = 0-7
dcqcn = cnp_dscp=40
EOF
# a QP DCQCN slows never falls under 20 Mb/s: its WRITEs stay well inside
# the retransmission timeout on a machine whose cores are shared
pair_up "$1" --routed -- --config "$work/droced.conf" --ecn-rp 0-7 --dcqcn rpg_min_rate=20
fails=0
ctl() {	# SIDE ARGS...
	side=$1
	shift
	timeout 10 "$build/app/ctl/droce-ctl" -p "droce$DROCE_TAG$side" "$@"
}
val() {	# SIDE NAME: a counter or setting of stats
	ctl "$1" stats | awk -v n="$2" '$1 == n { print $2 }'
}
qpval() {	# SIDE QPN NAME
	ctl "$1" qp "$2" | awk -v n="$3" '$1 == n { print $2 }'
}
hw() {	# SIDE NAME: a file of the sysfs view's hw_counters/
	cat "$DROCE_STATE/$1.sock.sysfs/class/infiniband/$DROCE_DEV/ports/1/hw_counters/$2"
}
# until CMD succeeds, 30 s at most
await() {
	i=0
	until "$@"; do
		i=$((i + 1))
		[ $i -gt 300 ] && return 1
		sleep 0.1
	done
}
gt() { [ "$($1)" -gt "$2" ] 2>/dev/null; }
cleanup() {
	ip netns exec "$DROCE_NS_R" nft delete table ip cc_test 2>/dev/null
	[ -n "${tdpid:-}" ] && kill "$tdpid" 2>/dev/null
	rm -rf "$work"
}
trap 'rc=$?; cleanup; (exit $rc); pair_down' EXIT

# the settings as the daemons took them
for s in A B; do
	got="$(val $s ecn_np_enable) $(val $s ecn_rp_enable) $(val $s dcqcn_cnp_dscp) $(val $s dcqcn_rpg_min_rate)"
	[ "$got" = "255 255 40 20" ] && ok "$s: droced.conf and options in stats ($got)" ||
		fail "$s: ecn_np_enable ecn_rp_enable cnp_dscp rpg_min_rate: $got, not 255 255 40 20"
done

$DROCE_RUN_B timeout 120 "$prog" serve >"$work/agent" 2>&1 &
apid=$!
CC_STOP="$work/stop" CC_LIMIT_KBPS=50000 $DROCE_RUN_A timeout 120 "$prog" drive "$DROCE_IP_B" \
	>"$work/driver" 2>&1 &
dpid=$!
if ! await grep -q '^qps ' "$work/driver"; then
	fail "the traffic never started"
	cat "$work/driver" "$work/agent"
	exit 1
fi
read -r _ lim free <"$work/driver"

# before any mark: the limit, the line rate, DCQCN idle
line=$(qpval A "$free" line_rate_kbps)
got="$(qpval A "$lim" rate_limit_kbps) $(qpval A "$lim" rate_kbps) $(qpval A "$lim" dcqcn_limited)"
[ "$got" = "50000 50000 0" ] && ok "droce-ctl qp: the limited QP at its limit ($got)" ||
	fail "droce-ctl qp $lim: rate_limit_kbps rate_kbps dcqcn_limited: $got, not 50000 50000 0"
got="$(qpval A "$free" rate_limit_kbps) $(qpval A "$free" rate_kbps) $(qpval A "$free" dcqcn_limited)"
[ "$got" = "0 $line 0" ] && [ "$line" -gt 0 ] &&
	ok "droce-ctl qp: the unlimited QP at the line rate ($got)" ||
	fail "droce-ctl qp $free: rate_limit_kbps rate_kbps dcqcn_limited: $got, not 0 $line 0"
ctl A qps >"$work/qps"
awk -v q="$lim" '$1 == q && $5 == "50.000" && $4 == "50.000" { f = 1 } END { exit !f }' \
	"$work/qps" && awk -v q="$free" '$1 == q && $6 == "off" { f = 1 } END { exit !f }' \
	"$work/qps" && ok "droce-ctl qps: both QPs, the limit of one" ||
	{ fail "droce-ctl qps"; cat "$work/qps"; }
[ "$(val B np_ecn_marked_roce_packets)" = 0 ] && ok "no marks yet" ||
	fail "marks before the router marks: $(val B np_ecn_marked_roce_packets)"
# A's WRITEs on the wire: ECT(0), the QPs' DSCP (0) kept
ip netns exec "$DROCE_NS_R" timeout 20 tcpdump -c 1 -nv -i "rta$DROCE_TAG" \
	'src host 10.99.0.1 and udp dst port 4791 and udp[8] = 0x0a' >"$work/write" 2>/dev/null
grep -q 'tos 0x2,ECT(0)' "$work/write" && ok "A's RDMA WRITEs leave ECT(0) under DSCP 0" ||
	{ fail "A's RDMA WRITE not ECT(0) with DSCP 0"; cat "$work/write"; }

# the router marks every ECN-capable RoCEv2 packet from A
ip netns exec "$DROCE_NS_R" timeout 30 tcpdump -c 1 -nv -i "rta$DROCE_TAG" \
	'udp dst port 4791 and udp[8] = 0x81' >"$work/cnp" 2>/dev/null &
tdpid=$!
sleep 1	# tcpdump listening
ip netns exec "$DROCE_NS_R" nft -f - <<EOF
table ip cc_test {
	chain mark_ce {
		type filter hook forward priority 0;
		ip saddr 10.99.0.1 udp dport 4791 ip ecn ect0 ip ecn set ce counter
	}
}
EOF
await gt "qpval A $free rp_cnp_handled" 0 &&
	ok "A's unlimited QP handled CNPs ($(qpval A "$free" rp_cnp_handled))" ||
	fail "A's unlimited QP: no CNP handled"
# DCQCN holds it below line rate while the marks go on. Not at once: a
# CNP per packet, a packet per round trip (hundreds of us here), and alpha
# decays every dce_tcp_rtt (1 us), so each cut is small and the first ones
# are recovered from; a steady stream of them wins within a second or two.
below() {
	ctl A qp "$free" >"$work/qp"
	awk -v l="$line" '$1 == "dcqcn_limited" && $2 == 1 { a = 1 }
		$1 == "rate_kbps" && $2 < l * 0.9 { b = 1 } END { exit !(a && b) }' "$work/qp"
}
await below && ok "droce-ctl qp: the unlimited QP below line rate ($(awk '$1 == "rate_kbps" {
	print $2 }' "$work/qp") of $line kbps)" ||
	{ fail "the unlimited QP is not below line rate"; cat "$work/qp"; }
r=$(qpval A "$lim" rate_kbps)
[ "$r" -le 50000 ] 2>/dev/null && ok "the limited QP at most at its limit ($r kbps)" ||
	fail "the limited QP at $r kbps"
for c in np_ecn_marked_roce_packets np_cnp_sent; do
	n=$(val B $c)
	[ "$n" -gt 0 ] 2>/dev/null && ok "B: $c $n" || fail "B: $c $n"
done
n=$(val A rp_cnp_handled)
[ "$n" -gt 0 ] 2>/dev/null && ok "A: rp_cnp_handled $n" || fail "A: rp_cnp_handled $n"
# B's side of the same QPs: the CNPs its NP sent for each
ctl B qps >"$work/qpsB"
[ "$(awk 'NR > 1 && $11 > 0' "$work/qpsB" | wc -l)" = 2 ] &&
	ok "droce-ctl qps on B: both QPs sent CNPs (cnp_tx)" ||
	{ fail "droce-ctl qps on B: cnp_tx"; cat "$work/qpsB"; }
# the sysfs view (refreshed once a second) has them under the same names
await gt "hw B np_cnp_sent" 0 && await gt "hw B np_ecn_marked_roce_packets" 0 &&
	await gt "hw A rp_cnp_handled" 0 && ok "sysfs hw_counters: np_*, rp_cnp_handled" ||
	fail "sysfs hw_counters: B np_cnp_sent $(hw B np_cnp_sent), A rp_cnp_handled $(hw A rp_cnp_handled)"
[ -f "$DROCE_STATE/A.sock.sysfs/class/infiniband/$DROCE_DEV/ports/1/hw_counters/rp_cnp_ignored" ] &&
	ok "sysfs hw_counters: rp_cnp_ignored" || fail "sysfs hw_counters: no rp_cnp_ignored"
# a CNP on the wire: DSCP 40 as configured, not ECN-capable
wait "$tdpid"
tdpid=
grep -q 'tos 0xa0,' "$work/cnp" && ok "a CNP crossed the router with DSCP 40 (tos 0xa0)" ||
	{ fail "no CNP with tos 0xa0 seen"; cat "$work/cnp"; }

# B's NP off through telemetry: marks still counted, no CNP sent
ctl B set ecn_np_enable 0 >/dev/null && [ "$(val B ecn_np_enable)" = 0 ] ||
	fail "droce-ctl set ecn_np_enable 0"
s0=$(val B np_cnp_sent)
m0=$(val B np_ecn_marked_roce_packets)
await gt "val B np_ecn_marked_roce_packets" $((m0 + 50))
[ "$(val B np_cnp_sent)" = "$s0" ] && ok "NP off at run time: marks counted, no CNP ($s0 sent)" ||
	fail "NP off at run time: np_cnp_sent $s0 -> $(val B np_cnp_sent)"
ctl B set ecn_np_enable 0xff >/dev/null && [ "$(val B ecn_np_enable)" = 255 ] ||
	fail "droce-ctl set ecn_np_enable 0xff"

# A's RP off: its QPs let go by DCQCN at once, its packets no longer ECN-capable (not marked)
ctl A set ecn_rp_enable 0 >/dev/null || fail "droce-ctl set ecn_rp_enable 0"
got="$(qpval A "$free" dcqcn_limited) $(qpval A "$free" rate_kbps)"
[ "$got" = "0 $line" ] && ok "RP off at run time: the QP back at line rate" ||
	fail "RP off at run time: dcqcn_limited rate_kbps $got, not 0 $line"
p0=$(val B RX_PKTS)
await gt "val B RX_PKTS" $((p0 + 20))	# what was on its way when it changed
m1=$(val B np_ecn_marked_roce_packets)
p1=$(val B RX_PKTS)
await gt "val B RX_PKTS" $((p1 + 200))
[ "$(val B np_ecn_marked_roce_packets)" = "$m1" ] &&
	ok "RP off at run time: A's packets not ECN-capable, none marked" ||
	fail "RP off at run time: marks $m1 -> $(val B np_ecn_marked_roce_packets)"
# a router that marks what is not ECN-capable too (no switch would): B's
# NP answers, A's RP, off, ignores the CNPs and its QPs stay at line rate
ip netns exec "$DROCE_NS_R" nft flush chain ip cc_test mark_ce
ip netns exec "$DROCE_NS_R" nft add rule ip cc_test mark_ce \
	ip saddr 10.99.0.1 udp dport 4791 ip ecn set ce
i0=$(val A rp_cnp_ignored)
h0=$(val A rp_cnp_handled)
await gt "val A rp_cnp_ignored" "$i0" &&
	[ "$(val A rp_cnp_handled)" = "$h0" ] && [ "$(qpval A "$free" dcqcn_limited)" = 0 ] &&
	ok "RP off: CNPs counted in rp_cnp_ignored ($(val A rp_cnp_ignored)), none handled" ||
	fail "RP off: rp_cnp_ignored $i0 -> $(val A rp_cnp_ignored), handled $h0 -> $(val A rp_cnp_handled)"
ip netns exec "$DROCE_NS_R" nft flush chain ip cc_test mark_ce
ctl A set ecn_rp_enable 255 >/dev/null || fail "droce-ctl set ecn_rp_enable 255"

# one priority at a time, as mlx5's ecn/roce_np/enable/<prio>
ctl A set ecn_np_enable/3 0 >/dev/null && [ "$(val A ecn_np_enable)" = 247 ] &&
	ctl A set ecn_np_enable/3 1 >/dev/null && [ "$(val A ecn_np_enable)" = 255 ] &&
	ctl A set ecn_rp_enable/0 0 >/dev/null && [ "$(val A ecn_rp_enable)" = 254 ] &&
	ctl A set ecn_rp_enable/0 1 >/dev/null && [ "$(val A ecn_rp_enable)" = 255 ] &&
	ok "droce-ctl set ecn_np_enable/3, ecn_rp_enable/0" ||
	fail "per-priority switches: np $(val A ecn_np_enable) rp $(val A ecn_rp_enable)"
# a parameter through telemetry, and refusals that leave the daemon be
ctl A set dcqcn_rpg_ai_rate 10 >/dev/null && [ "$(val A dcqcn_rpg_ai_rate)" = 10 ] &&
	ok "droce-ctl set dcqcn_rpg_ai_rate 10" || fail "droce-ctl set dcqcn_rpg_ai_rate 10"
for bad in "set dcqcn_rpg_gd 16" "set dcqcn_nonesuch 1" "set ecn_np_enable 256" \
	"set ecn_rp_enable -1" "set dcqcn_rpg_gd x" "set ecn_np_enable/8 0" \
	"set ecn_np_enable/3 2" "set ecn_np_enable/33 1" "qp 0xffffff" "qp zz"; do
	# shellcheck disable=SC2086
	ctl A $bad >/dev/null 2>&1 && fail "droce-ctl $bad: accepted" ||
		ok "droce-ctl $bad: refused"
done
[ "$(val A dcqcn_rpg_gd)" = 11 ] && [ "$(val A ecn_np_enable)" = 255 ] &&
	ok "refusals changed nothing" || fail "a refusal changed a setting"
# every parameter stats shows is settable by that name (to the value it has)
n_set=0
for kv in $(ctl A stats | awk '$1 ~ /^dcqcn_/ { print $1 "=" $2 }'); do
	ctl A set "${kv%=*}" "${kv#*=}" >/dev/null || fail "droce-ctl set ${kv%=*} ${kv#*=}: refused"
	n_set=$((n_set + 1))
done
[ $n_set -ge 19 ] && ok "droce-ctl set takes each of the $n_set dcqcn_* names" ||
	fail "only $n_set dcqcn_* names in stats"

# bad settings keep a daemon from starting, saying why
printf 'dcqcn = rpg_gd=99\n' >"$work/bad.conf"
for bad in "--dcqcn rpg_gd=16" "--dcqcn nonesuch=1" "--dcqcn rpg_ai_rate=" "--ecn-np 8" \
	"--ecn-rp 3-1" "--config $work/bad.conf"; do
	# shellcheck disable=SC2086
	timeout 20 "$build/app/droced/droced" --no-pci --no-huge -m 64 --no-telemetry \
		--file-prefix "droce${DROCE_TAG}X" -- --iface lo --ip 127.0.0.9/8 \
		--socket "$work/x.sock" $bad >"$work/bad.log" 2>&1
	rc=$?
	# refused by the option parser (usage, or the config's line), not later
	[ $rc != 0 ] && [ $rc != 124 ] && [ $rc -lt 128 ] &&
		grep -q -e '^usage: droced' -e ': bad line$' "$work/bad.log" &&
		ok "droced $bad: refused (exit $rc)" ||
		{ fail "droced $bad: exit $rc"; tail -n 3 "$work/bad.log"; }
done
rm -rf "/var/run/dpdk/droce${DROCE_TAG}X"

touch "$work/stop"
wait $dpid
drc=$?
wait $apid
arc=$?
sed 's/^/    /' "$work/driver"
[ $drc = 0 ] && [ $arc = 0 ] && ok "traffic: driver and agent exit 0" ||
	fail "traffic: driver exit $drc, agent exit $arc"
# cumulative: the QPs are gone, the counters stay
n2=$(val A rp_cnp_handled)
[ "$n2" -ge "$n" ] 2>/dev/null && ok "rp_cnp_handled kept after the QPs went ($n2)" ||
	fail "rp_cnp_handled $n -> $n2 after the QPs went"
exit $((fails > 0))
