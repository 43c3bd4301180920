#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# The verbs model's bounded run: 20 fixed seeds (600 steps) of random verb sequences and
# traffic (tests/model/run.py) on one daemon, every result, errno,
# completion and byte checked against tests/model/verbs.py; then every
# regression case in tests/model/cases/ replayed (run.py --replay); then
# pair_down requires droced still up and no client object left
# (droce-ctl objects empty).
#   model.sh BUILD_DIR
set -u
/usr/bin/python3 -c 'import pyverbs' 2>/dev/null || { echo "python3-pyverbs missing"; exit 77; }
. "$(dirname "$0")/../integration/common.sh"
pair_up "$1" --single
fail=0
for seed in $(seq 1 20); do
	$DROCE_RUN_A /usr/bin/python3 "$top/tests/model/run.py" --seed $seed --steps 600 ||
		{ echo "FAIL seed $seed (exit $?)"; fail=1; }
done
for case in "$top"/tests/model/cases/*.json; do
	$DROCE_RUN_A /usr/bin/python3 "$top/tests/model/run.py" --replay "$case" ||
		{ echo "FAIL case $case (exit $?)"; fail=1; }
done
exit $fail
