#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# The daemon's rules seen from clients: privileged Q_Keys only with
# CAP_NET_RAW (as the kernel rules) and IBV_EVENT_DEVICE_FATAL for every
# client when droced stops, which exits 0 all the same. (The SRQ limit and
# memory windows: tests/verbs.)
#   rules.sh BUILD_DIR
set -u
command -v setpriv >/dev/null || { echo "setpriv missing"; exit 77; }
. "$(dirname "$0")/common.sh"
pair_up "$1" --single
probe=$build/tests/integration/verbs_probe
fail=0

out=$($DROCE_RUN_A "$probe" qkey)
[ "$out" = "qkey ok" ] && echo "ok   root may take a privileged Q_Key" ||
	{ echo "FAIL root: $out"; fail=1; }
out=$($DROCE_RUN_A setpriv --reuid=nobody --regid=nogroup --clear-groups \
	--inh-caps=-all --bounding-set=-all "$probe" qkey)
[ "$out" = "qkey EPERM" ] && echo "ok   an unprivileged client gets EPERM" ||
	{ echo "FAIL unprivileged: $out"; fail=1; }

$DROCE_RUN_A "$probe" fatal >/tmp/droce-fatal.$$ 2>&1 &
cpid=$!
i=0
until grep -q waiting /tmp/droce-fatal.$$ || [ $i -gt 50 ]; do sleep 0.1; i=$((i + 1)); done
"$top/scripts/netns-pair" stop A && echo "ok   droced stops with exit status 0, a client still attached" ||
	fail=1
i=0
while kill -0 $cpid 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if grep -q "event DEVICE_FATAL" /tmp/droce-fatal.$$; then
	echo "ok   stopping droced: the client got IBV_EVENT_DEVICE_FATAL"
else
	echo "FAIL no DEVICE_FATAL: $(cat /tmp/droce-fatal.$$)"
	kill $cpid 2>/dev/null
	fail=1
fi
rm -f /tmp/droce-fatal.$$
exit $fail
