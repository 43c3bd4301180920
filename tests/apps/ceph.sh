#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# ceph.sh BUILD_DIR: Debian's Ceph 16 (ceph-mon, ceph-osd, rados),
# unmodified, across the namespace pair: one monitor and one OSD on the
# memstore objectstore in namespace B, the client (rados, ceph) in A. The
# same cluster comes up three times, from nothing, with a fixed fsid and
# no authentication (auth none), everything in a temporary directory:
#   1. tcp: the kernel's TCP (ms_type async+posix), the reference;
#   2. rdma: ms_type async+rdma on droce, its default connection set-up
#      (QP numbers exchanged over a TCP socket, then RC SENDs from a shared
#      receive queue);
#   3. rdma-cm: async+rdma with rdma_cm (ms_async_rdma_cm, whose sockets
#      Ceph names "iwarp"), on droce's librdmacm and droced's CM.
# In each: files of 1 B, 128 KiB + 1 (one byte past Ceph's RDMA buffer) and
# 9 MiB + 1 (three of rados put's 4 MiB writes) put and got back (every byte compared),
# then `rados bench` write for a few seconds and seq reading it back (rados
# checks each object's stamp); over RDMA, droced B must have received at
# least every byte the bench wrote as RoCE packets. The protocol is msgr2,
# Ceph's default. Ceph's mon client can send its first command before the
# monitor's map has come (fsid 0: the monitor answers "wrong fsid"), a race
# of Ceph's that new RDMA connections lost often with the legacy v1
# protocol; the admin commands retry it and count the retries.
# Prints each bench's figures; skips (77) without root or Ceph.
set -u

. "$(dirname "$0")/../integration/common.sh"

for p in ceph-mon ceph-osd ceph-authtool monmaptool rados ceph; do
	command -v $p >/dev/null 2>&1 ||
		{ echo "Ceph is not installed (apt-get install ceph-mon ceph-osd ceph-common)"; exit 77; }
done
pair_up "$1"
work=$(mktemp -d)
fails=0
fsid=8a3c1ae4-52f1-4b0c-9a0e-6f3d5c2b7e10
osd_uuid=0e4b5f4e-3c47-4d1a-9a7e-2f6f4c1d0b01
ctl=$build/app/ctl/droce-ctl

# the daemons of the cluster up, by their own pid files: the OSD first (it
# tells the monitor it stops and waits 5 s for an answer), then the monitor
cluster_down() {
	for n in osd.0 mon.a; do
		for f in "$work"/*/$n.pid; do
			[ -f "$f" ] || continue
			pid=$(cat "$f")
			kill "$pid" 2>/dev/null
			i=0
			while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
			kill -KILL "$pid" 2>/dev/null
			rm -f "$f"
		done
	done
}
trap 'rc=$?; cluster_down; rm -rf "$work"; (exit $rc); pair_down' EXIT

# on A (client) and B (cluster), through droce-run unless on TCP
on_a() { if [ "$mode" = tcp ]; then ip netns exec "$DROCE_NS_A" "$@"; else $DROCE_RUN_A "$@"; fi; }
on_b() { if [ "$mode" = tcp ]; then ip netns exec "$DROCE_NS_B" "$@"; else $DROCE_RUN_B "$@"; fi; }

# an admin command from A; retried while it meets Ceph's fsid race (above)
mon_cmd() {
	for _ in 1 2 3 4 5 6 7 8; do
		out=$(on_a timeout 30 ceph -c "$d/ceph.conf" "$@" 2>&1) && return 0
		echo "$out" | grep -q -e "wrong fsid" -e "problem getting command descriptions" || break
		races=$((races + 1))
	done
	echo "    ceph $*: $out" | tail -n 3
	return 1
}

# droced B's count of received RoCE packets
rx_pkts_b() {
	ip netns exec "$DROCE_NS_B" "$ctl" -p "droce${DROCE_TAG}B" stats | sed -n 's/^RX_PKTS //p'
}
timeouts() {	# SIDE: its transport's retransmission timeouts
	ip netns exec "droce${DROCE_TAG}$1" "$ctl" -p "droce${DROCE_TAG}$1" stats | sed -n 's/^TIMEOUTS //p'
}

# cluster_up MODE: monitor and OSD of a new cluster in B, pool "t"
cluster_up() {
	d=$work/$mode
	mkdir -p "$d/mon" "$d/osd"
	case $mode in
	tcp) ms="ms_type = async+posix" ;;
	rdma) ms="ms_type = async+rdma" ;;
	rdma-cm) ms="ms_type = async+rdma
ms_async_rdma_cm = true
ms_async_rdma_type = iwarp" ;;
	esac
	# msgr2 (Ceph's default protocol, v1 beside it). The RDMA buffers are
	# Ceph's size (128 KiB) but fewer: 4096 receives of 128 KiB each would
	# register 512 MiB in every process.
	cat >"$d/ceph.conf" <<EOF
[global]
fsid = $fsid
mon_host = [v2:$DROCE_IP_B:3300,v1:$DROCE_IP_B:6789]
$ms
ms_async_rdma_device_name = $DROCE_DEV
ms_async_rdma_port_num = 1
ms_async_rdma_gid_idx = $DROCE_GID_INDEX
ms_async_rdma_receive_queue_len = 256
ms_async_rdma_send_buffers = 256
auth_cluster_required = none
auth_service_required = none
auth_client_required = none
osd_objectstore = memstore
memstore_device_bytes = 2147483648
osd_pool_default_size = 1
osd_pool_default_min_size = 1
mon_allow_pool_size_one = true
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
osd_crush_chooseleaf_type = 0
# the OSD's own crush and class commands at start would meet the fsid race
osd_crush_update_on_start = false
osd_class_update_on_start = false
run_dir = $d
mon_data = $d/mon
osd_data = $d/osd
keyring = $d/keyring
log_file = $d/\$name.log
admin_socket = $d/\$name.asok
pid_file = $d/\$name.pid
log_to_stderr = false
err_to_stderr = false
EOF
	ceph-authtool --create-keyring "$d/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null &&
		monmaptool --create --fsid $fsid --addv a "[v2:$DROCE_IP_B:3300,v1:$DROCE_IP_B:6789]" "$d/monmap" >/dev/null &&
		ceph-mon -c "$d/ceph.conf" --mkfs -i a --monmap "$d/monmap" --keyring "$d/keyring" ||
		return 1
	on_b ceph-mon -c "$d/ceph.conf" -i a -f >"$d/mon.out" 2>&1 &
	mon_cmd osd new $osd_uuid &&
		on_b ceph-osd -c "$d/ceph.conf" -i 0 --mkfs --osd-uuid $osd_uuid >"$d/mkfs.out" 2>&1 ||
		{ tail -n 3 "$d/mkfs.out"; return 1; }
	on_b ceph-osd -c "$d/ceph.conf" -i 0 -f >"$d/osd.out" 2>&1 &
	mon_cmd osd crush add osd.0 1 root=default && mon_cmd osd pool create t 8 || return 1
	i=0
	until mon_cmd osd dump >/dev/null && echo "$out" | grep -q "^osd.0 up"; do
		i=$((i + 1))
		[ $i -lt 30 ] || { echo "    osd.0 never up"; return 1; }
		sleep 0.5
	done
}

# put_get NAME BYTES: a file of random bytes stored and read back
put_get() {
	head -c "$2" /dev/urandom >"$d/in.$1"
	rm -f "$d/out.$1"
	if on_a timeout 60 rados -c "$d/ceph.conf" -p t put "$1" "$d/in.$1" >"$d/put.out" 2>&1 &&
		on_a timeout 60 rados -c "$d/ceph.conf" -p t get "$1" "$d/out.$1" >"$d/get.out" 2>&1 &&
		cmp -s "$d/in.$1" "$d/out.$1"; then
		return 0
	fi
	echo "    $1 ($2 bytes): $(cat "$d/put.out" "$d/get.out" | tail -n 2)"
	return 1
}

# bench: write then seq for a few seconds; the figures into $write_mb $seq_mb
bench() {
	[ "$mode" = tcp ] || rx0=$(rx_pkts_b)
	on_a timeout 60 rados -c "$d/ceph.conf" -p t bench 3 write -t 4 --no-cleanup >"$d/write.out" 2>&1
	wrc=$?
	[ "$mode" = tcp ] || rx1=$(rx_pkts_b)
	on_a timeout 60 rados -c "$d/ceph.conf" -p t bench 3 seq -t 4 >"$d/seq.out" 2>&1
	src=$?
	writes=$(sed -n 's/^Total writes made: *//p' "$d/write.out")
	reads=$(sed -n 's/^Total reads made: *//p' "$d/seq.out")
	write_mb=$(sed -n 's/^Bandwidth (MB\/sec): *//p' "$d/write.out")
	seq_mb=$(sed -n 's/^Bandwidth (MB\/sec): *//p' "$d/seq.out")
	if [ $wrc != 0 ] || [ $src != 0 ] || [ "${writes:-0}" -lt 1 ] || [ "${reads:-0}" -lt 1 ] ||
		grep -q "is not correct" "$d/seq.out"; then
		echo "    write exit $wrc, $writes objects; seq exit $src, $reads objects"
		tail -n 3 "$d/write.out" "$d/seq.out"
		return 1
	fi
	# every byte written crossed droce: 4 MiB objects in packets of at most 4 KiB
	if [ "$mode" != tcp ] && [ $((rx1 - rx0)) -lt $((writes * 1024)) ]; then
		echo "    droced B received $((rx1 - rx0)) packets for $writes objects of 4 MiB"
		return 1
	fi
}

for mode in tcp rdma rdma-cm; do
	t0=$(date +%s)
	races=0
	[ "$mode" = tcp ] || { ta0=$(timeouts A); tb0=$(timeouts B); }
	if ! cluster_up; then
		fail "$mode: cluster did not come up"
		tail -n 5 "$d/mon.out" "$d/osd.out" 2>/dev/null
		cluster_down
		continue
	fi
	ok "$mode: monitor and OSD up ($(($(date +%s) - t0)) s, $races admin commands retried for the fsid race)"
	bad=
	for s in 1 131073 9437185; do
		put_get obj$s $s || bad="$bad $s"
	done
	if [ -z "$bad" ]; then
		ok "$mode: rados put/get of 1, 131073 and 9437185 bytes, every byte the same"
	else
		fail "$mode: rados put/get of$bad bytes"
	fi
	if bench; then
		ok "$mode: rados bench write $write_mb MB/s ($writes objects of 4 MiB), seq $seq_mb MB/s ($reads read back)"
	else
		fail "$mode: rados bench"
	fi
	[ "$mode" = tcp ] ||
		echo "    droce retransmission timeouts: A $(($(timeouts A) - ta0)), B $(($(timeouts B) - tb0))"
	cluster_down
	echo "    $mode: $(($(date +%s) - t0)) s in all"
done
[ "$fails" = 0 ]
