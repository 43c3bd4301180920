#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# The per-man-page verbs programs (tests/verbs/*.c) against real droced:
#   run.sh pair|single BUILD_DIR PROG...
# Each PROG runs as an agent on side B ("PROG serve") and as the driver on
# side A ("PROG drive IP_B"); pair: two daemons in two namespaces, single:
# one daemon (loopback). A PROG passes only if both its driver and its
# agent exit 0: a crash, a signal or a `timeout` (124) fails it, whatever
# it printed before. A driver exits 1 when any check failed.
set -u
mode=$1
shift
. "$(dirname "$0")/../integration/common.sh"
if [ "$mode" = single ]; then pair_up "$1" --single; else pair_up "$1"; fi
shift
export DROCE_GID_INDEX
fail=0
# reg_mr_kinds registers hugetlb memory too: a few 2 MiB pages where none are free
huge_was=$(cat /proc/sys/vm/nr_hugepages)
[ "$(awk '/^HugePages_Free/ { print $2 }' /proc/meminfo)" -ge 4 ] ||
	echo $((huge_was + 4)) >/proc/sys/vm/nr_hugepages
log=$(mktemp -d)
for prog in "$@"; do
	name=$(basename "$prog")
	echo "== $name ($mode)"
	$DROCE_RUN_B timeout 120 "$prog" serve >"$log/agent" 2>&1 &
	apid=$!
	# the pipe's status is tee's: the driver's own goes through a file
	{
		$DROCE_RUN_A timeout 120 "$prog" drive "$DROCE_IP_B" 2>&1
		echo $? >"$log/driver-status"
	} | tee "$log/driver"
	drc=$(cat "$log/driver-status" 2>/dev/null)
	wait $apid
	arc=$?
	nfail=$(grep -c '^FAIL' "$log/driver")
	if [ "$drc" != 0 ] || [ $arc -ne 0 ] || [ "$nfail" != 0 ]; then
		echo "FAIL $name: driver exit $drc, agent exit $arc, $nfail failed checks"
		sed 's/^/    agent: /' "$log/agent" | tail -n 20
		fail=1
	fi
done
rm -rf "$log"
echo "$huge_was" >/proc/sys/vm/nr_hugepages
exit $fail
