#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# no_daemon.sh DROCE_RUN SHIM_DIR
#
# Debian's own ibv_devices and ibv_devinfo, run through droce-run with no
# daemon listening, see no device and exit cleanly: no crash, no hang, and
# what they print is what they print on a host without RDMA devices.
# Exit 77 (skipped) when ibverbs-utils is not installed.

run=$1
shim_dir=$2
sock=/nonexistent/droce-test-$$.sock
command -v ibv_devices >/dev/null 2>&1 && command -v ibv_devinfo >/dev/null 2>&1 ||
	{ echo "ibverbs-utils missing: skipped"; exit 77; }
fail=0

check() {	# NAME RC OUTPUT PATTERN
	# 124: timeout(1) killed it; 129..192: a signal did. (ibv_devinfo exits 255.)
	if [ "$2" -eq 124 ] || { [ "$2" -gt 128 ] && [ "$2" -le 192 ]; }; then
		echo "FAIL: $1 hung or died (status $2)"
		fail=1
	elif ! printf '%s\n' "$3" | grep -q "$4"; then
		echo "FAIL: $1 printed, want /$4/:"
		printf '%s\n' "$3" | sed 's/^/    /'
		fail=1
	else
		echo "ok: $1 (exit $2)"
	fi
}

out=$(timeout 20 sh "$run" --socket "$sock" ibv_devices 2>&1)
rc=$?
check ibv_devices $rc "$out" 'node GUID'
[ $rc -eq 0 ] || { echo "FAIL: ibv_devices exited $rc"; fail=1; }
printf '%s\n' "$out" | grep -q 'Failed to get IB devices list' &&
	{ echo "FAIL: ibv_devices got no list at all"; fail=1; }

out=$(timeout 20 sh "$run" --socket "$sock" ibv_devinfo 2>&1)
check ibv_devinfo $? "$out" 'No IB devices found'

out=$(DROCE_SOCKET=$sock timeout 20 sh "$run" ibv_devinfo -l 2>&1)
check "ibv_devinfo -l" $? "$out" '0 HCAs found'

# Never the system library: the program really loaded the shim.
out=$(timeout 20 sh "$run" --socket "$sock" sh -c 'ldd "$(command -v ibv_devinfo)"' 2>&1)
check "ldd under droce-run" 0 "$out" "libibverbs.so.1 => $shim_dir/libibverbs.so.1"
exit $fail
