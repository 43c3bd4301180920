#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# A Linux Soft-RoCE peer for the interop suite: Debian 12's kernel in qemu
# (emulated: TCG), rdma_rxe on its virtio NIC, on a bridge inside network
# namespace $RXE_NETNS. The guest has no disk: its /usr and /etc are this
# host's, shared read-only over 9p, so it runs the host's rdma-core and
# perftest, and RXE_HOSTDIR (if set) appears at the same path. Only the
# kernel (linux-image) and a static busybox for the first seconds of boot
# come from Debian's archive, through apt-get download, into $RXE_CACHE.
# rxe_guest.sh is the guest's init; commands reach it as files in a
# per-VM 9p share.
#
#   rxe_vm.sh deps                   name what this machine lacks (exit 77)
#   rxe_vm.sh build                  fetch the kernel, pack the initramfs
#   rxe_vm.sh net-up | net-down      namespace, bridge, host port rxehost
#   rxe_vm.sh boot NAME IP/PREFIX    start a VM, return once rxe0 is up
#   rxe_vm.sh exec [-t SEC] NAME CMD run CMD (sh) in the guest: its output,
#                                    its exit status (124: timed out)
#   rxe_vm.sh spawn [-t SEC] NAME CMD   the same in the background: prints
#                                    a job id for
#   rxe_vm.sh wait [-t SEC] NAME JOB    CMD's output and exit status
#   rxe_vm.sh gid NAME               GID index of rxe0's RoCEv2 IPv4 GID
#   rxe_vm.sh stop NAME | down       stop one VM | everything, namespace too
#   rxe_vm.sh capture-start FILE | capture-stop   tcpdump udp 4791 on the bridge
#
# Environment: RXE_CACHE (/var/tmp/droce-rxe-vm), RXE_NETNS (rxe),
# RXE_MTU (1500, the guest NIC's MTU at boot), RXE_HOSTDIR, RXE_MEM (1G),
# RXE_BOOT_TIMEOUT (300 s). Exit 77 means this machine lacks something.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${RXE_CACHE:-/var/tmp/droce-rxe-vm}
ns=${RXE_NETNS:-rxe}
run=$cache/run-$ns		# per-namespace: VMs, capture
br=rxebr0
hostif=rxehost
hostip=10.77.0.100/24

say() { echo "rxe_vm: $*" >&2; }
die() { say "$*"; exit 1; }
lacks() { say "this machine lacks $*"; exit 77; }

cmd_deps() {
	[ "$(id -u)" = 0 ] || lacks "root (namespaces, taps)"
	missing=
	for c in qemu-system-x86_64:qemu-system-x86 cpio:cpio depmod:kmod modprobe:kmod \
		dpkg-deb:dpkg apt-get:apt tcpdump:tcpdump ip:iproute2 rdma:iproute2 \
		timeout:coreutils flock:util-linux; do
		command -v "${c%%:*}" >/dev/null || missing="$missing ${c%%:*} (package ${c#*:})"
	done
	[ -c /dev/net/tun ] || missing="$missing /dev/net/tun"
	[ -z "$missing" ] || lacks "${missing# }"
}

# ---- build: $cache/kernel/{vmlinuz,modules/}, busybox, then $run/initramfs.cpio
# (per namespace: runs in two namespaces may pack different rxe_guest.sh)

# The kernel image behind Debian's linux-image-amd64, e.g. linux-image-6.1.0-56-amd64
kernel_package() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\).*/\1/p' | head -n 1
}

# PKG's .deb in the cache (the last in name order), or a name that does not exist
deb_of() {
	for f in "$cache/debs/$1"_*.deb; do :; done
	echo "$f"
}

# apt-get download into $cache/debs, reading the archive's index first
# when this machine has none yet
download() {
	mkdir -p "$cache/debs"
	( cd "$cache/debs" && apt-get download -q "$@" ) >/dev/null 2>&1 && return 0
	apt-get update -q >/dev/null 2>&1
	( cd "$cache/debs" && apt-get download -q "$@" ) >&2 ||
		lacks "access to Debian's archive (apt-get download $*)"
}

# vmlinuz and the modules the guest loads, in load order, from the kernel .deb
unpack_kernel() {
	deb=$1
	x=$cache/kernel.tmp
	rm -rf "$x" "$cache/kernel"
	mkdir -p "$x/modules"
	say "unpacking $(basename "$deb")"
	dpkg-deb -x "$deb" "$x/root"
	kver=$(ls "$x/root/lib/modules")
	cp "$x/root/boot/vmlinuz-$kver" "$x/vmlinuz"
	depmod -b "$x/root" "$kver"
	n=10
	seen=
	# shellcheck disable=SC2086
	for f in $(modprobe -d "$x/root" -S "$kver" --show-depends -a $modules |
		sed -n 's/^insmod \([^ ]*\).*/\1/p'); do
		m=$(basename "$f")
		case "$seen " in *" $m "*) continue ;; esac
		seen="$seen $m"
		cp "$f" "$x/modules/$n-$m"
		n=$((n + 1))
	done
	rm -rf "$x/root"
	mv "$x" "$cache/kernel"
}

# virtio + 9p to reach the host's files, virtio_net, rdma_rxe (and its
# verbs core), ib_uverbs for user space, a crc32 for rxe's ICRC, and
# rdma_ucm for librdmacm (it brings rdma_cm and ib_cm, the kernel's CM),
# nf_tables for interop.sh's rules in the guest (ECT(0) on rxe's frames)
modules="virtio_pci 9pnet_virtio 9p virtio_net crc32_generic rdma_rxe ib_uverbs rdma_ucm nf_tables"

cmd_build() {
	cmd_deps
	mkdir -p "$cache"
	exec 8>"$cache/lock"
	flock 8
	kpkg=$(kernel_package)
	if [ -z "$kpkg" ]; then
		apt-get update -q >/dev/null 2>&1 || true
		kpkg=$(kernel_package)
	fi
	if [ -z "$kpkg" ]; then	# offline: keep what was built before
		[ -s "$cache/kernel/vmlinuz" ] || lacks "Debian's package index (linux-image-amd64)"
		read -r kpkg _ <"$cache/kernel/package"
	fi
	[ -e "$(deb_of "$kpkg")" ] || download "$kpkg"
	[ -e "$(deb_of busybox-static)" ] || download busybox-static
	# unpacked again when the package or the module list changed
	if [ "$(cat "$cache/kernel/package" 2>/dev/null)" != "$kpkg $modules" ]; then
		unpack_kernel "$(deb_of "$kpkg")"
		echo "$kpkg $modules" >"$cache/kernel/package"
	fi
	# packed every time (it takes well under a second): rxe_guest.sh may have changed
	mkdir -p "$run"
	r=$run/initramfs.tmp
	rm -rf "$r"
	mkdir -p "$r/busybox" "$r/usr" "$r/etc" "$r/proc" "$r/sys" "$r/dev" "$r/run" "$r/tmp" \
		"$r/root" "$r/var/tmp"
	dpkg-deb --fsys-tarfile "$(deb_of busybox-static)" |
		tar -xO ./bin/busybox >"$r/busybox/busybox"
	chmod 755 "$r/busybox/busybox"
	cp -r "$cache/kernel/modules" "$r/modules"
	cp "$here/rxe_guest.sh" "$r/init"
	chmod 755 "$r/init"
	# Debian 12's merged /usr: the host's /usr arrives at boot
	for d in bin sbin lib lib64; do
		ln -s "usr/$d" "$r/$d"
	done
	( cd "$r" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet ) >"$run/initramfs.cpio.tmp"
	mv "$run/initramfs.cpio.tmp" "$run/initramfs.cpio"
	rm -rf "$r"
}

# ---- network: bridge $br in namespace $ns, host port $hostif ($hostip)

cmd_net_up() {
	ip netns list | grep -qx "$ns\( .*\)\{0,1\}" || ip netns add "$ns"
	# no IPv6: keeps router solicitations off the bridge and out of droced
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1
	# ARP answered only on the interface holding the address: else the
	# bridge itself answers for rxehost's too, with its own MAC, and the
	# guest's RoCE frames for droce go to the bridge when its answer wins
	ip netns exec "$ns" sysctl -qw net.ipv4.conf.all.arp_ignore=1
	ip -n "$ns" link set lo up
	if ! ip -n "$ns" link show "$br" >/dev/null 2>&1; then
		# no multicast snooping: the bridge floods groups to every port
		ip -n "$ns" link add "$br" type bridge mcast_snooping 0
		ip -n "$ns" link set "$br" up
	fi
	if ! ip -n "$ns" link show "$hostif" >/dev/null 2>&1; then
		ip -n "$ns" link add "$hostif" type veth peer name "$hostif-br"
		ip -n "$ns" link set "$hostif-br" master "$br" up
		ip -n "$ns" addr add "$hostip" dev "$hostif"
		ip -n "$ns" link set "$hostif" up
	fi
}

cmd_net_down() {
	ip netns list | grep -qx "$ns\( .*\)\{0,1\}" || return 0
	ip netns del "$ns"
}

# ---- VMs: $run/NAME/{qemu.pid,console.log,share/}

qemu_pid() {	# NAME: pid of its running qemu, or fail
	p=$(cat "$run/$1/qemu.pid" 2>/dev/null) && kill -0 "$p" 2>/dev/null && echo "$p"
}

cmd_boot() {
	name=$1
	ip=$2
	echo "$name" | grep -qx '[a-z0-9]\{1,10\}' || die "VM names are 1-10 of [a-z0-9]"
	[ -s "$run/initramfs.cpio" ] || die "no initramfs: run rxe_vm.sh build"
	cmd_net_up
	d=$run/$name
	! qemu_pid "$name" >/dev/null || die "$name is already running"
	rm -rf "$d"
	mkdir -p "$d/share"
	tap=tap-$name
	ip -n "$ns" link del "$tap" 2>/dev/null || true
	ip -n "$ns" tuntap add dev "$tap" mode tap
	ip -n "$ns" link set "$tap" mtu 9000 master "$br" up
	# a MAC made of the IP address: two VMs never share one
	mac=$(echo "${ip%/*}" | awk -F. '{ printf "52:54:%02x:%02x:%02x:%02x", $1, $2, $3, $4 }')
	hostdir=${RXE_HOSTDIR:-}
	# what the guest's init reads (rxe_guest.sh)
	{
		echo "name=$name"
		echo "ip=$ip"
		echo "mtu=${RXE_MTU:-1500}"
		echo "hostdir='$hostdir'"
	} >"$d/share/config"
	share() {	# tag path [readonly]
		echo "-fsdev local,id=$1,path=$2,security_model=none${3:+,readonly=on}"
		echo "-device virtio-9p-pci,fsdev=$1,mount_tag=$1"
	}
	# romfile=: no iPXE option ROM, the kernel is loaded directly
	# shellcheck disable=SC2046
	ip netns exec "$ns" qemu-system-x86_64 -name "rxe-$name" \
		-accel tcg -cpu max -smp 1 -m "${RXE_MEM:-1G}" \
		-nodefaults -display none -no-reboot \
		-kernel "$cache/kernel/vmlinuz" -initrd "$run/initramfs.cpio" \
		-append "console=ttyS0 quiet panic=-1" -serial "file:$d/console.log" \
		-netdev "tap,id=net0,ifname=$tap,script=no,downscript=no" \
		-device "virtio-net-pci,netdev=net0,mac=$mac,romfile=" \
		$(share usr /usr ro) $(share etc /etc ro) $(share share "$d/share") \
		$(if [ -n "$hostdir" ]; then share hostdir "$hostdir" ro; fi) \
		-daemonize -pidfile "$d/qemu.pid" </dev/null >"$d/qemu.log" 2>&1 ||
		{ cat "$d/qemu.log" >&2; die "qemu did not start"; }
	t=0
	until [ -e "$d/share/ready" ]; do
		if ! qemu_pid "$name" >/dev/null || [ $t -ge $((${RXE_BOOT_TIMEOUT:-300} * 10)) ]; then
			tail -n 20 "$d/console.log" "$d/qemu.log" >&2
			die "$name did not come up"
		fi
		sleep 0.1
		t=$((t + 1))
	done
	[ -n "$(cmd_gid "$name")" ] || die "$name: rxe0 has no RoCE v2 IPv4 GID"
	say "$name up in $((t / 10)) s: $(cat "$d/share/ready")"
}

cmd_stop() {
	if p=$(qemu_pid "$1"); then
		kill "$p" 2>/dev/null || true
		t=0
		while kill -0 "$p" 2>/dev/null && [ $t -lt 50 ]; do
			sleep 0.1
			t=$((t + 1))
		done
		kill -9 "$p" 2>/dev/null || true
	fi
	ip -n "$ns" link del "tap-$1" 2>/dev/null || true
	rm -rf "${run:?}/$1"
}

cmd_down() {
	cmd_capture_stop
	for d in "$run"/*/; do
		[ -d "$d" ] && cmd_stop "$(basename "$d")"
	done
	cmd_net_down
}

# ---- jobs: the host writes share/ID.LIMIT.job, the guest leaves ID.out and
# then ID.rc (see rxe_guest.sh)

job_limit=600	# seconds, or -t SEC

cmd_spawn() {	# NAME CMD
	s=$run/$1/share
	if [ ! -e "$s/ready" ] || ! qemu_pid "$1" >/dev/null; then
		die "$1 is not running"
	fi
	id=$(date +%s%N)$$
	printf '%s\n' "$2" >"$s/$id.new"
	mv "$s/$id.new" "$s/$id.$job_limit.job"
	echo "$id"
}

cmd_wait() {	# NAME ID
	s=$run/$1/share
	t=0
	# the guest's timeout ends the job first; this is for a guest that hangs
	until [ -e "$s/$2.rc" ]; do
		qemu_pid "$1" >/dev/null || die "$1 died running job $2"
		[ $t -lt $(((job_limit + 30) * 10)) ] || die "$1 never finished job $2"
		sleep 0.1
		t=$((t + 1))
	done
	cat "$s/$2.out"
	rc=$(cat "$s/$2.rc")
	rm -f "$s/$2.out" "$s/$2.rc" "$s/$2.sh"
	[ "$rc" != 124 ] || say "job on $1 timed out after $job_limit s"
	return "$rc"
}

cmd_gid() {
	sed -n 's/^gid //p' "$run/$1/share/ready"
}

# ---- capture: tcpdump on the bridge, one at a time

cmd_capture_start() {
	cmd_capture_stop
	mkdir -p "$run"
	: >"$run/tcpdump.log"
	# -U --immediate-mode: every frame reaches the file as it arrives;
	# -Z root: write the file as root, wherever it is
	ip netns exec "$ns" tcpdump -i "$br" -U --immediate-mode -Z root -w "$1" udp port 4791 \
		</dev/null >"$run/tcpdump.log" 2>&1 &
	echo $! >"$run/tcpdump.pid"
	t=0
	until grep -q "listening on" "$run/tcpdump.log"; do
		if ! kill -0 "$(cat "$run/tcpdump.pid")" 2>/dev/null || [ $t -ge 100 ]; then
			cat "$run/tcpdump.log" >&2
			die "tcpdump did not start"
		fi
		sleep 0.1
		t=$((t + 1))
	done
}

cmd_capture_stop() {
	p=$(cat "$run/tcpdump.pid" 2>/dev/null) || return 0
	rm -f "$run/tcpdump.pid"
	kill -INT "$p" 2>/dev/null || return 0
	while kill -0 "$p" 2>/dev/null; do
		sleep 0.1
	done
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
deps | build | net-up | net-down | down | capture-stop)
	"cmd_$(echo "$cmd" | tr - _)"
	;;
boot)
	[ $# = 2 ] || die "usage: boot NAME IP/PREFIX"
	cmd_boot "$@"
	;;
exec | spawn | wait)
	if [ "${1:-}" = -t ]; then
		job_limit=$2
		shift 2
	fi
	[ $# = 2 ] || die "usage: $cmd [-t SEC] NAME CMD|JOB"
	if [ "$cmd" = exec ]; then
		id=$(cmd_spawn "$1" "$2")
		cmd_wait "$1" "$id"
	else
		"cmd_$cmd" "$1" "$2"
	fi
	;;
gid | stop)
	[ $# = 1 ] || die "usage: $cmd NAME"
	"cmd_$cmd" "$1"
	;;
capture-start)
	[ $# = 1 ] || die "usage: capture-start FILE"
	cmd_capture_start "$1"
	;;
*)
	sed -n '5,30s/^# \{0,1\}//p' "$0" >&2
	exit 2
	;;
esac
