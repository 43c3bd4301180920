#!/busybox/busybox sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# Init of the rxe test VM: rxe_vm.sh packs this file as the initramfs's
# /init. First, in the initramfs's static busybox: the kernel modules, then
# the host's /usr and /etc (read-only 9p), the VM's share (read-write 9p,
# holding config and the jobs) and RXE_HOSTDIR at its host path. Then, as
# "/init up" in the host's dash: eth0 and rxe0 from config, "ready" in the
# share, and forever the jobs: for each share/ID.LIMIT.job, run it with
# sh under a LIMIT-second timeout, its output in ID.out, then its exit
# status in ID.rc (written last, renamed into place: the host waits on it).
# config sets name, ip, mtu and hostdir (written by rxe_vm.sh boot)
# shellcheck disable=SC1091,SC2154
set -u
share=/run/share
p9=trans=virtio,version=9p2000.L,msize=262144

if [ "${1:-}" != up ]; then
	/busybox/busybox --install -s /busybox
	export PATH=/busybox
	mount -t proc proc /proc
	mount -t sysfs sysfs /sys
	mount -t devtmpfs devtmpfs /dev
	# in load order (rxe_vm.sh numbered them)
	for m in /modules/*.ko; do
		insmod "$m" || echo "rxe_guest: insmod $m failed"
	done
	# cache=loose: nothing the host shares read-only changes while we run
	mount -t 9p -o "$p9,ro,cache=loose" usr /usr
	mount -t 9p -o "$p9,ro,cache=loose" etc /etc
	mkdir -p "$share"
	mount -t 9p -o "$p9" share "$share"
	. "$share/config"
	if [ -n "$hostdir" ]; then
		mkdir -p "$hostdir"
		mount -t 9p -o "$p9,ro,cache=loose" hostdir "$hostdir"
	fi
	# Debian's busybox sh prefers its own applets to $PATH: from here on the
	# host's dash and tools
	exec /usr/bin/dash /init up
fi

export PATH=/usr/sbin:/usr/bin HOME=/root
. "$share/config"
hostname "$name"
# no IPv6: keeps the bridge quiet and rxe0's GID table short
echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6
echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6
ip link set lo up
ip link set eth0 mtu "$mtu"
ip addr add "$ip" dev eth0
ip link set eth0 up
rdma link add rxe0 type rxe netdev eth0

# the RoCE v2 GID of the IPv4 address (::ffff:a.b.c.d); rxe adds it soon
# after the link, among the table's first entries
port=/sys/class/infiniband/rxe0/ports/1
gid=
tries=0
while [ -z "$gid" ] && [ $tries -lt 100 ]; do
	for n in 0 1 2 3 4 5 6 7; do
		read -r type <"$port/gid_attrs/types/$n" 2>/dev/null || continue
		read -r value <"$port/gids/$n"
		case "$type $value" in
		"RoCE v2 0000:0000:0000:0000:0000:ffff:"*) gid=$n && break ;;
		esac
	done
	[ -n "$gid" ] || sleep 0.1
	tries=$((tries + 1))
done
echo "gid $gid" >"$share/ready.new"
echo "kernel $(uname -r), mtu $mtu, up after $(cut -d' ' -f1 /proc/uptime) s" >>"$share/ready.new"
mv "$share/ready.new" "$share/ready"

cd "$share" || exit 1
while :; do
	for f in *.job; do
		[ -e "$f" ] || continue
		id=${f%%.*}
		limit=${f#*.}
		limit=${limit%.job}
		mv "$f" "$id.sh" || continue
		(
			cd /tmp || exit 1
			timeout -k 5 "$limit" sh "$share/$id.sh" </dev/null >"$share/$id.out" 2>&1
			echo $? >"$share/$id.rc.new"
			mv "$share/$id.rc.new" "$share/$id.rc"
		) &
	done
	sleep 0.1
done
