#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# UD multicast between two droced: receivers on the other daemon and on the
# sender's own daemon each get exactly one copy of every message (the
# sender's daemon delivers locally without the wire and sends the group
# onto it); a QP attached twice still gets one copy; a QP that detached gets
# none.   mcast.sh BUILD_DIR
set -u
. "$(dirname "$0")/common.sh"
pair_up "$1"
tool=$build/tests/integration/mcast_ud
group=239.1.2.3
n=50
log=$(mktemp -d)
$DROCE_RUN_B "$tool" recv $group 8 >"$log/remote" 2>&1 &
$DROCE_RUN_A "$tool" recv $group 8 >"$log/local" 2>&1 &
$DROCE_RUN_B "$tool" recv $group 8 twice >"$log/twice" 2>&1 &
$DROCE_RUN_B "$tool" recv $group 8 detach >"$log/detached" 2>&1 &
sleep 1.5
$DROCE_RUN_A "$tool" send $group $n >"$log/sender" 2>&1 || { echo "FAIL sender"; cat "$log/sender"; }
wait
fail=0
for r in remote local twice; do
	if grep -q "^got $n bad 0$" "$log/$r"; then
		echo "ok   $r receiver: $(tail -n 1 "$log/$r")"
	else
		echo "FAIL $r receiver: $(tail -n 1 "$log/$r") (want got $n bad 0)"
		fail=1
	fi
done
if grep -q "^got 0 bad 0$" "$log/detached"; then
	echo "ok   detached receiver: nothing"
else
	echo "FAIL detached receiver: $(tail -n 1 "$log/detached")"
	fail=1
fi
rm -rf "$log"
exit $fail
