#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# The verbs model's bounded run. First coverage.py: every verb doc/verbs.md
# says droce offers has its description in verbs.py. Then random sequences,
# every result, errno, completion and byte checked against
# tests/model/verbs.py (tests/model/run.py):
#   one daemon   20 fixed seeds (600 steps) of random verb sequences and
#                traffic, then every regression case in tests/model/cases/
#                (run.py --replay)
#   two daemons  10 fixed seeds and the cases again with each pair's
#                second context on the other droced (run.py --peer):
#                the traffic crosses the veth between the namespaces
# After each part both daemons must still be up with no client object left
# (netns-pair down --check, pair_down).
#   model.sh BUILD_DIR
set -u
/usr/bin/python3 -c 'import pyverbs' 2>/dev/null || { echo "python3-pyverbs missing"; exit 77; }
. "$(dirname "$0")/../integration/common.sh"
fail=0
/usr/bin/python3 "$(dirname "$0")/coverage.py" || { echo "FAIL verbs without a description"; fail=1; }
model() {	# what, then run.py arguments
	what=$1
	shift
	$DROCE_RUN_A /usr/bin/python3 "$top/tests/model/run.py" "$@" ||
		{ echo "FAIL $what (exit $?)"; fail=1; }
}

pair_up "$1" --single
for seed in $(seq 1 20); do
	model "seed $seed" --seed $seed --steps 600
done
for case in "$top"/tests/model/cases/*.json; do
	model "case $case" --replay "$case"
done
"$top/scripts/netns-pair" down --check || { echo "FAIL droced health (one daemon)"; fail=1; }

echo "--- two daemons"
pair_up "$1"
for seed in $(seq 101 110); do
	model "seed $seed, two daemons" --seed $seed --steps 600 --peer "$DROCE_RUN_B"
done
for case in "$top"/tests/model/cases/*.json; do
	model "case $case, two daemons" --replay "$case" --peer "$DROCE_RUN_B"
done
exit $fail
