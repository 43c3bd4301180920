#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# UD multicast between two droced: receivers on the other daemon and on the
# sender's own daemon each get every message exactly once, in order, every
# byte as sent (the sender's daemon delivers locally without the wire and
# sends the group onto it); a QP attached twice still gets one copy; a QP
# that detached gets none. mcast_ud numbers its messages and its receivers
# check each number and byte (it prints the first gap or duplicate).
#   mcast.sh BUILD_DIR
set -u
. "$(dirname "$0")/common.sh"
pair_up "$1"
tool=$build/tests/integration/mcast_ud
group=239.1.2.3
n=50
log=$(mktemp -d)
fail=0
$DROCE_RUN_B "$tool" recv $group 8 >"$log/remote" 2>&1 &
pid_remote=$!
$DROCE_RUN_A "$tool" recv $group 8 >"$log/local" 2>&1 &
pid_local=$!
$DROCE_RUN_B "$tool" recv $group 8 twice >"$log/twice" 2>&1 &
pid_twice=$!
$DROCE_RUN_B "$tool" recv $group 8 detach >"$log/detached" 2>&1 &
pid_detached=$!
sleep 1.5
$DROCE_RUN_A "$tool" send $group $n >"$log/sender" 2>&1 ||
	{ echo "FAIL sender (exit $?)"; cat "$log/sender"; fail=1; }

# judge RECEIVER PID WANT: its exit status and its last line
judge() {
	wait "$2"
	rc=$?
	if [ $rc = 0 ] && [ "$(tail -n 1 "$log/$1")" = "$3" ]; then
		echo "ok   $1 receiver: $3"
	else
		echo "FAIL $1 receiver: exit $rc (want $3)"
		sed 's/^/    /' "$log/$1"
		fail=1
	fi
}
judge remote $pid_remote "got $n bad 0"
judge local $pid_local "got $n bad 0"
judge twice $pid_twice "got $n bad 0"
judge detached $pid_detached "got 0 bad 0"
rm -rf "$log"
exit $fail
