#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# iser.sh BUILD_DIR: iSCSI over RDMA (iSER) through droce-run across the
# namespace pair. Debian's tgt 1.0.85, unmodified, is the target on side B
# (`tgtd --iser`, a 64 MiB file as LUN 1); Debian's libiscsi 1.19 is the
# initiator on side A (iser:// URLs): its iscsi-inq and
# iscsi-readcapacity16 must see the disk, and tests/apps/iscsi_pattern
# (libiscsi's API, as libiscsi's tools cannot write) moves a seeded
# pattern, every byte checked:
#   READ path (the target RDMA WRITEs): the backing file filled on B, read
#   over iSER and compared;
#   WRITE path (the target RDMA READs the initiator's buffers): written
#   over iSER, the backing file on B compared, read back over iSER;
# at 4 KiB, 99 sectors (50688 bytes: a last packet part full) and 256 KiB
# commands (libiscsi's iSER most: 256 packets of 1024 bytes, one RDMA
# operation each) at depths 1 to 8 (above the 4 RDMA READs tgt may have
# outstanding). A 512 KiB command must be refused without a hang and the
# target still serve. Then the figures: libiscsi's iscsi-perf reading, and
# a sequential 64 MiB write and read with 256 KiB commands 8 deep, over
# iSER and over iSCSI on TCP on the same veth (tgtd's TCP portal, the
# kernel's TCP): printed, not judged. Skips (77) without root, tgt,
# libiscsi-bin or libiscsi-dev (iscsi_pattern).
set -u

. "$(dirname "$0")/../integration/common.sh"

for t in tgtd tgtadm iscsi-inq iscsi-readcapacity16 iscsi-perf; do
	command -v $t >/dev/null 2>&1 ||
		{ echo "$t is not installed (apt-get install tgt libiscsi-bin)"; exit 77; }
done
pattern=$1/tests/apps/iscsi_pattern
[ -x "$pattern" ] || { echo "no $pattern (apt-get install libiscsi-dev, reconfigure)"; exit 77; }
pair_up "$1"
work=$(mktemp -d /dev/shm/droce-iser.XXXXXX)	# tmpfs: the figures are not a disk's
tgtd_down() {
	if [ -n "${tpid:-}" ]; then
		# tgtd leaves its loop once it has no target
		for tid in 1 2; do
			tgtadm -C "$ctl" --mode target --op delete --force --tid $tid >/dev/null 2>&1
		done
		tgtadm -C "$ctl" --mode system --op delete >/dev/null 2>&1
		i=0
		while kill -0 "$tpid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
		kill -KILL "$tpid" 2>/dev/null
		wait "$tpid" 2>/dev/null
		tpid=
	fi
}
trap 'rc=$?; tgtd_down; rm -rf "$work"; (exit $rc); pair_down' EXIT
fails=0
init=iqn.2026-01.org.droce:initiator
iser=iser://$DROCE_IP_B/iqn.2026-01.org.droce:iser/1
tcp=iscsi://$DROCE_IP_B/iqn.2026-01.org.droce:tcp/1
truncate -s 64M "$work/iser.img" "$work/tcp.img"

# tgtd's management socket is /var/run/tgtd/socket.PORT, one for the whole
# machine: a port of this tag's own, or the next one if another tgtd holds
# it (tgtd then exits at once).
ctl=$((5000 + $(printf %s "$DROCE_TAG" | cksum | cut -d' ' -f1) % 1000 * 10))
for try in 1 2 3 4 5; do
	$DROCE_RUN_B tgtd -f -C $ctl --iser port=3260 >"$work/tgtd.log" 2>&1 &
	tpid=$!
	i=0
	while kill -0 $tpid 2>/dev/null && [ $i -lt 50 ] &&
		! tgtadm -C $ctl --mode system --op show >/dev/null 2>&1; do
		sleep 0.1; i=$((i + 1)); done
	kill -0 $tpid 2>/dev/null && break
	wait $tpid
	tpid=
	ctl=$((ctl + 1))
done
if [ -z "$tpid" ]; then
	fail "tgtd did not start"
	cat "$work/tgtd.log"
	exit 1
fi

# tgt 1.0.85 lets an iSER login in only when both an address and an
# initiator name are allowed (iser_text.c checks the two ACLs apart; its
# iSCSI/TCP login takes either; fixed in tgt 1.0.95): name ours too.
adm="tgtadm -C $ctl"
if $adm --lld iser --mode target --op new --tid 1 --targetname iqn.2026-01.org.droce:iser &&
	$adm --lld iser --mode logicalunit --op new --tid 1 --lun 1 --backing-store "$work/iser.img" &&
	$adm --lld iser --mode target --op bind --tid 1 --initiator-address ALL &&
	$adm --lld iser --mode target --op bind --tid 1 --initiator-name $init &&
	$adm --lld iscsi --mode target --op new --tid 2 --targetname iqn.2026-01.org.droce:tcp &&
	$adm --lld iscsi --mode logicalunit --op new --tid 2 --lun 1 --backing-store "$work/tcp.img" &&
	$adm --lld iscsi --mode target --op bind --tid 2 --initiator-address ALL; then
	ok "tgtd (control port $ctl): an iSER and an iSCSI target, 64 MiB each"
else
	fail "tgtadm could not set the targets up"
	exit 1
fi

# libiscsi 1.19's iSER transport takes its connection's state from malloc
# unzeroed (its list of send descriptors with it): with meson's
# MALLOC_PERTURB_ it follows a garbage pointer at connect (SIGSEGV in
# iser_reg_mr; libiscsi's b4ba920, fixed in 1.20.0). Its initiators run
# without it.
iser_a="env -u MALLOC_PERTURB_ $DROCE_RUN_A"

# over NAME TOOL ARGS...: one libiscsi tool on side A through droce
over() {
	name=$1
	shift
	timeout 60 $iser_a "$@" >"$work/out" 2>&1
}

if over inq iscsi-inq -i $init "$iser" && grep -q "Peripheral Device Type:DIRECT_ACCESS" "$work/out" &&
	grep -q "Product:VIRTUAL-DISK" "$work/out"; then
	ok "iscsi-inq over iSER: a direct-access $(sed -n 's/^Vendor://p' "$work/out" | tr -d ' ') disk"
else
	fail "iscsi-inq over iSER"
	tail -n 5 "$work/out"
fi
if over cap iscsi-readcapacity16 -i $init "$iser" && grep -q "^Total size:67108864" "$work/out" &&
	grep -q "LOGICAL BLOCK LENGTH IN BYTES:512" "$work/out"; then
	ok "iscsi-readcapacity16 over iSER: 131072 blocks of 512"
else
	fail "iscsi-readcapacity16 over iSER"
	tail -n 5 "$work/out"
fi

# lun OP URL SEED BYTES DEPTH [LENGTH] [RUN]: iscsi_pattern on the LUN
lun() {
	run=${7:-$iser_a}
	n=${6:+-n $6}
	timeout 90 $run "$pattern" -i $init -s "$3" -b "$4" -q "$5" $n "$1" "$2" >"$work/out" 2>&1
}
said() {
	sed -n 's/.*: \([0-9.]* s, [0-9.]* MiB\/s\)$/\1/p' "$work/out"
}

# the READ path: what B's file holds comes back over iSER
seed=11
"$pattern" -s $seed fill "$work/iser.img" || fail "filling the backing file"
for c in "4096 8 8388608" "50688 3 5068800" "262144 1" "262144 8"; do
	set -- $c
	if lun read "$iser" $seed $1 $2 ${3:-}; then
		ok "READ over iSER, $(( ${3:-67108864} >> 10 )) KiB in $1-byte commands, depth $2: every byte ($(said))"
	else
		fail "READ over iSER, $1-byte commands, depth $2"
		tail -n 3 "$work/out"
	fi
done

# the WRITE path: a new pattern in B's file, then read back
for c in "4096 8 8388608" "50688 3 5068800" "262144 1" "262144 8"; do
	set -- $c
	seed=$((seed + 1))
	if ! lun write "$iser" $seed $1 $2 ${3:-}; then
		fail "WRITE over iSER, $1-byte commands, depth $2"
		tail -n 3 "$work/out"
		continue
	fi
	w=$(said)
	if ! "$pattern" -s $seed ${3:+-n $3} check "$work/iser.img" >"$work/out" 2>&1; then
		fail "WRITE over iSER, $1-byte commands, depth $2: B's file differs"
		cat "$work/out"
	elif ! lun read "$iser" $seed $1 $2 ${3:-}; then
		fail "WRITE over iSER, $1-byte commands, depth $2: read back"
		tail -n 3 "$work/out"
	else
		ok "WRITE over iSER, $(( ${3:-67108864} >> 10 )) KiB in $1-byte commands, depth $2: in B's file and read back ($w)"
	fi
done

# libiscsi's iSER buffers are 256 KiB: it refuses more at once (and its
# context is then unusable, see iscsi_pattern.c); the target must not mind
lun write "$iser" 1 524288 2 1048576
rc=$?
if failed_cleanly $rc && grep -q "queueing a command failed" "$work/out" &&
	over inq iscsi-inq -i $init "$iser"; then
	ok "a 512 KiB command refused by libiscsi (exit $rc), the target serving on"
else
	fail "a 512 KiB command: exit $rc"
	tail -n 3 "$work/out"
fi

# figures: iSER through droce against iSCSI on the kernel's TCP, same veth
if over perf iscsi-perf -i $init -t 3 -m 8 -b 512 "$iser"; then
	ok "iscsi-perf over iSER, 256 KiB reads 8 deep for 3 s: $(tr '\r' '\n' < "$work/out" |
		sed -n 's/^ *iops average \([0-9]*\) (\([0-9]*\) MB\/s).*/\1 IOPS, \2 MB\/s/p' | tail -n 1)"
else
	fail "iscsi-perf over iSER"
	tail -n 3 "$work/out"
fi
timeout 20 ip netns exec "$DROCE_NS_A" iscsi-perf -i $init -t 3 -m 8 -b 512 "$tcp" >"$work/out" 2>&1 &&
	echo "     iscsi-perf over TCP, the same: $(tr '\r' '\n' < "$work/out" |
		sed -n 's/^ *iops average \([0-9]*\) (\([0-9]*\) MB\/s).*/\1 IOPS, \2 MB\/s/p' | tail -n 1)"
seed=$((seed + 1))
for way in iSER TCP; do
	if [ $way = iSER ]; then url=$iser run=$iser_a img=iser.img
	else url=$tcp run="ip netns exec $DROCE_NS_A" img=tcp.img; fi
	if lun write "$url" $seed 262144 8 "" "$run" && w=$(said) &&
		"$pattern" -s $seed check "$work/$img" >"$work/out" 2>&1 &&
		lun read "$url" $seed 262144 8 "" "$run"; then
		ok "64 MiB over $way, 256 KiB commands 8 deep: write $w, read $(said)"
	else
		fail "64 MiB over $way"
		tail -n 3 "$work/out"
	fi
done

# tgtd must have said nothing of errors beyond the ends of connections
if grep -a -v -i -e flush -e "shmget rdma pool" "$work/tgtd.log" | grep -a -i -q -e error -e fail; then
	fail "tgtd reported errors:"
	grep -a -i -e error -e fail "$work/tgtd.log" | grep -a -v -i -e flush -e "shmget rdma pool" | head -n 5
fi
tgtd_down
[ "$fails" = 0 ]
