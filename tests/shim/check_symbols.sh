#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# check_symbols.sh SHIM [SYSTEM_LIB]
#
# A drop-in library (the verbs shim, droce's librdmacm) must replace the
# system's of the same name: for libibverbs.so.1, SONAME libibverbs.so.1, and
# every symbol@version the system's library defines (objdump -T: the
# version in parentheses is a non-default one, e.g. ibv_get_device_list
# @IBVERBS_1.0 beside @@IBVERBS_1.1) defined by the shim, with the same
# default/compat status. The shim exports nothing else.
# Exit 77 (skipped) without objdump or the system library.

shim=$1
sys=${2:-}
# libibverbs.so.1.14.44 -> libibverbs.so.1
name=$(basename "$shim" | sed 's/\(\.so\.[0-9]*\).*/\1/')
if [ -z "$sys" ]; then
	for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib; do
		[ -e "$d/$name" ] && sys=$d/$name && break
	done
fi
command -v objdump >/dev/null 2>&1 || { echo "objdump missing: skipped"; exit 77; }
[ -n "$sys" ] && [ -e "$sys" ] || { echo "no system $name: skipped"; exit 77; }
[ -e "$shim" ] || { echo "no shim at $shim"; exit 1; }

# "VERSION NAME" per defined dynamic symbol (version nodes included).
defined() {
	objdump -T "$1" | awk '/^[0-9a-f]+ / && $0 !~ /\*UND\*/ { print $(NF - 1), $NF }' |
		sort -u
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
defined "$sys" >"$tmp/sys"
defined "$shim" >"$tmp/shim"
fail=0

soname=$(objdump -p "$shim" | awk '$1 == "SONAME" { print $2 }')
if [ "$soname" != "$name" ]; then
	echo "FAIL: SONAME is '$soname', want $name"
	fail=1
fi
missing=$(comm -23 "$tmp/sys" "$tmp/shim")
if [ -n "$missing" ]; then
	echo "FAIL: defined by $sys but not by the shim:"
	echo "$missing" | sed 's/^/    /'
	fail=1
fi
extra=$(comm -13 "$tmp/sys" "$tmp/shim")
if [ -n "$extra" ]; then
	echo "FAIL: exported by the shim but not by $sys:"
	echo "$extra" | sed 's/^/    /'
	fail=1
fi
total=$(wc -l <"$tmp/sys")
compat=$(grep -c '^(' "$tmp/sys")
echo "$sys: $total symbol@version entries ($compat non-default); shim: $(wc -l <"$tmp/shim")"
exit $fail
