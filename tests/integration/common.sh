# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# Sourced by the integration scripts: `pair_up BUILD_DIR [netns-pair up
# options]` skips (77) without root, brings scripts/netns-pair up with the
# build's binaries and sets its environment (DROCE_RUN_A, DROCE_RUN_B,
# DROCE_IP_A, DROCE_IP_B, DROCE_DEV, DROCE_GID_INDEX, ...) plus $build and
# $top. On exit, pair_down judges the daemons' health (`netns-pair down
# --check`: still running, no client objects left, exit 0 on SIGTERM) and
# takes the pair down; an unhealthy daemon fails the script even if every
# test in it passed.
# pair_down reads the script's status from $?: an EXIT trap that runs
# other commands first saves it and restores it before, as in
#   trap 'rc=$?; cleanup; (exit $rc); pair_down' EXIT

pair_up() {
	build=$1
	shift
	top=$(cd "$(dirname "$0")/../.." && pwd)
	export DROCE_BUILD="$build"
	[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)"; exit 77; }
	trap pair_down EXIT
	"$top/scripts/netns-pair" up "$@" || exit 1
	eval "$("$top/scripts/netns-pair" env)"
}

# The EXIT trap: keep the script's status unless the daemons are unhealthy.
pair_down() {
	status=$?
	if ! "$top/scripts/netns-pair" down --check; then
		echo "FAIL droced health (see above)"
		[ $status = 0 ] || [ $status = 77 ] && status=1
	fi
	exit $status
}

# A check's verdict line; fail also counts into $fails (the caller's
# exit status is decided from it).
fail() {
	echo "FAIL $*"
	fails=$((fails + 1))
}
ok() {
	echo "ok   $*"
}

# A tool's exit status RC says it refused cleanly: non-zero, not the
# timeout's 124, not a signal (255 is exit(-1), not a signal).
failed_cleanly() {	# RC
	[ "$1" != 0 ] && [ "$1" != 124 ] && { [ "$1" -lt 128 ] || [ "$1" = 255 ]; }
}
