#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Every tool that opens the device, run where it is absent (HWPMC_DEVICE
# names a path that does not exist, as /dev/hwpmc does not without the
# module): exit status 1 and the hint to load the module.  Needs no module.
# Usage: no_module.sh TOOLS_DIR
set -u
tools=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HWPMC_DEVICE="$tmp/no-such-device"
fail=0
check() {
	name=$1
	shift
	"$tools/$name" "$@" >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" -ne 1 ] || ! grep -q 'The hwpmc module is not loaded' "$tmp/out" ||
		! grep -q 'insmod' "$tmp/out"; then
		echo "FAIL: $name $*: status $rc, output:"
		sed 's/^/  /' "$tmp/out"
		fail=1
	else
		echo "ok: $name $*"
	fi
}
check hwpmc-control -l
check hwpmc-control -L
check hwpmc-stat -e SCHED.SWITCH -- true
check hwpmc-record -o "$tmp/r.data" -- true
check hwpmc-top --iterations 1 -- true
exit $fail
