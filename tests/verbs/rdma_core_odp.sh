#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# rdma-core's own ODP tests (tests/test_odp.py, shipped by Debian in
# /usr/share/doc/rdma-core/tests, run through python3-pyverbs) on one
# droced: each test's two players on the same device, traffic checked by
# rdma-core's own validation. Every test that droce's odp_caps admit must
# pass, by name; the ones they do not must be skipped for that reason
# (atomics: no IBV_ODP_SUPPORT_ATOMIC; XRC: no XRC at all), never pass
# or fail otherwise.
#   rdma_core_odp.sh BUILD_DIR
# Skips (77) without root, python3-pyverbs or rdma-core's tests.
set -u
tests=/usr/share/doc/rdma-core/tests
[ -f "$tests/test_odp.py.gz" ] || [ -f "$tests/test_odp.py" ] ||
	{ echo "rdma-core's tests are not installed ($tests)"; exit 77; }
/usr/bin/python3 -c 'import pyverbs.device' 2>/dev/null || { echo "no python3-pyverbs"; exit 77; }
. "$(dirname "$0")/../integration/common.sh"
pair_up "$1" --single
fails=0
work=$(mktemp -d)
huge_was=$(cat /proc/sys/vm/nr_hugepages)
cleanup() {
	status=$?
	echo "$huge_was" >/proc/sys/vm/nr_hugepages
	rm -rf "$work"
	(exit $status)
	pair_down	# keeps the script's status, as common.sh's trap
}
trap cleanup EXIT
# the two huge-page tests want 2 MiB pages: a few where none are free
[ "$(awk '/^HugePages_Free/ { print $2 }' /proc/meminfo)" -ge 4 ] ||
	echo $((huge_was + 4)) >/proc/sys/vm/nr_hugepages
cp -r "$tests" "$work/tests"
gunzip -f "$work"/tests/*.gz
(cd "$work" && $DROCE_RUN_A timeout 300 /usr/bin/python3 tests/run_tests.py \
	--dev "$DROCE_DEV" --gid "$DROCE_GID_INDEX" -v tests.test_odp) >"$work/log" 2>&1
rc=$?
sed 's/^/    /' "$work/log"
[ $rc = 0 ] || fail "run_tests.py exit $rc"
for t in rc_traffic implicit_rc_traffic ud_traffic rc_srq_traffic rc_rdma_read \
	rc_rdma_write rc_huge_traffic rc_huge_user_addr_traffic sync_prefetch_rc_traffic \
	async_prefetch_rc_traffic implicit_sync_prefetch_rc_traffic \
	implicit_async_prefetch_rc_traffic prefetch_sync_no_page_fault_rc_traffic \
	prefetch_async_no_page_fault_rc_traffic; do
	if grep -q "^test_odp_$t .* \.\.\. ok$" "$work/log"; then
		ok "test_odp_$t"
	else
		fail "test_odp_$t did not pass"
	fi
done
for t in rc_atomic_cmp_and_swp rc_atomic_fetch_and_add; do
	if grep -q "^test_odp_$t .* skipped 'ODP is unavailable" "$work/log"; then
		ok "test_odp_$t skipped: odp_caps claim no ATOMIC"
	else
		fail "test_odp_$t not skipped for the missing ODP ATOMIC"
	fi
done
grep -q "^test_odp_xrc_traffic .* skipped" "$work/log" || fail "test_odp_xrc_traffic not skipped"
[ "$fails" = 0 ]
