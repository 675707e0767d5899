#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# hwpmc-control in the guest: it lists what GETCPUINFO and GETPMCINFO
# report, shows PMCADMIN's effect, and explains its errors.
. "$(dirname "$0")/lib.sh"
ctl=$BIN/tools/hwpmc-control
stat=$BIN/tools/hwpmc-stat
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ -e /dev/hwpmc ] || { skip "hwpmc-control" "no /dev/hwpmc: the module is not loaded"; finish; }
ncpu=$(nproc)

"$ctl" -L >"$tmp/L" 2>&1
ok "-L lists the TSC class with 1 row" grep -q '^TSC: 1 row, 64-bit' "$tmp/L"
ok "-L lists the SOFT class with 16 rows" grep -q '^SOFT: 16 rows, 64-bit' "$tmp/L"
ok "-L lists the 8 SOFT events" test "$(grep -cE '^    (CLOCK|PAGE_FAULT|SCHED|SYSCALL)\.' "$tmp/L")" -eq 8
ok "-L names the CPU type" grep -qE '^CPU type [A-Z_0-9]+, [0-9]+ CPUs, [0-9]+ rows per CPU' "$tmp/L"
nrows=$(sed -n 's/^CPU type .*, \([0-9]*\) rows per CPU$/\1/p' "$tmp/L")
# GETCPUINFO's classes account for every row of GETPMCINFO.
ok "-L: the classes' rows add up to the rows per CPU" \
	test "$(awk '/^[A-Z0-9]+: [0-9]+ rows?,/ { n += $2 } END { print n + 0 }' "$tmp/L")" -eq "$nrows"

"$ctl" -l >"$tmp/l" 2>&1
ok "-l shows every online CPU" test "$(grep -c '^CPU [0-9]' "$tmp/l")" -eq "$ncpu"
ok "-l shows as many rows of CPU 0 as -L counts, TSC-0 first" \
	sh -c "awk '/^CPU 0/{f=1;next} /^CPU/{f=0} f && NF>1 && \$1 ~ /^[0-9]+\$/' '$tmp/l' | wc -l | grep -qx '$nrows' && grep -q '^  0 *TSC-0 ' '$tmp/l'"
ok "-l shows free rows as FREE" grep -q 'SOFT-15 *SOFT *yes *FREE *FREE' "$tmp/l"
# Each class has on CPU 0 as many rows as -L says (GETPMCINFO vs GETCPUINFO).
t_class_rows() {
	local cls n
	while read -r cls n; do
		[ "$(awk -v c="$cls" '/^CPU 0/{f=1;next} /^CPU/{f=0} f && $3 == c' "$tmp/l" | wc -l)" -eq "$n" ] ||
			{ echo "class $cls: not $n rows"; return 1; }
	done <<<"$(sed -n 's/^\([A-Z0-9]*\): \([0-9]*\) rows\{0,1\},.*/\1 \2/p' "$tmp/L")"
}
ok "-l shows on CPU 0 each class's rows as -L counts them" t_class_rows
ok "-l shows no SOFT or TSC row as unavailable" sh -c "! grep -E ' (SOFT|TSC) .*UNAVAILABLE' '$tmp/l'"

# A system PMC shows up with its owner, mode and state.
# (Until it shows: the stat may be slow to start, its binary read cold.)
sys_row() {
	"$ctl" -l >"$tmp/l2" 2>&1 &&
		grep -qE 'SOFT-[0-9]+ +SOFT +yes +STANDALONE +RUNNING +SC +[0-9]+ +SCHED\.SWITCH$' "$tmp/l2"
}
"$stat" -a -C 0 -e SCHED.SWITCH -- sh -c "echo \$\$ >'$tmp/cmd'; exec sleep 60" \
	>/dev/null 2>&1 &
spid=$!
ok "-l shows a running system PMC's state, mode, owner and event" wait_for sys_row
# The command's end ends the stat.
wait_for test -s "$tmp/cmd" && kill "$(cat "$tmp/cmd")"
wait $spid

ok "-d disables a row on one CPU" "$ctl" -c 0 -d 5
"$ctl" -l >"$tmp/l3" 2>&1
ok "-l shows it disabled on CPU 0 only" \
	sh -c "awk '/^CPU 0/{f=1;next} /^CPU/{f=0} f' '$tmp/l3' | grep -qE '^  5 +SOFT-4 +SOFT +NO +STANDALONE +DISABLED'"
if [ "$ncpu" -gt 1 ]; then
	# (The row's disposition, STANDALONE, is the row's on every CPU.)
	ok "-l shows it still enabled and free on CPU 1" \
		sh -c "awk '/^CPU 1/{f=1;next} /^CPU/{f=0} f' '$tmp/l3' | grep -qE '^  5 +SOFT-4 +SOFT +yes +STANDALONE +FREE '"
else
	skip "-d on CPU 0 leaves CPU 1 enabled" "one CPU"
fi
ok "-e enables it again" "$ctl" -c 0 -e 5
"$ctl" -l >"$tmp/l4" 2>&1
ok "-l shows it free again" grep -qE '^  5 +SOFT-4 +SOFT +yes +FREE +FREE' "$tmp/l4"

"$ctl" -s >"$tmp/s" 2>&1
ok "-s prints the driver statistics" grep -qE '^operations +[0-9,]+$' "$tmp/s"

setpriv --reuid=65534 --regid=65534 --clear-groups "$ctl" -d 3 >"$tmp/np" 2>&1
rc=$?
ok "unprivileged -d fails with status 1" test "$rc" -eq 1
ok "unprivileged -d says why" grep -q 'Operation not permitted' "$tmp/np"
ok "unprivileged -d says what is needed" grep -q 'CAP_SYS_ADMIN' "$tmp/np"

"$ctl" -d nonsense >"$tmp/bad" 2>&1
ok "a bad row is a usage error (status 2)" test $? -eq 2
ok "--help documents every option" sh -c "'$ctl' --help | grep -q -- '-L' && '$ctl' --help | grep -q -- '-c CPU'"
finish
