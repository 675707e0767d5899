#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# hwpmc-report's outputs for other tools, in the guest, on the program with
# a known hot path (main -> outer -> middle -> hot):
#  --pprof: the profile read by `go tool pprof` (Debian's golang-go): hot
#    first in -top with the samples hwpmc-report counts, its callers in
#    -traces, the total, the labels, source lines (-lines);
#  --script: perf script's text, field by field against `perf script` of
#    a perf recording of the same program in the same guest, and collapsed
#    as FlameGraph's stackcollapse-perf.pl collapses it: the same stacks
#    and counts as hwpmc-report --folded.
# HWPMC_TOOLS=DIR runs the tools of another build.
. "$(dirname "$0")/lib.sh"

TOOLS=${HWPMC_TOOLS:-$BIN/tools}
RECORD=$TOOLS/hwpmc-record
REPORT=$TOOLS/hwpmc-report
HOT=$TOOLS/hwpmc-record-hotpath
T=$(mktemp -d /tmp/export_test.XXXXXX)
trap 'rm -rf "$T"' EXIT

need_tools "export" "$RECORD" "$REPORT" "$HOT"

cd "$T" || exit 1
"$RECORD" -g -o hot.data -- "$HOT" 0.5 >record.out 2>&1
ok "record the hot path (exit 0)" test $? -eq 0
show record.out 4
"$REPORT" -i hot.data --folded >folded.out 2>/dev/null
total=$(awk '{ s += $NF } END { print s + 0 }' folded.out)
hot_self=$(awk '$NF ~ /^[0-9]+$/ && $(NF-1) ~ /;hot$/ { s += $NF } END { print s + 0 }' folded.out)
hot_path=$(awk '/;main;outer;middle;hot [0-9]+$/ { s += $NF } END { print s + 0 }' folded.out)
log "hwpmc-report: $total samples, $hot_self in hot ($hot_path through main;outer;middle)"

# --- pprof ------------------------------------------------------------------
"$REPORT" -i hot.data --pprof hot.pb.gz >pprof.out 2>&1
rc=$?
show pprof.out 4
ok "report --pprof: exit status 0" test "$rc" -eq 0
ok "report --pprof: a gzip file" gzip -t hot.pb.gz

GO=$(command -v go)
if [ -z "$GO" ]; then
	skip "go tool pprof reads the profile" "no go (golang-go: scripts/deps)"
else
	# The guest's root is read-only: go's caches in /tmp.
	export HOME=$T GOCACHE=$T/gocache GOPATH=$T/go GOFLAGS=-mod=mod
	pprof() { "$GO" tool pprof "$@" 2>"$T/pprof.err"; }
	pprof -top -nodecount=20 hot.pb.gz >top.out
	rc=$?
	show top.out 14
	show "$T/pprof.err" 5
	ok "go tool pprof -top reads it" test "$rc" -eq 0
	# The hottest function (by self samples) is hwpmc-report's.  (Under
	# TCG on a loaded host, interrupts may take more than hot.)
	first=$(awk '/^ +flat +flat%/ { on = 1; next } on && NF >= 6 { print $6; exit }' top.out)
	r_first=$("$REPORT" -i hot.data -q --sort sym 2>/dev/null |
		awk 'NF >= 5 && $1 ~ /%$/ { print $NF; exit }')
	ok "pprof -top: the hottest function (${first:-?}) is hwpmc-report's (${r_first:-?})" \
		test -n "$first" -a "$first" = "$r_first"
	ok "pprof -top: hot is among the hottest" \
		bash -c "awk '/^ +flat +flat%/ { on = 1; next } on { print \$6 }' top.out | head -n 3 | grep -qx hot"
	p_hot=$(awk '$6 == "hot" && NF == 6 { print $1; exit }' top.out)
	ok "pprof -top: hot's flat samples (${p_hot:-?}) are hwpmc-report's ($hot_self)" \
		test "${p_hot:-x}" = "$hot_self"
	p_total=$(sed -n 's/.* of \([0-9]*\) total.*/\1/p' top.out | head -n 1)
	ok "pprof -top: the total (${p_total:-?}) is hwpmc-report's ($total)" \
		test "${p_total:-x}" = "$total"
	ok "pprof: the sample type is SOFT-CLOCK.PROF_samples" \
		grep -q '^Type: SOFT-CLOCK.PROF_samples' top.out
	pprof -top -sample_index=SOFT-CLOCK.PROF hot.pb.gz >top-ns.out
	ok "pprof -sample_index=SOFT-CLOCK.PROF: CPU time in seconds/ms" \
		grep -qE '^Showing nodes accounting for [0-9.]+m?s, ' top-ns.out

	# -traces: every stack with its count and labels.  The stacks whose
	# leaf is hot: hot, middle, outer, main.
	pprof -traces hot.pb.gz >traces.out
	show traces.out 24
	awk '/^-+\+-+$/ { if (n) print stack " " n; n = 0; stack = ""; next }
	     /^ +[0-9]+ +[^ ]/ && n == 0 && $1 ~ /^[0-9]+$/ { n = $1; stack = $2; next }
	     n && /^ +[^ :]+$/ { stack = stack ";" $1 }
	     END { if (n) print stack " " n }' traces.out >stacks.out
	show stacks.out 6
	t_hot=$(awk '$1 ~ /^hot;middle;outer;main(;|$)/ { s += $2 } END { print s + 0 }' stacks.out)
	ok "pprof -traces: hot;middle;outer;main in $t_hot samples, as in hwpmc-report ($hot_path)" \
		test "$t_hot" = "$hot_path" -a "$t_hot" -gt 0
	ok "pprof -traces: labels comm, pid, tid, cpu" bash -c \
		"grep -qE '^ +comm: +hwpmc-record-hotpath$' traces.out && grep -qE '^ +pid: +[0-9]+$' traces.out &&
		 grep -qE '^ +tid: +[0-9]+$' traces.out && grep -qE '^ +cpu: +[0-9]+$' traces.out"
	pprof -top -lines hot.pb.gz >lines.out
	ok "pprof -lines: hot at its line of hwpmc-record-hotpath.cpp" \
		grep -qE ' hot .*hwpmc-record-hotpath\.cpp:[0-9]+' lines.out
	pprof -raw hot.pb.gz >raw.out
	ok "pprof -raw: the program's mapping with its build id" bash -c \
		"grep -E 'hwpmc-record-hotpath' raw.out | grep -qE '[0-9a-f]{40}'"
fi

# --- perf script ------------------------------------------------------------
"$REPORT" -i hot.data --script >script.out 2>script.err
rc=$?
show script.out 12
ok "report --script: exit status 0" test "$rc" -eq 0
# The fields of each line, as perf script prints them by default (Python:
# the guest's awk is mawk, without regexp intervals).
cat >"$T/perf_script.py" <<'PY'
import re, sys
HEAD = re.compile(r'^(\S.*?) +(\d+)/(\d+) +\[(\d{3})\] +(\d+)\.(\d{6}): +(\d+) +(\S+): *$')
FRAME = re.compile(r'^\t *([0-9a-f]+) (\S.*?)(\+0x[0-9a-f]+)? \((.+)\)$')

def samples(path):
    """[(header match, [(addr, sym, off, dso)])], or raise on a line of no kind."""
    out, cur = [], None
    for n, line in enumerate(open(path), 1):
        line = line.rstrip('\n')
        h, f = HEAD.match(line), FRAME.match(line)
        if h and cur is None:
            cur = (h, [])
        elif f and cur is not None:
            cur[1].append(f.groups())
        elif line == '' and cur is not None and cur[1]:
            out.append(cur)
            cur = None
        elif line == '' and cur is not None:
            raise SystemExit('%s:%d: a sample without frames' % (path, n))
        else:
            raise SystemExit('%s:%d: unexpected: %r' % (path, n, line))
    if cur is not None:
        raise SystemExit('%s: ends inside a sample' % path)
    return out

def hot_chain(path):
    """sym (dso) of the first stack whose leaf is hot, up to main."""
    for h, frames in samples(path):
        if frames[0][1] == 'hot' and frames[0][2]:
            chain = []
            for addr, sym, off, dso in frames:
                chain.append('%s (%s)' % (sym, dso))
                if sym == 'main':
                    return chain
    return []

cmd, path = sys.argv[1], sys.argv[2]
if cmd == 'shape':
    print('# %s: %d samples' % (path, len(samples(path))))
elif cmd == 'fields':
    # Field kinds of the header of each sample, in order: the same for all.
    # (perf's regexp above parsed every header: comm pid/tid [cpu]
    # secs.usecs: period event:) and the periods they give.
    periods = set()
    for h, frames in samples(path):
        comm, pid, tid, cpu, secs, usecs, period, ev = h.groups()
        periods.add(int(period))
    print('comm pid/tid [cpu] secs.usecs: period event:', sorted(periods))
elif cmd == 'hottest':
    # The program's own function most often innermost, and its share of
    # the samples innermost in the program.
    from collections import Counter
    c = Counter(fr[0][1] for h, fr in samples(path) if fr[0][3].endswith('/hwpmc-record-hotpath'))
    sym, n = c.most_common(1)[0] if c else ('-', 0)
    print(sym, n, sum(c.values()))
elif cmd == 'chain':
    print('\n'.join(hot_chain(path)))
PY
py() { python3 "$T/perf_script.py" "$@"; }
# A header line (GNU grep).
head_re='^[^ ].* +[0-9]+/[0-9]+ +\[[0-9]{3}\] +[0-9]+\.[0-9]{6}: +[0-9]+ +[^ ]+: *$'
shape() { py shape "$1"; }
ok "report --script: every sample is a header, frames, a blank line" shape script.out
n_script=$(grep -cE "$head_re" script.out)
ok "report --script: $n_script samples, as hwpmc-report counts ($total)" test "$n_script" = "$total"

# FlameGraph's stackcollapse-perf.pl, its logic (not packaged in Debian):
# a header starts a stack named by the command; each frame line gives its
# symbol without +0xoff, innermost first; a blank line ends the stack.
collapse() {
	awk '
		/^[^\t ]/ { comm = $1; n = 0; next }
		/^\t/ { sub(/^\t +[0-9a-f]+ /, ""); sub(/ \(.*\)$/, ""); sub(/\+0x[0-9a-f]+$/, "")
			f[++n] = $0; next }
		/^$/ { if (comm == "") next; s = comm; for (i = n; i >= 1; i--) s = s ";" f[i]
			c[s]++; comm = ""; next }
		END { for (s in c) print s, c[s] }' "$1" | sort
}
collapse script.out >collapsed.out
grep ';hot [0-9]*$' folded.out | sort >folded-hot.out
grep ';hot [0-9]*$' collapsed.out >collapsed-hot.out
show collapsed-hot.out 4
ok "collapsed --script: the stacks through hot and their counts are --folded's" \
	cmp -s folded-hot.out collapsed-hot.out

# --- as an unprivileged user (uid 65534) -------------------------------------
# Its log hides kernel addresses: neither output may show one.
if command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	N=$(mktemp -d /tmp/export_nobody.XXXXXX)
	chown nobody "$N"
	as_nobody() { (cd "$N" && setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env HOME="$N" GOCACHE="$N/gocache" "$@"); }
	as_nobody "$RECORD" -g -o "$N/u.data" -- "$HOT" 0.3 >"$T/u-record.out" 2>&1
	rc=$?
	show "$T/u-record.out" 3
	ok "uid 65534: record the hot path" test "$rc" -eq 0
	as_nobody "$REPORT" -i "$N/u.data" --script >"$T/u-script.out" 2>/dev/null
	ok "uid 65534: --script in perf script's shape" shape "$T/u-script.out"
	ok "uid 65534: --script shows no kernel address" \
		bash -c "! grep -qE \$'^\t *ffff[0-9a-f]{12} ' '$T/u-script.out'"
	as_nobody "$REPORT" -i "$N/u.data" --folded >"$T/u-folded.out" 2>/dev/null
	u_hot=$(awk '/;main;outer;middle;hot [0-9]+$/ { s += $NF } END { print s + 0 }' "$T/u-folded.out")
	as_nobody "$REPORT" -i "$N/u.data" --pprof "$N/u.pb.gz" >/dev/null 2>&1
	ok "uid 65534: --pprof writes its profile" gzip -t "$N/u.pb.gz"
	if [ -n "$GO" ]; then
		as_nobody "$GO" tool pprof -raw "$N/u.pb.gz" >"$T/u-raw.out" 2>/dev/null
		ok "uid 65534: no kernel address among the profile's locations" bash -c \
			"grep -qE '^ +[0-9]+: 0x' '$T/u-raw.out' && ! grep -qE '^ +[0-9]+: 0xffff[0-9a-f]{12} ' '$T/u-raw.out'"
		as_nobody "$GO" tool pprof -traces "$N/u.pb.gz" >"$T/u-traces.out" 2>/dev/null
		ut_hot=$(awk '/^-+\+-+$/ { n = 0; d = 0; next }
			/^ +[0-9]+ +hot$/ { n = $1; d = 1; s = "hot"; next }
			d && /^ +[^ :]+$/ { s = s ";" $1; if (s ~ /^hot;middle;outer;main/) { t += n; d = 0 } }
			END { print t + 0 }' "$T/u-traces.out")
		ok "uid 65534: go tool pprof counts hot;middle;outer;main as hwpmc-report ($ut_hot, $u_hot)" \
			test "$ut_hot" = "$u_hot" -a "$u_hot" -gt 0
	fi
	rm -rf "$N"
else
	skip "uid 65534: the outputs of an unprivileged log" "no setpriv or no user nobody"
fi

if ! command -v perf >/dev/null; then
	skip "perf script of the same program" "no perf (linux-perf: scripts/deps)"
	finish
fi
# perf records the same program at the same rate (cpu-clock, every 1 ms of
# CPU time, callchains through frame pointers); its script, with the
# fields --script prints.
perf record -q -g -e cpu-clock -c 1000000 --sample-cpu -o perf.data -- "$HOT" 0.5 \
	>perf-record.out 2>&1
rc=$?
show perf-record.out 4
ok "perf record of the same program" test "$rc" -eq 0
perf script -i perf.data -F comm,pid,tid,cpu,time,period,event,ip,sym,symoff,dso \
	>perf-script.out 2>perf-script.err
show perf-script.out 12
ok "perf script: every sample is a header, frames, a blank line (the same shape)" \
	shape perf-script.out
# Field by field: the header's fields and the frames' of the hot path.
fields() { py fields "$1"; }
ok "header fields in perf's order (comm pid/tid [cpu] time: period event:), the same period" \
	bash -c "test \"\$(python3 '$T/perf_script.py' fields script.out)\" = \
	\"\$(python3 '$T/perf_script.py' fields perf-script.out)\" -a -s script.out"
chain() { py chain "$1"; }
chain script.out >chain-hwpmc.out
chain perf-script.out >chain-perf.out
show chain-hwpmc.out 6
show chain-perf.out 6
ok "the hot stack, frame by frame (symbol and DSO path), is perf's" \
	bash -c "test -s chain-hwpmc.out && cmp -s chain-hwpmc.out chain-perf.out"
# In both, hot is the program's own function most often interrupted.
read -r p_sym p_n p_all <<<"$(py hottest perf-script.out)"
read -r h_sym h_n h_all <<<"$(py hottest script.out)"
log "perf: $p_sym in $p_n of $p_all samples in the program's code; hwpmc: $h_sym in $h_n of $h_all"
ok "perf and hwpmc both find hot the program's hottest function" \
	test "$p_sym" = hot -a "$h_sym" = hot
finish
