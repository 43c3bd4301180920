#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# The differential run of the verbs model (tests/model/differential.py):
# fixed seeds run call by call on droce (one daemon, loopback and two
# contexts) and on Linux Soft-RoCE in the rxe VM (tests/interop/rxe_vm.sh,
# pyverbs on rxe0), both without the deviations already decided
# (verbs.NOT_COMMON); any difference is shrunk to a minimal sequence and
# fails the test, as does either side disagreeing with the model.
#   differential.sh BUILD_DIR [SEEDS [STEPS]]
# Skips (77) only where the machine lacks what the VM needs.
set -u
/usr/bin/python3 -c 'import pyverbs' 2>/dev/null || { echo "python3-pyverbs missing"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
R=$here/../interop/rxe_vm.sh
export RXE_NETNS="${RXE_NETNS:-rxe}"
seeds=${2:-1 2 3 4 5 6}
steps=${3:-300}
vm=model
r=$("$R" deps 2>&1) || { echo "skipped: ${r#rxe_vm: }"; exit 77; }
"$R" build >/dev/null 2>&1
case $? in
0) ;;
77) echo "skipped: the VM cannot be built here"; exit 77 ;;
*) echo "FAIL building the VM"; exit 1 ;;
esac
. "$here/../integration/common.sh"
pair_up "$1" --single
trap 'rc=$?; "$R" stop $vm; (exit $rc); pair_down' EXIT
"$R" stop $vm 2>/dev/null
"$R" boot $vm 10.77.0.31/24 || { echo "FAIL the VM did not boot"; exit 1; }
gid=$("$R" gid $vm)
share=${RXE_CACHE:-/var/tmp/droce-rxe-vm}/run-$RXE_NETNS/$vm/share
out=$(mktemp -d /tmp/droce-model-diff.XXXXXX)
fail=0
for seed in $seeds; do
	/usr/bin/python3 "$here/differential.py" --droce "$DROCE_RUN_A" --vm $vm --share "$share" \
		--gid "$gid" --seed "$seed" --steps "$steps" --shrink --out "$out" ||
		{ echo "FAIL seed $seed (exit $?)"; fail=1; }
done
if [ $fail = 0 ]; then rm -rf "$out"; else echo "logs and shrunk sequences in $out"; fi
exit $fail
