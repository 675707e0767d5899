#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# hwpmc-stat in the guest: counts that agree exactly with the kernel's own,
# the output formats, intervals, repeats, exit statuses, system-wide
# counting, and the error messages.
. "$(dirname "$0")/lib.sh"
eval "ksft_$(declare -f ok)"

STAT=$BIN/tools/hwpmc-stat
T=$(mktemp -d /tmp/stat_test.XXXXXX)
trap 'rm -rf "$T"' EXIT

need_tools "hwpmc-stat" "$STAT"

# A single-threaded program without children that reports its own context
# switches (/proc/self/status) at its very end: a busybox sh script run by
# a copy of the (static) busybox on tmpfs.  Nothing it does may block but
# its ten sleeps: its text and script are in memory, so its page faults do
# not wait for the host file system (9p), and it forks nothing.  From its
# final read of the status to its exit only a preemption could add a switch:
# it runs SCHED_FIFO (chrt), so that no ordinary task can preempt it.
# Optional: create OUT.ready and wait for a line on a FIFO (for -p PID).
# SLEEPS=N: sleep N times 10 ms instead of 10.
HELPER=()
if [ -x /bin/busybox ] && mkdir "$T/bb" && cp /bin/busybox "$T/bb/busybox"; then
	HELPER=("$T/bb/busybox" sh "$T/switches.sh")
	command -v chrt >/dev/null && HELPER=(chrt -f 10 "${HELPER[@]}")
	mkfifo "$T/sleep"
fi
cat >"$T/switches.sh" <<EOF
exec 9<>"$T/sleep"
if [ -n "\$2" ]; then
	: >"\$1.ready"
	read -r _ <"\$2"
fi
i=0
while [ \$i -lt \${SLEEPS:-10} ]; do
	read -t 0.01 -u 9 _
	i=\$((i + 1))
done
while read -r k v; do
	case \$k in
	voluntary_ctxt_switches:) a=\$v ;;
	nonvoluntary_ctxt_switches:) b=\$v ;;
	esac
done </proc/\$\$/status
echo "voluntary_ctxt_switches: \$a
nonvoluntary_ctxt_switches: \$b" >"\$1"
EOF

# voluntary + nonvoluntary context switches in a status file
switches() {
	awk '/ctxt_switches:/ { n += $2 } END { print n + 0 }' "$1"
}

# The state letter of /proc/PID/stat.
pstate() {
	sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1
}

log() { echo "# $*"; }

# STAT_ONLY="t_csv t_json" runs only those tests (for development).
ok() {
	if [ -n "${STAT_ONLY:-}" ] && ! grep -qw -- "$2" <<<"$STAT_ONLY"; then
		return 0
	fi
	ksft_ok "$@"
}

# --- help and usage -------------------------------------------------------

t_help() {
	local h
	h=$("$STAT" --help) || return 1
	for w in -e -p -t -s -a -C -A -d --no-inherit -I -w -r -x --json -o -l -v \
		"EXIT STATUS" "OUTPUT FORMATS" SCHED.SWITCH CLOCK.PROF unprivileged_syspmcs; do
		grep -q -e "$w" <<<"$h" || { log "--help lacks $w"; return 1; }
	done
}
ok "help: --help describes every option and the formats" t_help

t_usage() {
	local rc
	"$STAT" --bogus -- true 2>"$T/err"; rc=$?
	[ $rc -eq 2 ] && grep -q "unknown option --bogus" "$T/err" || { log "rc $rc"; cat "$T/err"; return 1; }
	"$STAT" -x, --json -- true 2>"$T/err"; rc=$?
	[ $rc -eq 2 ] || { log "-x with --json: rc $rc"; return 1; }
	"$STAT" -e SCHED.SWITCH 2>"$T/err"; rc=$?
	[ $rc -eq 2 ] && grep -q "nothing to count" "$T/err" || { log "no target: rc $rc"; return 1; }
	"$STAT" -r 0 -- true 2>"$T/err"; rc=$?
	[ $rc -eq 2 ] || { log "-r 0: rc $rc"; return 1; }
	"$STAT" -S CLOCK.PROF -- true 2>"$T/err"; rc=$?
	[ $rc -eq 2 ] && grep -q "sampling" "$T/err" || { log "-S: rc $rc"; cat "$T/err"; return 1; }
}
ok "usage errors exit 2 and say what is wrong" t_usage

# --- the default output ---------------------------------------------------

t_default() {
	local rc
	"$STAT" -- sh -c 'echo hello >/dev/null' 2>"$T/out"; rc=$?
	cat "$T/out"
	[ $rc -eq 0 ] || return 1
	for w in "Performance counter stats for 'sh -c echo hello >/dev/null'" \
		"msec CLOCK.PROF" "CPUs utilized" SCHED.SWITCH PAGE_FAULT.ALL "/sec" \
		"seconds time elapsed" "seconds user" "seconds sys"; do
		grep -q -F "$w" "$T/out" || { log "missing: $w"; return 1; }
	done
	# Thousands separators: a command with many system calls (page
	# fault counts depend on transparent huge pages).
	"$STAT" -e SYSCALL.ENTER -- dd if=/dev/zero of=/dev/null bs=1 count=5000 2>"$T/out" || return 1
	grep -Eq '^ +[0-9]{1,3}(,[0-9]{3})+ +SYSCALL.ENTER' "$T/out" || { cat "$T/out"; return 1; }
}
ok "default events: CLOCK.PROF as msec and CPUs utilized, rates, times" t_default

# --- exactness ------------------------------------------------------------

# hwpmc-stat -e SCHED.SWITCH -- CMD counts CMD's context switches from its
# exec on.  The kernel's count for the process also holds the switches it
# made before, waiting (forked, blocked on a pipe) to be let exec: -vv
# prints that number, read while the child still waits.  So
#   PMC + before == the program's own final count,
# exactly, or one more when the program was preempted after reading its
# own count, on its way out (that switch is the PMC's, not in the file).
t_switch_exact() {
	local i pmc before kernel bad=0
	for i in $(seq "${STAT_RUNS:-5}"); do
		"$STAT" -vv -e SCHED.SWITCH -x, -o "$T/csv" -- "${HELPER[@]}" "$T/k" \
			2>"$T/err" || { cat "$T/err"; return 1; }
		pmc=$(cut -d, -f1 "$T/csv")
		before=$(sed -n 's/.*waiting on its pipe, \([0-9]*\) context switches before counting.*/\1/p' "$T/err")
		kernel=$(switches "$T/k")
		log "run $i: hwpmc-stat $pmc, before exec $before, /proc/self/status at the end $kernel"
		[ -n "$before" ] && [ "$((pmc + before))" -ge "$kernel" ] &&
			[ "$((pmc + before))" -le "$((kernel + 1))" ] || bad=1
		[ "$kernel" -ge 10 ] || bad=1 # ten sleeps at least
	done
	return $bad
}
if [ ${#HELPER[@]} -gt 0 ]; then
	ok "-e SCHED.SWITCH -- CMD equals CMD's own /proc/self/status count" t_switch_exact
else
	skip "-e SCHED.SWITCH -- CMD is exact" "no /bin/busybox (busybox-static)"
fi

# The same for a running process: its count while it waits for us
# (blocked, so it cannot change), then the final count it reports.
t_pid_exact() {
	local hp sp base base2 final pmc rc
	rm -f "$T/k" "$T/k.ready" "$T/go"
	mkfifo "$T/go"
	"${HELPER[@]}" "$T/k" "$T/go" &
	hp=$!
	wait_for test -e "$T/k.ready" || return 1
	wait_for test "$(pstate $hp)" = S || return 1
	base=$(switches /proc/$hp/status)
	"$STAT" -v -e SCHED.SWITCH -x, -o "$T/csv" -p "$hp" 2>"$T/err" &
	sp=$!
	wait_for grep -q "counting" "$T/err" || { cat "$T/err"; return 1; }
	base2=$(switches /proc/$hp/status)
	echo go >"$T/go"
	wait $hp
	wait $sp; rc=$?
	[ $rc -eq 0 ] || { log "hwpmc-stat -p: rc $rc"; cat "$T/err"; return 1; }
	pmc=$(cut -d, -f1 "$T/csv")
	final=$(switches "$T/k")
	log "process $hp: $base2 switches when attached ($base before), $final at its end; hwpmc-stat -p: $pmc"
	[ "$base" -eq "$base2" ] && [ "$pmc" -eq "$((final - base2))" ] && [ "$pmc" -ge 10 ]
}
if [ ${#HELPER[@]} -gt 0 ]; then
	ok "-p PID counts exactly the process's switches until it exits" t_pid_exact
else
	skip "-p PID is exact" "no /bin/busybox (busybox-static)"
fi

# Descendants are counted unless --no-inherit: dd makes ~2 syscalls per
# block in a child of sh (sh -c '...; true' forks it), sh itself few.
t_inherit() {
	local with without
	"$STAT" -e SYSCALL.ENTER -x, -o "$T/a" -- sh -c 'dd if=/dev/zero of=/dev/null bs=1 count=20000 2>/dev/null; true' || return 1
	"$STAT" --no-inherit -e SYSCALL.ENTER -x, -o "$T/b" -- sh -c 'dd if=/dev/zero of=/dev/null bs=1 count=20000 2>/dev/null; true' || return 1
	with=$(cut -d, -f1 "$T/a")
	without=$(cut -d, -f1 "$T/b")
	log "syscalls with descendants $with, without $without"
	[ "$with" -ge 40000 ] && [ "$without" -lt 5000 ] || return 1
	"$STAT" -d -e SYSCALL.ENTER -x, -o "$T/b" -- sh -c 'dd if=/dev/zero of=/dev/null bs=1 count=20000 2>/dev/null; true' || return 1
	[ "$(cut -d, -f1 "$T/b")" -lt 5000 ]
}
ok "descendants are counted; --no-inherit and -d (pmcstat) turn that off" t_inherit

# --- formats --------------------------------------------------------------

t_csv() {
	"$STAT" -x, -e SCHED.SWITCH -e CLOCK.PROF -e PAGE_FAULT.ALL -- true 2>"$T/csv" || return 1
	cat "$T/csv"
	python3 - "$T/csv" , <<'EOF' || return 1
import csv, sys
rows = list(csv.reader(open(sys.argv[1]), delimiter=sys.argv[2]))
assert len(rows) == 3, rows
for r in rows:
    assert len(r) == 7, r
    value, unit, event, runtime, pcnt, mval, munit = r
    float(value); int(runtime); float(pcnt); float(mval)
    assert munit, r
    if event == "CLOCK.PROF":
        assert unit == "msec" and munit == "CPUs utilized", r
    else:
        assert unit == "" and int(value) >= 0 and munit.endswith("/sec"), r
assert [r[2] for r in rows] == ["SCHED.SWITCH", "CLOCK.PROF", "PAGE_FAULT.ALL"], rows
EOF
	# Another separator, and a field that holds it is quoted.
	"$STAT" -x ';' -e 'SCHED.SWITCH' -- true 2>"$T/csv" || return 1
	[ "$(awk -F';' '{ print NF }' "$T/csv")" = 7 ] || { cat "$T/csv"; return 1; }
	"$STAT" -x . -e SCHED.SWITCH -- true 2>"$T/csv" || return 1
	grep -q '^[0-9]*\.\."SCHED\.SWITCH"\.' "$T/csv" || { cat "$T/csv"; return 1; }
}
ok "-x , CSV: 7 fields, numeric values, msec for CLOCK.PROF; -x ';'" t_csv

t_json() {
	local rc
	"$STAT" --json -e SCHED.SWITCH -e task-clock -- sh -c 'exit 3' 2>"$T/json"; rc=$?
	cat "$T/json"
	[ $rc -eq 3 ] || return 1
	python3 - "$T/json" <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) == 3, lines
for o in lines[:2]:
    for k in ("counter-value", "unit", "event", "scope", "count", "event-runtime",
              "pcnt-running", "metric-value", "metric-unit"):
        assert k in o, (k, o)
    assert o["scope"] == "process" and isinstance(o["count"], int)
assert lines[0]["event"] == "SCHED.SWITCH" and lines[0]["metric-unit"].endswith("/sec")
assert lines[1]["event"] == "task-clock" and lines[1]["unit"] == "msec"
assert abs(lines[1]["counter-value"] * 1e6 - lines[1]["count"]) < 1
s = lines[2]
assert s["exit-status"] == 3 and s["runs"] == 1, s
assert s["time-elapsed"] > 0 and "user-time" in s and "system-time" in s
EOF
}
ok "--json: one object per line, counters then a summary" t_json

t_interval() {
	local i pmc before kernel sum n
	"$STAT" -I 100 -e SCHED.SWITCH -e CLOCK.PROF -- sleep 1 2>"$T/human" || return 1
	cat "$T/human"
	grep -q "^# *time *counts unit events" "$T/human" || return 1
	n=$(grep -c "SCHED.SWITCH" "$T/human")
	[ "$n" -ge 4 ] || { log "$n SCHED.SWITCH rows"; return 1; }
	# The deltas add up to the exact total.
	[ ${#HELPER[@]} -gt 0 ] || return 0
	SLEEPS=80 "$STAT" -vv -I 100 -x, -e SCHED.SWITCH -o "$T/csv" -- "${HELPER[@]}" "$T/k" \
		2>"$T/err" || return 1
	cat "$T/csv"
	n=$(wc -l <"$T/csv")
	sum=$(awk -F, '{ s += $2 } END { print s }' "$T/csv")
	before=$(sed -n 's/.*waiting on its pipe, \([0-9]*\) context switches before counting.*/\1/p' "$T/err")
	kernel=$(switches "$T/k")
	log "$n rows adding to $sum; $before before exec; the process's own count $kernel"
	[ "$n" -ge 4 ] && [ "$((sum + before))" -eq "$kernel" ] || return 1
	awk -F, 'NR > 1 && $1 <= t { exit 1 } { t = $1; if (NF != 8) exit 1 }' "$T/csv" || return 1
	"$STAT" -w 0.1 --json -e SCHED.SWITCH -- sleep 0.5 2>"$T/json" || return 1
	python3 - "$T/json" <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
ts = [o["interval"] for o in lines if "interval" in o]
assert len(ts) >= 3 and ts == sorted(ts), ts
assert "time-elapsed" in lines[-1]
EOF
}
ok "-I 100 (and -w 0.1) print periodic rows whose deltas add up" t_interval

t_repeat() {
	"$STAT" -r 3 -e SCHED.SWITCH -e CLOCK.PROF -- sleep 0.05 2>"$T/out" || return 1
	cat "$T/out"
	grep -q "(3 runs)" "$T/out" && grep -Eq "SCHED.SWITCH .*\( \+- +[0-9]+\.[0-9]{2}% \)" "$T/out" &&
		grep -Eq "seconds time elapsed +\( \+- +[0-9.]+% \)" "$T/out" || return 1
	"$STAT" -r 3 -x, -e SCHED.SWITCH -- sleep 0.05 2>"$T/csv" || return 1
	cat "$T/csv"
	awk -F, 'NF != 8 || $4 !~ /^[0-9]+\.[0-9][0-9]%$/ { exit 1 }' "$T/csv"
}
ok "-r 3 prints means with +- stddev percentages" t_repeat

t_exit_status() {
	local rc sp
	"$STAT" -e SCHED.SWITCH -- sh -c 'exit 7' 2>/dev/null; rc=$?
	[ $rc -eq 7 ] || { log "exit 7: $rc"; return 1; }
	"$STAT" -e SCHED.SWITCH -- sh -c 'kill -TERM $$' 2>"$T/out"; rc=$?
	[ $rc -eq 143 ] || { log "SIGTERM: $rc"; return 1; }
	grep -q SCHED.SWITCH "$T/out" || return 1 # counts printed anyway
	"$STAT" -- /nonexistent/command 2>"$T/out"; rc=$?
	[ $rc -eq 127 ] && grep -q "cannot run '/nonexistent/command': No such file" "$T/out" ||
		{ log "missing command: $rc"; cat "$T/out"; return 1; }
	"$STAT" -- /dev/null 2>/dev/null; rc=$?
	[ $rc -eq 126 ] || { log "not executable: $rc"; return 1; }
	# kill -INT of the tool reaches the command; the counts are printed.
	"$STAT" -v -e SCHED.SWITCH -- sleep 60 2>"$T/out" &
	sp=$!
	wait_for grep -q counting "$T/out" || { kill -KILL $sp; return 1; }
	kill -INT $sp
	wait $sp; rc=$?
	[ $rc -eq 130 ] && grep -q "seconds time elapsed" "$T/out" || { log "SIGINT: $rc"; cat "$T/out"; return 1; }
}
ok "exit status is the command's (7, 128+15, 127, 126, SIGINT forwarded: 130)" t_exit_status

t_output_file() {
	"$STAT" -e SCHED.SWITCH -o "$T/o" -- true 2>"$T/err" || return 1
	[ ! -s "$T/err" ] && grep -q SCHED.SWITCH "$T/o" || return 1
	"$STAT" -e SCHED.SWITCH -x, -o "$T/o" --append -- true 2>/dev/null || return 1
	[ "$(grep -c SCHED.SWITCH "$T/o")" -eq 2 ]
}
ok "-o FILE (and --append)" t_output_file

# Commas separate events, except before a qualifier (SOFT events take none).
t_event_list() {
	local rc
	"$STAT" -x, -e SCHED.SWITCH,CLOCK.PROF,PAGE_FAULT.ALL -- true 2>"$T/csv" || return 1
	[ "$(cut -d, -f3 "$T/csv" | paste -sd' ')" = "SCHED.SWITCH CLOCK.PROF PAGE_FAULT.ALL" ] ||
		{ cat "$T/csv"; return 1; }
	"$STAT" -e SCHED.SWITCH,usr -- true 2>"$T/err"; rc=$?
	cat "$T/err"
	[ $rc -eq 1 ] && grep -q "takes no qualifiers" "$T/err"
}
ok "-e A,B,C is three events; -e A,usr is one with a qualifier" t_event_list

# -l SECS (pmcstat) / --timeout MS: stop by itself; a command gets SIGTERM.
t_timeout() {
	local rc start
	start=$(date +%s)
	"$STAT" -l 0.5 -a -x, -e SCHED.SWITCH 2>"$T/csv"; rc=$?
	[ $rc -eq 0 ] && grep -q ',SCHED.SWITCH,' "$T/csv" || { log "-l -a: rc $rc"; return 1; }
	"$STAT" --timeout 300 -x, -e SCHED.SWITCH -- sleep 100 2>"$T/csv"; rc=$?
	[ $rc -eq 143 ] && grep -q ',SCHED.SWITCH,' "$T/csv" || { log "--timeout: rc $rc"; return 1; }
	[ $(($(date +%s) - start)) -lt 60 ]
}
ok "-l SECS and --timeout MS stop counting (SIGTERM to a command)" t_timeout

# --- system-wide ------------------------------------------------------------

t_system() {
	local ncpu n
	ncpu=$(grep -c ^processor /proc/cpuinfo)
	"$STAT" -a -e SCHED.SWITCH -e CLOCK.PROF -- sleep 0.3 2>"$T/out" || return 1
	cat "$T/out"
	grep -q "for 'system wide'" "$T/out" || return 1
	"$STAT" -a -x, -e SCHED.SWITCH -e tsc -- sleep 0.3 2>"$T/csv" || return 1
	cat "$T/csv"
	awk -F, '$3 == "SCHED.SWITCH" && $1 > 0 { s = 1 } $3 == "tsc" && $1 > 1000000 { t = 1 }
		END { exit !(s && t) }' "$T/csv" || return 1
	"$STAT" -a -A -x, -e SCHED.SWITCH -- sleep 0.2 2>"$T/csv" || return 1
	n=$(grep -c '^CPU[0-9]*,[0-9]*,,SCHED.SWITCH' "$T/csv")
	[ "$n" -eq "$ncpu" ] || { log "-A: $n rows for $ncpu CPUs"; cat "$T/csv"; return 1; }
	"$STAT" -C 0 -A -e SCHED.SWITCH -- sleep 0.1 2>"$T/out" || return 1
	grep -q "for 'CPU(s) 0'" "$T/out" && [ "$(grep -c '^CPU' "$T/out")" -eq 1 ] || { cat "$T/out"; return 1; }
	"$STAT" -C 4095 -e SCHED.SWITCH -- true 2>"$T/out"
	[ $? -eq 1 ] && grep -q "no CPU 4095" "$T/out" || { cat "$T/out"; return 1; }
}
ok "-a system-wide (root): totals, -A per CPU, -C CPU lists, tsc" t_system

# Without a command, -a counts until SIGINT.
t_system_sigint() {
	local sp rc
	"$STAT" -v -a -x, -e SCHED.SWITCH -o "$T/csv" 2>"$T/err" &
	sp=$!
	# Once it counts (a background job starts with SIGINT ignored, until
	# the tool's handler is in place).
	wait_for grep -q counting "$T/err" || { kill -KILL $sp; return 1; }
	sleep 0.5
	kill -INT $sp
	wait_for sh -c "! kill -0 $sp 2>/dev/null" || { log "still running"; kill -KILL $sp; }
	wait $sp; rc=$?
	[ $rc -eq 0 ] && grep -q '^[0-9]*,,SCHED.SWITCH' "$T/csv" || { log "rc $rc"; cat "$T/err" "$T/csv"; return 1; }
}
ok "-a without a command counts until SIGINT" t_system_sigint

# pmcstat's flags: -p SPEC (process) and -s SPEC (system) together, -t PID.
t_pmcstat() {
	local hp
	"$STAT" -p SCHED.SWITCH -s SCHED.SWITCH -x, -- sleep 0.1 2>"$T/csv" || return 1
	cat "$T/csv"
	grep -q ',p/SCHED.SWITCH,' "$T/csv" && grep -q ',s/SCHED.SWITCH,' "$T/csv" || return 1
	sh -c 'while :; do :; done' &
	hp=$!
	"$STAT" -p CLOCK.PROF -t $hp -x, -l 0.5 2>"$T/csv"
	kill $hp
	wait $hp
	cat "$T/csv"
	grep -q ',msec,CLOCK.PROF,' "$T/csv" && awk -F, '$1 > 100 { ok = 1 } END { exit !ok }' "$T/csv"
}
ok "pmcstat style: -p SPEC, -s SPEC, -t PID" t_pmcstat

# Unprivileged users need kernel.hwpmc.unprivileged_syspmcs=1 for -a.
t_unprivileged() {
	local mode old rc
	mode=$(stat -c %a /dev/hwpmc)
	old=$(cat /proc/sys/kernel/hwpmc/unprivileged_syspmcs)
	chmod 666 /dev/hwpmc
	echo 0 >/proc/sys/kernel/hwpmc/unprivileged_syspmcs
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$STAT" -a -e SCHED.SWITCH -- true 2>"$T/err"; rc=$?
	cat "$T/err"
	if [ $rc -ne 1 ] || ! grep -q "Operation not permitted" "$T/err" ||
		! grep -q "kernel.hwpmc.unprivileged_syspmcs" "$T/err"; then
		rc=99
	else
		echo 1 >/proc/sys/kernel/hwpmc/unprivileged_syspmcs
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
			"$STAT" -a -e SCHED.SWITCH -x, -- true 2>"$T/csv"; rc=$?
		grep -q ',SCHED.SWITCH,' "$T/csv" || rc=98
	fi
	echo "$old" >/proc/sys/kernel/hwpmc/unprivileged_syspmcs
	chmod "$mode" /dev/hwpmc
	[ $rc -eq 0 ]
}
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null &&
	[ -w /proc/sys/kernel/hwpmc/unprivileged_syspmcs ]; then
	ok "-a as a user: EPERM names the sysctl; allowed with unprivileged_syspmcs=1" t_unprivileged
else
	skip "-a as a user" "needs root, setpriv and kernel.hwpmc.unprivileged_syspmcs"
fi

# --- hardware events, on the test flavor's PMU model ------------------------

# The model's counters move only when someone writes "usr N" / "os N" to
# its debugfs file: every counter enabled on the writing CPU advances.  So a
# command that writes there knows exactly what its PMCs must read.
MODEL=/sys/kernel/debug/hwpmc-model/advance
RELEASE_KO=$TOP/build/$(uname -r)/hwpmc.ko
TEST_KO=$TOP/build/$(uname -r)/test/hwpmc.ko


t_hw_model() {
	local rc=0
	swap_module "$TEST_KO" pmu_model=intel || { swap_module "$RELEASE_KO"; return 1; }
	[ -w "$MODEL" ] || rc=1
	# The default set now has cycles and instructions.
	[ $rc -eq 0 ] && { "$STAT" -x, -- true 2>"$T/csv" || rc=1; }
	cat "$T/csv"
	[ $rc -eq 0 ] && [ "$(cut -d, -f3 "$T/csv" | paste -sd' ')" = \
		"CLOCK.PROF SCHED.SWITCH PAGE_FAULT.ALL cycles instructions" ] || rc=1
	# Exact counts, IPC and GHz: instructions (user) 1000, cycles 2000.
	if [ $rc -eq 0 ]; then
		"$STAT" -x, -e instructions,usr -e cycles -e CLOCK.PROF -- \
			sh -c "printf 'usr 1000' >$MODEL; printf 'os 1000' >$MODEL" 2>"$T/csv" || rc=1
		cat "$T/csv"
		python3 - "$T/csv" <<'EOF' || rc=1
import csv, sys
rows = {r[2]: r for r in csv.reader(open(sys.argv[1]))}
ins, cyc, prof = rows["instructions,usr"], rows["cycles"], rows["CLOCK.PROF"]
assert ins[0] == "1000" and cyc[0] == "2000", rows
assert ins[6] == "insn per cycle" and float(ins[5]) == 0.5, ins
assert cyc[6] == "GHz" and abs(float(cyc[5]) - 2000 / (float(prof[0]) * 1e6)) < 1e-3, cyc
EOF
		"$STAT" -e instructions -e cycles -- sh -c "printf 'usr 3000' >$MODEL" 2>"$T/out" || rc=1
		cat "$T/out"
		grep -Eq '^ +3,000 +instructions +# +1\.00 insn per cycle' "$T/out" || rc=1
	fi
	# System scope on one CPU: what a writer pinned there adds.
	if [ $rc -eq 0 ]; then
		"$STAT" -C 0 -x, -e instructions -- taskset -c 0 sh -c "printf 'usr 500' >$MODEL" \
			2>"$T/csv" || rc=1
		cat "$T/csv"
		[ "$(cut -d, -f1,3 "$T/csv")" = "500,instructions" ] || rc=1
	fi
	swap_module "$RELEASE_KO" || { log "could not load $RELEASE_KO again"; rc=1; }
	return $rc
}
if [ "$(id -u)" -eq 0 ] && [ -f "$TEST_KO" ] && [ -f "$RELEASE_KO" ] &&
	! "$BIN/tools/hwpmc-control" -L 2>/dev/null | grep -qE '^(IAP|IAF|K8):' &&
	modinfo -F parm "$TEST_KO" 2>/dev/null | grep -q pmu_model; then
	ok "hardware events on the PMU model: default set, exact counts, IPC, GHz, -C" t_hw_model
else
	skip "hardware events on the PMU model" "needs root, no real PMU, and $TEST_KO with pmu_model"
fi

# --- errors ---------------------------------------------------------------

t_bad_event() {
	local rc
	"$STAT" -e SCHED.SWTICH -- true 2>"$T/err"; rc=$?
	cat "$T/err"
	[ $rc -eq 1 ] && grep -q "SCHED.SWTICH" "$T/err" && grep -q "SCHED.SWITCH" "$T/err" || return 1
	"$STAT" -e tsc -- true 2>"$T/err"; rc=$?
	cat "$T/err"
	[ $rc -eq 1 ] && grep -q "only system-wide" "$T/err"
}
ok "a bad event names the token (and the nearest names), exit 1" t_bad_event

t_no_pmu() {
	local rc
	"$STAT" -e instructions -- true 2>"$T/err"; rc=$?
	cat "$T/err"
	[ $rc -eq 1 ] && grep -q "instructions" "$T/err" && grep -q "PMU" "$T/err"
}
if "$BIN/tools/hwpmc-control" -L 2>/dev/null | grep -qE '^(IAP|IAF|K8):'; then
	skip "an explicit hardware event without a PMU is an error" "this machine has a PMU"
else
	ok "an explicit hardware event without a PMU is an error" t_no_pmu
fi

t_no_pid() {
	local rc pid=$(($(cat /proc/sys/kernel/pid_max) - 1))
	kill -0 $pid 2>/dev/null && return 0
	"$STAT" -e SCHED.SWITCH -p $pid 2>"$T/err"; rc=$?
	cat "$T/err"
	[ $rc -eq 1 ] && grep -q "process $pid: No such process" "$T/err"
}
ok "-p of a nonexistent pid: ESRCH message, exit 1" t_no_pid

finish
