#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# hwpmc-record and hwpmc-report in the guest, on a program with a known hot
# path (tools/hwpmc-record-hotpath: main -> outer -> middle -> hot, ~90% of
# its CPU time, and hotpath::warm(int), ~10%; frame pointers): the flat
# profile puts hot first, the call graph and the folded stacks show the
# path, the flame graph is valid SVG, --dump lists every record from
# INITIALIZE to CLOSELOG; descendants, -p PID, system-wide sampling,
# filters, kernel symbols, exit statuses, errors and damaged logs.
# HWPMC_TOOLS=DIR runs the tools of another build.
. "$(dirname "$0")/lib.sh"

TOOLS=${HWPMC_TOOLS:-$BIN/tools}
RECORD=$TOOLS/hwpmc-record
REPORT=$TOOLS/hwpmc-report
TOP=$TOOLS/hwpmc-top
HOT=$TOOLS/hwpmc-record-hotpath
T=$(mktemp -d /tmp/record_test.XXXXXX)
trap 'rm -rf "$T"' EXIT

need_tools "hwpmc-record" "$RECORD" "$REPORT" "$TOP" "$HOT"

# The entries of a flat profile: "Children Self Samples Command Dso [x] sym..."
entries() { grep -v '^#' "$1" | grep -E '^ +[0-9.]+% +[0-9.]+%'; }

# --- --call-graph dwarf,SIZE: USERSTACK records beside the callchains ---
cd "$T" || exit 1
"$RECORD" --call-graph dwarf,2048 -o dwarf.data -- "$HOT" 0.3 0 >dwarf.out 2>&1
rc=$?
show dwarf.out
ok "record --call-graph dwarf: exit status 0" test "$rc" -eq 0
ok "record --call-graph dwarf: the summary says user stacks" \
	grep -q 'with callchains and user stacks' dwarf.out
"$REPORT" -i dwarf.data --dump >dwarf.dump 2>&1
ncc=$(grep -c ' CALLCHAIN ' dwarf.dump)
nus=$(grep -c ' USERSTACK .*size=2048 ' dwarf.dump)
nregs=$(grep -c ' USERSTACK .* rip=0x' dwarf.dump)
log "dwarf: $ncc CALLCHAIN, $nus USERSTACK of 2048 bytes, $nregs with registers"
ok "record --call-graph dwarf: samples" test "${ncc:-0}" -gt 0
ok "record --call-graph dwarf: a USERSTACK of 2048 bytes per CALLCHAIN" \
	test "${nus:-0}" -eq "${ncc:-1}"
# Every sample with a user PC has the user registers; the others (the
# task's exit, after its memory is gone: 32 of 386 once on a loaded 6.12)
# have none to give.
set -- $(awk '/ CALLCHAIN / { nk = np = 0
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^nkernel=/) nk = substr($i, 9) + 0
			if ($i ~ /^npc=/) np = substr($i, 5) + 0
		}
		user = np > nk }
	/ USERSTACK / { if (user) { n++; if ($0 !~ / rip=/) bad++ } }
	END { print n + 0, bad + 0 }' dwarf.dump)
ok "record --call-graph dwarf: registers in every sample with a user PC ($1, $2 without)" \
	test "${1:-0}" -gt 0 -a "${2:-1}" -eq 0
"$REPORT" -i dwarf.data >dwarf.flat 2>&1
ok "report reads a dwarf log: hot is first" \
	test "$(entries dwarf.flat | head -n 1 | awk '{ print $NF }')" = hot
"$RECORD" --call-graph dwarf,70000 -o bad.data -- true >bad.out 2>&1
ok "record --call-graph dwarf,70000: a usage error (2)" test "$?" -eq 2

# --- the main recording: -g, exit status 3 ------------------------------
cd "$T" || exit 1
"$RECORD" -g -o hot.data -- "$HOT" 0.5 3 >record.out 2>&1
rc=$?
show record.out
ok "record: the command's exit status (3) is hwpmc-record's" test "$rc" -eq 3
ok "record: summary with samples, drops and the file" \
	grep -qE '^hwpmc-record: [0-9,]+ samples of SOFT-CLOCK.PROF .*, 0 dropped' record.out
ok "record: the log file exists" test -s hot.data

"$REPORT" -i hot.data >flat.out 2>flat.err
rc=$?
show flat.out 16
first_sym() { entries "$1" | head -n 1 | awk '{ print $NF }'; }
ok "report: exit status 0" test "$rc" -eq 0
ok "report: hot is first in the flat profile" test "$(first_sym flat.out)" = hot
hot_line=$(entries flat.out | awk '$NF == "hot"' | head -n 1)
hot_self=$(echo "$hot_line" | awk '{ sub("%", "", $2); print int($2) }')
# An emulated CPU on a loaded host spends more of its time in interrupts,
# so "most" is a third here; that hot comes first is checked above.
ok "report: hot has the largest share (self ${hot_self:-?}% >= 33%)" \
	test "${hot_self:-0}" -ge 33
ok "report: hot is [.] user code of hwpmc-record-hotpath" \
	grep -qE 'hwpmc-record-hotpath +hwpmc-record-hotpath +\[\.\] hot$' flat.out
ok "report: C++ names demangled (hotpath::warm(int))" grep -qF '[.] hotpath::warm(int)' flat.out

# Samples match duration x rate: 0.5 s of CPU time at 1 kHz, plus the
# start-up and exit of the program (well under 0.3 s even under TCG).
n=$(sed -n 's/^hwpmc-record: \([0-9,]*\) samples of.*/\1/p' record.out | tr -d ,)
log "samples: ${n:-?} for 0.5 s of CPU time at 1000 Hz"
# Emulated CPUs on a loaded host stretch the CPU time the kernel sees.
ok "record: sample count matches 0.5 s x 1 kHz (400..1300)" \
	test "${n:-0}" -ge 400 -a "${n:-0}" -le 1300
hn=$(sed -n 's/^# hwpmc-report of hot.data: [0-9,]* records, \([0-9,]*\) samples.*/\1/p' flat.out | tr -d ,)
ok "report: its header counts the same samples (${hn:-?})" test "${hn:-x}" = "${n:-y}"

# --- call graph ------------------------------------------------------------
"$REPORT" -i hot.data -g >graph.out 2>&1
show graph.out 24
# The chain under hot's entry, one frame per line: hot, middle, outer, main.
chain_of_hot() {
	awk '/\[\.\] hot$/ { on = 1; next }
	     on && /^ +[0-9.]+% +[0-9.]+%/ { exit }
	     on { sub(/^[ |]*(---|--[0-9.]+%--)?/, ""); if ($0 != "") print }' graph.out |
		head -n 4 | tr '\n' ';'
}
log "callers of hot: $(chain_of_hot)"
ok "report -g: hot's callers are middle, outer, main" test "$(chain_of_hot)" = "hot;middle;outer;main;"

"$REPORT" -i hot.data --call-graph=callee --children >callee.out 2>&1
ok "report --call-graph=callee: main calls outer, which calls middle, then hot" \
	awk '/\[\.\] main$/ { on = 1 } on && /outer/ { o = 1 } on && o && /middle/ { m = 1 }
	     on && m && /hot/ { found = 1; exit } END { exit !found }' callee.out

# --- folded stacks ----------------------------------------------------------
"$REPORT" -i hot.data --folded >folded.out 2>folded.err
show folded.out 6
ok "report --folded: main;outer;middle;hot" grep -qE ';main;outer;middle;hot [0-9]+$' folded.out
ok "report --folded: rooted at the command, through libc" \
	grep -qE '^hwpmc-record-hotpath;(.*;)?__libc_start_call_main;main;outer;middle;hot [0-9]+$' folded.out
folded_hot=$(awk '/;main;outer;middle;hot [0-9]+$/ { s += $NF } END { print s + 0 }' folded.out)
folded_all=$(awk '{ s += $NF } END { print s + 0 }' folded.out)
log "folded: $folded_hot of $folded_all samples in main;outer;middle;hot"
ok "report --folded: most samples end in main;outer;middle;hot" \
	test $((folded_hot * 2)) -ge "$folded_all"
ok "report --folded: every line is 'stack count'" \
	awk 'NF < 2 || $NF !~ /^[0-9]+$/ { bad = 1 } END { exit bad }' folded.out

# --- flame graph ----------------------------------------------------------
"$REPORT" -i hot.data --flamegraph flame.svg >flame.out 2>&1
rc=$?
show flame.out 4
ok "report --flamegraph: exit status 0" test "$rc" -eq 0
svg_ok() {
	python3 - "$1" <<'EOF'
import sys, xml.dom.minidom
d = xml.dom.minidom.parse(sys.argv[1])
svg = d.documentElement
assert svg.tagName == "svg", svg.tagName
rects = svg.getElementsByTagName("rect")
titles = [t.firstChild.data for t in svg.getElementsByTagName("title") if t.firstChild]
assert len(rects) > 5, len(rects)
names = [t.split(" (")[0] for t in titles]
for f in ("hot", "middle", "outer", "main", "hotpath::warm(int)"):
    assert f in names, f
print("# svg: %d rects, %d titles" % (len(rects), len(titles)))
EOF
}
if command -v python3 >/dev/null; then
	ok "report --flamegraph: valid SVG with boxes and <title>s for hot, middle, outer, main" \
		svg_ok flame.svg
else
	skip "report --flamegraph: valid SVG" "no python3"
fi
ok "report --flamegraph: hot's tooltip gives its samples" \
	grep -qE '<title>hot \([0-9]+ samples?, [0-9.]+%\)</title>' flame.svg

# --- dump ------------------------------------------------------------------
"$REPORT" -i hot.data --dump >dump.out 2>&1
rc=$?
show dump.out 6
ok "report --dump: exit status 0" test "$rc" -eq 0
ok "report --dump: INITIALIZE first" sh -c "head -n 1 dump.out | grep -q ' INITIALIZE '"
ok "report --dump: CLOSELOG last" sh -c "tail -n 1 dump.out | grep -qE ' CLOSELOG$'"
ok "report --dump: the PMC, the attach, the exec and the mappings" \
	sh -c "grep -q ' PMCALLOCATE .*event=\"SOFT-CLOCK.PROF\" mode=TS' dump.out &&
	       grep -q ' PMCATTACH ' dump.out &&
	       grep -q ' PROCEXEC .*path=\"$HOT\"' dump.out &&
	       grep -q ' MAP_IN .*path=\"$HOT\"' dump.out"
ok "report --dump: a line per record (as many CALLCHAIN as samples)" \
	test "$(grep -c ' CALLCHAIN ' dump.out)" -eq "${n:-0}"

# --- descendants, filters ------------------------------------------------
"$RECORD" -g -o fork.data -- "$HOT" 0.3 0 fork >fork.rec 2>&1
rc=$?
ok "record: a command that forks (exit 0)" test "$rc" -eq 0
"$REPORT" -i fork.data --sort pid,sym >fork.out 2>&1
show fork.out 14
hot_pids=$(entries fork.out | awk '$NF == "hot" { print $4 }' | sort -u)
log "pids with hot: $(echo "$hot_pids" | tr "\n" " ")"
ok "report: the forked child's samples resolve too (hot in 2 pids)" \
	test "$(echo "$hot_pids" | wc -w)" -eq 2
child=$(echo "$hot_pids" | sort -n | tail -n 1)
"$REPORT" -i fork.data --pid "$child" --sort pid >pid.out 2>&1
ok "report --pid: only that process" \
	sh -c "[ \"\$(grep -v '^#' pid.out | grep -E '%' | awk '{ print \$4 }' | sort -u)\" = '$child' ]"
"$REPORT" -i fork.data --pid "$child" --folded >pidf.out 2>/dev/null
ok "report --pid: the child's path is main;outer;middle;hot" \
	grep -qE ';main;outer;middle;hot [0-9]+$' pidf.out
"$REPORT" -i fork.data --comm hwpmc-record-hotpath --sort comm >comm.out 2>&1
ok "report --comm: only that command" \
	sh -c "[ \"\$(grep -v '^#' comm.out | grep -E '%' | awk '{ print \$4 }' | sort -u)\" = hwpmc-record-hotpath ]"
"$REPORT" -i fork.data --cpu 0 --sort cpu >cpu.out 2>&1
ok "report --cpu 0: only CPU 0" \
	sh -c "! grep -v '^#' cpu.out | grep -E '%' | awk '{ print \$4 }' | grep -qv '^0$'"
"$REPORT" -i fork.data --tid "$child" --sort tid >tid.out 2>&1
ok "report --tid: only that thread" \
	sh -c "[ \"\$(grep -v '^#' tid.out | grep -E '%' | awk '{ print \$4 }' | sort -u)\" = '$child' ]"

# --- a library loaded with dlopen after sampling started -------------------
"$RECORD" -g -o dl.data -- "$HOT" 0.6 0 dlopen >dl.rec 2>&1
ok "record: a program that dlopens a library (exit 0)" test $? -eq 0
"$REPORT" -i dl.data --sort dso,sym --percent-limit 2 >dl.out 2>&1
show dl.out 12
ok "report: the dlopened library's function is named (MAP_IN after dlopen)" \
	grep -qE 'libhwpmc-record-hotlib.so +\[\.\] lib_hot$' dl.out
"$REPORT" -i dl.data --folded >dlf.out 2>/dev/null
ok "report: ... called from main" grep -qE ';main;lib_hot [0-9]+$' dlf.out

# --- the vDSO ----------------------------------------------------------------
# clock_gettime(CLOCK_MONOTONIC) runs in the vDSO, which has no file: its
# MAP_IN names it "[vdso]" and the report reads the kernel's image.
"$RECORD" -g -o vdso.data -- "$HOT" 0.6 0 vdso >vdso.rec 2>&1
ok "record: a program in the vDSO (exit 0)" test $? -eq 0
"$REPORT" -i vdso.data --dump 2>/dev/null | grep -c 'MAP_IN .*path="\[vdso\]"' >vdso.n
ok "record: the vDSO mapping is logged (MAP_IN [vdso])" test "$(cat vdso.n)" -ge 1
"$REPORT" -i vdso.data --sort dso,sym --percent-limit 0 >vdso.out 2>&1
show vdso.out 12
# The vDSO reads the clock only with the TSC as clocksource: a guest whose
# host starved it can have lost the TSC to the clocksource watchdog (then
# clock_gettime() is a system call, and the samples are in read_hpet).
cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)
if [ "$cs" = tsc ]; then
	ok "report: the vDSO's function is named" \
		grep -qE '\[vdso\] +\[\.\] (__vdso_)?clock_gettime$' vdso.out
	"$REPORT" -i vdso.data --folded >vdsof.out 2>/dev/null
	ok "report: ... called from main (through libc)" \
		grep -qE ';main;(hotpath::clock_reads\(int\);)?clock_gettime[^;]*;(__vdso_)?clock_gettime( |;)' vdsof.out
else
	skip "report: the vDSO's function is named" "clocksource is ${cs:-unknown}, not tsc: clock_gettime() is a system call"
	skip "report: ... called from main (through libc)" "clocksource ${cs:-unknown}"
fi
ok "report: the vDSO is not taken for a program (no process named [vdso])" \
	sh -c "! grep -q '^\[vdso\];' vdsof.out"

# --- -p PID ------------------------------------------------------------------
# The process is stopped while hwpmc-record starts (seconds on a slow guest,
# PREEMPT_RT under emulation: it would be gone before the attach) and let
# go once hwpmc-control -l shows the PMC's row as THREAD (the attach comes
# right after the allocation; stopped, the process waits for it).
"$HOT" 3 &
hp=$!
sleep 0.3
kill -STOP "$hp"
"$RECORD" -g -p "$hp" -o pid.data >prec.out 2>&1 &
rp=$!
i=0
while [ "$i" -lt 600 ] && kill -0 "$rp" 2>/dev/null &&
	! "$TOOLS/hwpmc-control" -l 2>/dev/null | grep -qw THREAD; do
	sleep 0.1
	i=$((i + 1))
done
sleep 0.3
kill -CONT "$hp"
wait "$rp"
rc=$?
wait "$hp"
show prec.out 4
ok "record -p: ends when the process exits (exit 0)" test "$rc" -eq 0
"$REPORT" -i pid.data >pflat.out 2>&1
ok "record -p: hot first" test "$(first_sym pflat.out)" = hot
"$REPORT" -i pid.data --folded >pfold.out 2>/dev/null
ok "record -p: main;outer;middle;hot" grep -qE ';main;outer;middle;hot [0-9]+$' pfold.out

# --- system-wide -------------------------------------------------------------
"$RECORD" -a -g -o sys.data -- "$HOT" 0.5 >srec.out 2>&1
rc=$?
show srec.out 4
ok "record -a: exit 0" test "$rc" -eq 0
ok "record -a: one PMC per CPU" \
	test "$("$REPORT" -i sys.data --dump | grep -c ' PMCALLOCATE .*mode=SS')" -eq "$(nproc)"
"$REPORT" -i sys.data --comm hwpmc-record-hotpath >sflat.out 2>&1
show sflat.out 12
ok "record -a: the program is named (MAP_IN) and hot is its first entry" \
	test "$(first_sym sflat.out)" = hot
"$REPORT" -i sys.data --folded >sfold.out 2>/dev/null
ok "record -a: main;outer;middle;hot" grep -qE '^hwpmc-record-hotpath;.*main;outer;middle;hot [0-9]+$' sfold.out

# --- hwpmc-top ----------------------------------------------------------------
"$TOP" -d 0.3 -n 6 -- "$HOT" 1 4 >top.out 2>top.err
rc=$?
show top.out 12
ok "top: the command's exit status (4)" test "$rc" -eq 4
ok "top: refreshes with a header" grep -q '^hwpmc-top: SOFT-CLOCK.PROF every 1,000,000 ns' top.out
ok "top: shows hot" grep -qE 'hwpmc-record-hotpath +\[\.\] hot$' top.out
"$TOP" -a -d 0.3 -n 4 --iterations 2 >topa.out 2>&1
rc=$?
ok "top -a --iterations 2: exit 0 after two refreshes" \
	sh -c "[ $rc -eq 0 ] && [ \$(grep -c '^hwpmc-top: ' topa.out) -eq 2 ]"

# --- kernel symbols ----------------------------------------------------------
# dd spends its time in the kernel (read_iter_zero, clear_user, ...).
"$RECORD" -v -g -F 2000 -o kern.data -- dd if=/dev/zero of=/dev/null bs=64k count=4000 >krec.out 2>&1
"$REPORT" -i kern.data --percent-limit 2 >kflat.out 2>&1
show kflat.out 12
ok "report: kernel frames named (the symbols saved in the log)" \
	sh -c "entries() { grep -v '^#' \"\$1\" | grep -E '^ +[0-9.]+% +[0-9.]+%'; }
	       entries kflat.out | grep -F '[k] ' | grep -vqF '[unknown]'"
# hwpmc-record saved the kernel symbols its samples need in the log; they
# name what this kernel's /proc/kallsyms names, byte for byte.
ok "record -v: says it saved kernel symbols in the log" \
	grep -qE '^hwpmc-record: saved [1-9][0-9]* kernel symbols in kern.data$' krec.out
cat /proc/kallsyms >live.kallsyms
"$REPORT" -i kern.data --kallsyms live.kallsyms --percent-limit 2 >klive.out 2>&1
"$REPORT" -i kern.data --folded >kfold.out 2>&1
"$REPORT" -i kern.data --kallsyms live.kallsyms --folded >kfoldlive.out 2>&1
ok "report: the saved kernel symbols give what /proc/kallsyms gives (flat, folded)" \
	sh -c "cmp -s kflat.out klive.out && cmp -s kfold.out kfoldlive.out"
# --kallsyms FILE: another machine's symbols (here this kernel's, renamed)
# name the kernel frames, not /proc/kallsyms; a user reads them too.
sed 's/^\([0-9a-f]* [tT] \)/\1other_/' /proc/kallsyms >other.kallsyms
chmod 644 other.kallsyms
"$REPORT" -i kern.data --kallsyms other.kallsyms --percent-limit 2 >kother.out 2>&1
show kother.out 6
ok "report --kallsyms FILE: kernel frames named from FILE (other_...)" \
	sh -c "grep -F '[k] ' kother.out | grep -q '\[k\] other_'"
"$REPORT" -i kern.data --kallsyms /nonexistent >knx.out 2>&1
ok "report --kallsyms of a missing file: exit 1, names it" \
	sh -c "[ $? -eq 1 ] && grep -q /nonexistent knx.out"
if command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	chmod 755 "$T" && chmod 644 kern.data
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$REPORT" -i "$T/kern.data" \
		--kallsyms "$T/other.kallsyms" --percent-limit 2 >knobody2.out 2>&1
	ok "report --kallsyms as a user: kernel frames named from FILE" \
		sh -c "grep -F '[k] ' knobody2.out | grep -q '\[k\] other_'"
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$REPORT" -i "$T/kern.data" \
		>knobody.out 2>&1
	if setpriv --reuid=nobody --regid=nogroup --clear-groups head -n 1 /proc/kallsyms |
		grep -q '^0000000000000000 '; then
		ok "report as a user: says kernel symbols are hidden (kallsyms zeros)" \
			grep -q 'kernel addresses are not symbolized' knobody.out
	else
		skip "report as a user: kallsyms zeros" "kallsyms readable by users here"
	fi
else
	skip "report as a user: kallsyms zeros" "no setpriv or no user nobody"
fi

# --- statuses, errors --------------------------------------------------------
"$RECORD" -o x.data -- /nonexistent/program >nx.out 2>&1
ok "record: a command not found exits 127" test $? -eq 127
ok "record: ... and says so" grep -q "cannot run '/nonexistent/program'" nx.out
"$RECORD" -o x.data -- sh -c 'kill -TERM $$' >sig.out 2>&1
ok "record: a command killed by SIGTERM exits 143" test $? -eq 143
"$RECORD" -e no-such-event -- true >ev.out 2>&1
ok "record: an unknown event is an error (1)" test $? -eq 1
ok "record: ... naming the event" grep -q 'no-such-event' ev.out
"$RECORD" -F 100 -c 1000 -- true >use.out 2>&1
ok "record: usage errors exit 2" test $? -eq 2
"$RECORD" >use2.out 2>&1
ok "record: nothing to sample is a usage error" test $? -eq 2
"$RECORD" --help >help.out 2>&1
ok "record --help: exit 0, usage" sh -c "[ $? -eq 0 ] && grep -q '^usage: hwpmc-record' help.out"
"$REPORT" --help >rhelp.out 2>&1
ok "report --help: exit 0, usage" sh -c "[ $? -eq 0 ] && grep -q '^usage: hwpmc-report' rhelp.out"
"$REPORT" --sort nonsense -i hot.data >sort.out 2>&1
ok "report: an unknown sort key exits 2" test $? -eq 2
"$REPORT" -i does-not-exist.data >nf.out 2>&1
ok "report: a missing file exits 1" test $? -eq 1

# A program rebuilt after the recording: the report says its names may be wrong.
cp "$HOT" "$T/hotcopy"
"$RECORD" -o copy.data -- "$T/hotcopy" 0.1 >/dev/null 2>&1
touch -d '+1 hour' "$T/hotcopy"
"$REPORT" -i copy.data >copy.out 2>&1
ok "report: notes a program modified after the recording" \
	grep -q "$T/hotcopy was modified after the recording" copy.out

# A log cut in the middle of a record: reported up to there, with a warning.
size=$(stat -c %s hot.data)
head -c $((size / 2 + 3)) hot.data >cut.data
"$REPORT" -i cut.data >cut.out 2>cut.err
rc=$?
show cut.err 3
ok "report: a truncated log is reported up to its end (exit 0)" test "$rc" -eq 0
ok "report: ... with a warning" grep -qi 'truncat\|ends inside\|warning' cut.err
ok "report: ... and the note that CLOSELOG is missing" grep -q 'does not end with CLOSELOG' cut.out
head -c 4096 /dev/urandom >junk.data
"$REPORT" -i junk.data >junk.out 2>&1
ok "report: a file that is not a log exits 1" test $? -eq 1
"$REPORT" -i cut.data --dump >cutd.out 2>&1
ok "report --dump: a truncated log exits 1 after its records" \
	sh -c "[ $? -eq 1 ] && head -n 1 cutd.out | grep -q INITIALIZE"


# --- drops: a module with the smallest rings and log buffers ---------------
# nsamples=1 nbuffers=1 logbuffersize=1 (the smallest the module accepts)
# and four busy processes sampled at 20 kHz: samples and records are
# dropped.  The summary says how many and what to tune, the log's
# DROPNOTIFY records add up to the same, the driver's statistics (-v)
# balance (taken = logged + dropped), and hwpmc-report says so too.  The
# default module is loaded back however the section ends.
# (TOP names hwpmc-top here: the build directory is BIN's parent.)
RELEASE_KO=${BIN%/userland}/$(uname -r)/hwpmc.ko
# 1234567 -> 1,234,567, as the tools print counts.
commas() { echo "$1" | sed ':a; s/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/; ta'; }
restore_module() {
	[ -e "$T/tiny" ] || return 0
	swap_module "$RELEASE_KO" || echo "# cannot load $RELEASE_KO back"
	rm -f "$T/tiny"
}
trap 'restore_module; rm -rf "$T"' EXIT

t_drops() {
	: >"$T/tiny"
	if ! swap_module "$RELEASE_KO" nsamples=1 nbuffers=1 logbuffersize=1; then
		ok "drops: the module loads with nsamples=1 nbuffers=1 logbuffersize=1" false
		return
	fi
	"$RECORD" -v -F 20000 -o drop.data -- sh -c \
		"for i in 1 2 3 4; do '$HOT' 0.5 & done; wait" >drop.out 2>&1
	rc=$?
	restore_module
	show drop.out
	ok "drops: record exits 0" test "$rc" -eq 0
	local n d t
	n=$(sed -n 's/^hwpmc-record: \([0-9,]*\) samples of.*/\1/p' drop.out | tr -d ,)
	d=$(sed -n 's/^hwpmc-record: [0-9,]* samples of.*, \([0-9,]*\) dropped\(, [0-9,]* throttled\)\{0,1\}$/\1/p' drop.out | tr -d ,)
	# Samples a CPU at kernel.hwpmc.max_sample_rate did not take.
	t=$(sed -n 's/^hwpmc-record: [0-9,]* samples of.*, \([0-9,]*\) throttled$/\1/p' drop.out | tr -d ,)
	t=${t:-0}
	log "logged ${n:-?}, dropped ${d:-?}, throttled $t"
	ok "drops: the summary reports dropped samples (${d:-?})" test "${d:-0}" -gt 0
	ok "drops: the warning says how many of all samples were dropped" \
		grep -qE "^hwpmc-record: warning: $(commas "${d:-x}") of $(commas $((${n:-0} + ${d:-0} + t))) samples \(" drop.out
	ok "drops: ... and names the rate and the tunables, with their values" \
		sh -c "grep -q 'lower rate (-F / -c)' drop.out && grep -q 'nsamples=1 (ring' drop.out &&
		       grep -q 'nbuffers=1 (log' drop.out && grep -q 'logbuffersize=1\$' drop.out"
	"$REPORT" -i drop.data --dump >drop.dump 2>&1
	local dn dr rr tr_
	dn=$(grep -c 'DROPNOTIFY' drop.dump)
	dr=$(sed -n 's/.*DROPNOTIFY.* samples=\([0-9]*\) .*/\1/p' drop.dump | awk '{ s += $1 } END { print s + 0 }')
	rr=$(sed -n 's/.*DROPNOTIFY.* records=\([0-9]*\).*/\1/p' drop.dump | awk '{ s += $1 } END { print s + 0 }')
	tr_=$(sed -n 's/.*DROPNOTIFY.* throttled=\([0-9]*\).*/\1/p' drop.dump | awk '{ s += $1 } END { print s + 0 }')
	log "$dn DROPNOTIFY records: $dr samples, $rr other records, $tr_ throttled"
	ok "drops: the DROPNOTIFY records add up to the summary's throttled ($tr_ = $t)" \
		test "$tr_" = "$t"
	ok "drops: the DROPNOTIFY records add up to the summary's drops ($dr = ${d:-?})" \
		test "$dr" = "${d:-x}"
	ok "drops: ... and to its other records" \
		grep -qE "and $(commas "$rr") other records were dropped" drop.out
	local dt dd
	dt=$(sed -n 's/.*(all users): \([0-9,]*\) samples taken, .*/\1/p' drop.out | tr -d ,)
	dd=$(sed -n 's/.*(all users): [0-9,]* samples taken, \([0-9,]*\) dropped.*/\1/p' drop.out | tr -d ,)
	ok "drops: driver statistics: taken ${dt:-?} = logged ${n:-?} + dropped ${d:-?} + throttled $t" \
		test "${dt:-x}" = "$((${n:-0} + ${d:-0} + t))"
	ok "drops: driver statistics: dropped ${dd:-?} = the log's ${d:-?}" test "${dd:-x}" = "${d:-y}"
	"$REPORT" -i drop.data >dropr.out 2>&1
	show dropr.out 6
	ok "report: its header counts the drops" \
		grep -qE "^# hwpmc-report of drop.data: .*, $(commas "${d:-0}") dropped$" dropr.out
	ok "report: ... with a note on them and what to tune" \
		sh -c "grep -qE '^# note: $(commas "${d:-0}") samples .* were dropped while recording' dropr.out &&
		       grep -q 'nsamples' dropr.out && grep -q 'nbuffers' dropr.out &&
		       grep -q 'logbuffersize' dropr.out"
}
if [ "$(id -u)" -ne 0 ]; then
	skip "drops" "needs root (reloads the module)"
elif [ ! -e "$RELEASE_KO" ]; then
	skip "drops" "no $RELEASE_KO"
else
	t_drops
	ok "drops: the default module is back (nsamples=256)" \
		test "$(cat /sys/module/hwpmc/parameters/nsamples 2>/dev/null)" = 256
fi

finish
