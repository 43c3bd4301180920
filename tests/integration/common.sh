# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# Sourced by the integration scripts: `pair_up BUILD_DIR [netns-pair up
# options]` skips (77) without root, brings scripts/netns-pair up with the
# build's binaries, takes it down on exit, and sets its environment
# (DROCE_RUN_A, DROCE_RUN_B, DROCE_IP_A, DROCE_IP_B, DROCE_DEV,
# DROCE_GID_INDEX) plus $build and $top.

pair_up() {
	build=$1
	shift
	top=$(cd "$(dirname "$0")/../.." && pwd)
	export DROCE_BUILD="$build"
	[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)"; exit 77; }
	trap '"$top/scripts/netns-pair" down >/dev/null 2>&1' EXIT
	"$top/scripts/netns-pair" up "$@" || exit 1
	eval "$("$top/scripts/netns-pair" env)"
}
