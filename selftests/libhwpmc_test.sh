#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The libhwpmc tests that need the module (they skip on the build host):
# the C and C++ APIs against the real /dev/hwpmc, the FreeBSD pmc(3)
# example program, the FreeBSD-layout program (freebsd-program), and the pmclog reader on a log the kernel wrote.
# Runs inside the guest; prints kselftest TAP and a "# Totals:" line.
# With the module loaded (as root, in the guest) no test has a reason to
# skip: a skip fails here, unless its message says "hardware only" (a test
# that needs a real PMU, documented as such where it skips).
. "$(dirname "$0")/lib.sh"

[ -e /dev/hwpmc ] || { skip "libhwpmc device tests" "no /dev/hwpmc: the module is not loaded"; finish; }
list=$(ctest --test-dir "$BIN" -N -R '^(Device[A-Za-z]*\.|pmc-self-count$|pmclog-live$|freebsd-program$)' |
	sed -n 's/^ *Test *#[0-9]*: \(.*\)$/\1/p')
[ -n "$list" ] || { ok "libhwpmc device tests are built" false; finish; }
while read -r t; do
	out=$(ctest --test-dir "$BIN" -R "^${t//./\\.}\$" -V 2>&1)
	if grep -q '\*\*\*Skipped\|Not Run' <<<"$out"; then
		if grep -qi 'hardware only' <<<"$out"; then
			skip "$t" "$(grep -io 'hardware only.*' <<<"$out" | head -n 1)"
		else
			printf '%s\n' "$out" | sed 's/^/# /'
			ok "$t (skipped with the module loaded)" false
		fi
	elif grep -q '100% tests passed' <<<"$out"; then
		ok "$t" true
	else
		printf '%s\n' "$out" | sed 's/^/# /'
		ok "$t" false
	fi
done <<<"$list"
finish
