#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# pmcstat (FreeBSD's pmcstat(8) options) in the guest: counting (-p, -s)
# with the counts hwpmc-stat gives, sampling into a log (-P, -S, -O), the
# log read back (-R, -G, -F, -g: gprof files GNU gprof reads), -P with -S
# and counting with sampling in one run, as root and as uid 65534; usage
# errors.
. "$(dirname "$0")/lib.sh"

TOOLS=$BIN/tools
PMCSTAT=$TOOLS/pmcstat
HOT=$TOOLS/hwpmc-record-hotpath
T=$(mktemp -d /tmp/pmcstat_test.XXXXXX)
chmod 0777 "$T"
trap 'rm -rf "$T"' EXIT

need_tools "pmcstat" "$PMCSTAT" "$HOT"

show() { head -n "${2:-30}" "$1" | sed 's/^/#   /'; }
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"; }
# The count of EVENT in a hwpmc-stat/pmcstat output file.
count_of() {
	grep -E "[[:space:]](p/|s/)?(SOFT-)?$2([[:space:]]|$)" "$1" | awk '{print $1}' | head -n1 | tr -d ,
}

# --- counting: -p SPEC of a command ---------------------------------------
# A command that makes a known number of system calls: the hot-path program
# burns CPU; SYSCALL.ENTER of /bin/true is small but never 0 (execve's
# return path, exit_group).
"$PMCSTAT" -p SOFT-SYSCALL.ENTER -p SOFT-PAGE_FAULT.ALL -o "$T/p.out" -- /bin/true 2>"$T/p.err"
rc=$?
show "$T/p.out"
ok "-p: exit status 0" test "$rc" -eq 0
n=$(count_of "$T/p.out" 'SYSCALL.ENTER')
ok "-p SOFT-SYSCALL.ENTER counted /bin/true's system calls (${n:-none})" test "${n:-0}" -gt 0
n=$(count_of "$T/p.out" 'PAGE_FAULT.ALL')
ok "-p SOFT-PAGE_FAULT.ALL counted its page faults (${n:-none})" test "${n:-0}" -gt 0
# The command's exit status is pmcstat's, as hwpmc-stat's.
"$PMCSTAT" -p SOFT-SCHED.SWITCH -o /dev/null -- sh -c 'exit 7' 2>/dev/null
ok "-p: the command's exit status (7)" test $? -eq 7

# -s TSC: system scope, with -l (FreeBSD: overhead.c's event).
"$PMCSTAT" -s TSC -l 0.2 -o "$T/s.out" 2>"$T/s.err"
rc=$?
show "$T/s.out"
n=$(count_of "$T/s.out" 'TSC')
ok "-s TSC -l 0.2: the TSC advanced (${n:-none})" test "$rc" -eq 0 -a "${n:-0}" -gt 0

if command -v setpriv >/dev/null; then
	nobody "$PMCSTAT" -p SOFT-SYSCALL.ENTER -o "$T/n.out" -- /bin/true 2>"$T/n.err"
	rc=$?
	n=$(count_of "$T/n.out" 'SYSCALL.ENTER')
	ok "uid 65534: -p counts its own command (${n:-none})" test "$rc" -eq 0 -a "${n:-0}" -gt 0
	nobody "$PMCSTAT" -s TSC -l 0.1 -o "$T/ns.out" 2>"$T/ns.err"
	rc=$?
	show "$T/ns.err" 5
	ok "uid 65534: -s is refused (no unprivileged system PMCs), exit 1" test "$rc" -eq 1
else
	skip "uid 65534 runs" "no setpriv"
fi

# --- sampling into a log, then the log read back ------------------------
cd "$T" || exit 1
"$PMCSTAT" -n 1000000 -P SOFT-CLOCK.PROF -O "$T/hot.log" -- "$HOT" 0.3 0 >"$T/P.out" 2>&1
rc=$?
show "$T/P.out" 5
ok "-P SOFT-CLOCK.PROF -O: recorded (exit 0)" test "$rc" -eq 0 -a -s "$T/hot.log"
"$PMCSTAT" -R "$T/hot.log" >"$T/R.out" 2>&1
ok "-R alone: the log's records, CALLCHAIN among them" grep -q CALLCHAIN "$T/R.out"
"$PMCSTAT" -R "$T/hot.log" -G "$T/graph.txt" 2>/dev/null
ok "-R -G FILE: a call graph naming the hot function" grep -q hot "$T/graph.txt"
"$PMCSTAT" -R "$T/hot.log" -F "$T/stacks.folded" 2>/dev/null
ok "-R -F FILE: folded stacks ending in hot" grep -q 'hot [0-9]*$' "$T/stacks.folded"
# -g: gprof(1) files, read by GNU gprof: the flat profile's first row
# (the most time) is hot(), which spins ~90% of the command's CPU time.
gprof_top() { # GMON -> "NAME PERCENT" of gprof's first row
	gprof -b -p "$HOT" "$1" 2>&1 | awk '$1 ~ /^[0-9.]+$/ && NF >= 4 { print $NF, $1; exit }'
}
"$PMCSTAT" -R "$T/hot.log" -g -D "$T/gprof" 2>"$T/g.err"
rc=$?
show "$T/g.err" 5
g="$T/gprof/SOFT-CLOCK.PROF/hwpmc-record-hotpath.gmon"
ok "-R -g -D DIR: exit 0 and DIR/SOFT-CLOCK.PROF/hwpmc-record-hotpath.gmon" \
	test "$rc" -eq 0 -a -s "$g"
if command -v gprof >/dev/null; then
	set -- $(gprof_top "$g")
	ok "GNU gprof reads it: the first row is hot (${1:-none}, ${2:-0}% of the time)" \
		test "${1:-}" = hot -a "${2%%.*}" -ge 50
else
	skip "GNU gprof reads the -g file" "no gprof (binutils)"
fi
if command -v setpriv >/dev/null; then
	nobody "$PMCSTAT" -P SOFT-CLOCK.PROF -O "$T/nhot.log" -- "$HOT" 0.2 0 >"$T/nP.out" 2>&1
	rc=$?
	show "$T/nP.out" 5
	ok "uid 65534: -P -O samples its own command" test "$rc" -eq 0 -a -s "$T/nhot.log"
	nd=$(nobody mktemp -d)
	nobody "$PMCSTAT" -R "$T/nhot.log" -g -D "$nd" 2>/dev/null
	rc=$?
	ok "uid 65534: -R -g writes its gprof file" \
		test "$rc" -eq 0 -a -s "$nd/SOFT-CLOCK.PROF/hwpmc-record-hotpath.gmon"
	rm -rf "$nd"
fi
"$PMCSTAT" -S SOFT-CLOCK.PROF -O "$T/sys.log" -l 0.3 >"$T/S.out" 2>&1
rc=$?
show "$T/S.out" 5
ok "-S SOFT-CLOCK.PROF -O -l: system sampling recorded" test "$rc" -eq 0 -a -s "$T/sys.log"

# --- -P with -S, and counting with sampling, in one run ------------------
ncpu=$(getconf _NPROCESSORS_ONLN)
"$PMCSTAT" -P SOFT-CLOCK.PROF -S SOFT-CLOCK.PROF -O "$T/ps.log" -- "$HOT" 0.3 0 \
	>"$T/PS.out" 2>&1
rc=$?
show "$T/PS.out" 5
"$TOOLS/hwpmc-report" -i "$T/ps.log" --dump >"$T/ps.dump" 2>/dev/null
nts=$(grep -c 'PMCALLOCATE.*mode=TS' "$T/ps.dump")
nss=$(grep -c 'PMCALLOCATE.*mode=SS' "$T/ps.dump")
ok "-P and -S in one run: one log with 1 TS and $ncpu SS PMCs (got $nts, $nss)" \
	test "$rc" -eq 0 -a "$nts" -eq 1 -a "$nss" -eq "$ncpu"
"$PMCSTAT" -R "$T/ps.log" -G "$T/ps.graph" 2>/dev/null
ok "-P and -S: the log's samples name hot" grep -q hot "$T/ps.graph"
if command -v setpriv >/dev/null; then
	nobody "$PMCSTAT" -P SOFT-CLOCK.PROF -S SOFT-CLOCK.PROF -O "$T/nps.log" -- /bin/true \
		>"$T/nPS.out" 2>&1
	rc=$?
	show "$T/nPS.out" 3
	ok "uid 65534: -P with -S is refused for the system part (exit 1)" test "$rc" -eq 1
fi

# Counting with sampling: hwpmc-record counts -p's events on the command it
# samples and prints them at the end as hwpmc-stat does.
mix() { # [nobody] -> exit status; counts in $T/mix.out, log $T/mix.log
	"$@" "$PMCSTAT" -p SOFT-SYSCALL.ENTER -P SOFT-CLOCK.PROF -O "$T/mix.log" \
		-o "$T/mix.out" -- "$HOT" 0.3 0 >"$T/mix.err" 2>&1
}
for who in root nobody; do
	[ "$who" = nobody ] && ! command -v setpriv >/dev/null && continue
	rm -f "$T/mix.out" "$T/mix.log"
	if [ "$who" = root ]; then mix; else mix nobody; fi
	rc=$?
	show "$T/mix.err" 4
	n=$(count_of "$T/mix.out" 'SYSCALL.ENTER')
	ok "$who: -p with -P: exit 0, SYSCALL.ENTER counted (${n:-none})" \
		test "$rc" -eq 0 -a "${n:-0}" -gt 0
	"$PMCSTAT" -R "$T/mix.log" -F "$T/mix.folded" 2>/dev/null
	hot=$(awk '/hot [0-9]+$/ { n += $NF } END { print n + 0 }' "$T/mix.folded")
	all=$(awk '{ n += $NF } END { print n + 0 }' "$T/mix.folded")
	min=$(hot_share_min)
	ok "$who: -p with -P: the samples fall in hot ($hot of $all, over $min%)" \
		test "$all" -gt 0 -a $((hot * 100)) -gt $((all * min))
	"$PMCSTAT" -R "$T/mix.log" >"$T/mix.dump" 2>/dev/null
	ok "$who: -p with -P: the log names the sampler (TS) and the counter (TC)" \
		test "$(grep -c 'PMCALLOCATE.*mode=TS' "$T/mix.dump")" -eq 1 -a \
		"$(grep -c 'PMCALLOCATE.*mode=TC' "$T/mix.dump")" -eq 1
done

# --- usage errors: exit 2 -----------------------------------------------
"$PMCSTAT" >/dev/null 2>&1
ok "no events: usage error (2)" test $? -eq 2
"$PMCSTAT" -P cycles >/dev/null 2>"$T/u.err"
ok "-P without -O or -T: usage error naming -O" test $? -eq 2 && grep -q -- -O "$T/u.err"
"$PMCSTAT" -y >/dev/null 2>&1
ok "unknown option: usage error (2)" test $? -eq 2
finish
