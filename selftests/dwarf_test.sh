#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# DWARF callchains end to end: hwpmc-record --call-graph dwarf and
# hwpmc-report's unwinding of the samples' user stacks, on a program whose
# hot path runs through a shared library, all built -O2 without frame
# pointers (tools/hwpmc-record-dwarfpath:
# main -> dwarf_a -> dwarf_b (libhwpmc-record-dwarflib.so) -> dwarf_leaf).
# The full path is in >= 95% of the samples in dwarf_leaf, in the folded
# stacks, the call graph and the flat profile's children; as root and as
# uid 65534; in --script and --pprof (the unwound chain, not the logged
# one); under -g the leaf's caller (dwarf_b) in >= 95% of them (its
# 64-byte stack copy: leaf_test.sh); and perf record --call-graph dwarf of the same program in the
# same guest finds the same top path.  The figures (log bytes per sample,
# drops, report time against a frame-pointer log) are printed as comments.
# HWPMC_TOOLS=DIR runs the tools of another build.
. "$(dirname "$0")/lib.sh"

TOOLS=${HWPMC_TOOLS:-$BIN/tools}
RECORD=$TOOLS/hwpmc-record
REPORT=$TOOLS/hwpmc-report
PROG=$TOOLS/hwpmc-record-dwarfpath
PATH4="main;dwarf_a;dwarf_b;dwarf_leaf"

need_tools "dwarf callchains" "$RECORD" "$REPORT" "$PROG"

T=$(mktemp -d /tmp/dwarf_test.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT

# Of the folded stacks (--user), the samples whose leaf is dwarf_leaf and
# those of them with the full path: "FULL TOTAL".
leaf_share() {
	awk -v p=";$PATH4" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s)
		if (s ~ /;dwarf_leaf$/) { t += n; if (substr(s, length(s) - length(p) + 1) == p) f += n } }
		END { print f + 0, t + 0 }' "$1"
}
# At least 95% (and at least 10 samples).
ge95() { [ "$2" -ge 10 ] && [ $(($1 * 100)) -ge $(($2 * 95)) ]; }

# Of --script's samples, those whose innermost frame is dwarf_leaf and
# those of them whose next three are dwarf_b, dwarf_a, main: "FULL TOTAL".
script_share() {
	awk 'function flush() { if (n >= 1 && f[1] == "dwarf_leaf") { t++
			if (n >= 4 && f[2] == "dwarf_b" && f[3] == "dwarf_a" && f[4] == "main") g++ }
			n = 0 }
		/^$/ { flush(); next }
		/^\t/ { s = $2; sub(/\+0x[0-9a-f]+$/, "", s); f[++n] = s; next }
		{ flush() }
		END { flush(); print g + 0, t + 0 }' "$1"
}

# --pprof: go tool pprof -traces of the profile, its stacks whose leaf is
# dwarf_leaf through dwarf_b, dwarf_a and main (>= 95%).
pprof_check() {
	local d=$1
	"$REPORT" -i "$d/dwarf.data" --user --pprof "$d/dwarf.pb.gz" >/dev/null 2>&1
	ok "report --pprof of the dwarf log" test -s "$d/dwarf.pb.gz"
	local go
	go=$(command -v go)
	if [ -z "$go" ]; then
		skip "go tool pprof: the unwound path" "no go (golang-go: scripts/deps)"
		return
	fi
	HOME=$d GOCACHE=$d/gocache GOPATH=$d/go GOFLAGS=-mod=mod \
		"$go" tool pprof -traces "$d/dwarf.pb.gz" >"$d/traces.out" 2>/dev/null
	# -traces: per stack a count, then its frames innermost first.
	set -- $(awk '/^-+\+-+$/ { flush(); next }
		/^ +[0-9]+ +[^ ]/ && n == 0 && $1 ~ /^[0-9]+$/ { n = $1; k = 1; f[1] = $2; next }
		n && /^ +[^ :]+$/ { f[++k] = $1; next }
		function flush() { if (n && f[1] == "dwarf_leaf") { t += n
				if (k >= 4 && f[2] == "dwarf_b" && f[3] == "dwarf_a" && f[4] == "main") g += n }
			n = 0; k = 0 }
		END { flush(); print g + 0, t + 0 }' "$d/traces.out")
	ok "go tool pprof -traces: $PATH4 in >= 95% of dwarf_leaf's samples ($1 of $2)" \
		ge95 "$1" "$2"
}

# run_as USER DIR COMMAND...: in DIR, as root or as uid 65534.
run_as() {
	local who=$1 dir=$2
	shift 2
	if [ "$who" = root ]; then
		(cd "$dir" && "$@")
	else
		(cd "$dir" && setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME="$dir" "$@")
	fi
}

users=(root)
if command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	users+=(nobody)
else
	skip "uid 65534: dwarf callchains" "no setpriv or no user nobody"
fi

for who in "${users[@]}"; do
	D=$T/$who
	mkdir -p "$D"
	[ "$who" = root ] || chown nobody "$D"
	tag=$who
	[ "$who" = nobody ] && tag="uid 65534"

	run_as "$who" "$D" "$RECORD" --call-graph dwarf -o "$D/dwarf.data" -- "$PROG" 1 \
		>"$D/record.out" 2>&1
	rc=$?
	show "$D/record.out" 4
	ok "$tag: record --call-graph dwarf of the -O2 -fomit-frame-pointer program" test "$rc" -eq 0

	s0=$(date +%s%N)
	run_as "$who" "$D" "$REPORT" -i "$D/dwarf.data" --user --folded >"$D/folded.out" \
		2>"$D/folded.err"
	rc=$?
	s1=$(date +%s%N)
	show "$D/folded.out" 6
	show "$D/folded.err" 4
	ok "$tag: report --folded" test "$rc" -eq 0
	set -- $(leaf_share "$D/folded.out")
	full=$1 total=$2
	log "$tag: $full of $total samples in dwarf_leaf have $PATH4"
	ok "$tag: $PATH4 in >= 95% of dwarf_leaf's samples ($full of $total)" ge95 "$full" "$total"
	ok "$tag: the leaf's caller (dwarf_b, in the library) is in the folded stacks" \
		grep -q ';dwarf_b;dwarf_leaf ' "$D/folded.out"

	# The call graph: dwarf_leaf's callers, dwarf_b, dwarf_a, main.
	run_as "$who" "$D" "$REPORT" -i "$D/dwarf.data" --user -g \
		>"$D/graph.out" 2>/dev/null
	show "$D/graph.out" 24
	ok "$tag: report -g: dwarf_leaf's call graph goes through dwarf_b, dwarf_a, main" \
		bash -c "awk '/dwarf_leaf/ { on = 1 } on' '$D/graph.out' | grep -q dwarf_b &&
			awk '/dwarf_leaf/ { on = 1 } on' '$D/graph.out' | grep -q dwarf_a &&
			awk '/dwarf_leaf/ { on = 1 } on' '$D/graph.out' | grep -qw main"
	# --children: dwarf_a (in no sample's leaf) has children >= 95% of
	# dwarf_leaf's self.
	run_as "$who" "$D" "$REPORT" -i "$D/dwarf.data" --user --children --sort sym -q \
		>"$D/children.out" 2>/dev/null
	show "$D/children.out" 8
	ca=$(awk '$NF == "dwarf_a" { sub(/%/, "", $1); print int($1 * 10); exit }' "$D/children.out")
	cl=$(awk '$NF == "dwarf_leaf" { sub(/%/, "", $2); print int($2 * 10); exit }' "$D/children.out")
	ok "$tag: --children: dwarf_a (${ca:-?} per mille) covers dwarf_leaf's self (${cl:-?})" \
		test "${ca:-0}" -gt 0 -a $((${ca:-0} * 100)) -ge $((${cl:-1} * 95))

	# The address-by-address outputs show the unwound chain too.
	run_as "$who" "$D" "$REPORT" -i "$D/dwarf.data" --user --script >"$D/script.out" \
		2>/dev/null
	set -- $(script_share "$D/script.out")
	ok "$tag: report --script: $PATH4 in >= 95% of dwarf_leaf's samples ($1 of $2)" \
		ge95 "$1" "$2"
	if [ "$who" = root ]; then
		pprof_check "$D"
	fi

	# Figures: log bytes per sample, drops, report time (against -g).
	nsamp=$("$REPORT" -i "$D/dwarf.data" --dump 2>/dev/null | grep -c ' CALLCHAIN ')
	size=$(stat -c %s "$D/dwarf.data")
	drops=$(grep -o '[0-9,]* samples and [0-9,]* other records were dropped' "$D/folded.err")
	log "$tag: dwarf log: $size bytes, $nsamp samples, $((size / (nsamp > 0 ? nsamp : 1))) bytes per sample; drops: ${drops:-none}"
	run_as "$who" "$D" "$RECORD" -g -o "$D/fp.data" -- "$PROG" 1 >/dev/null 2>&1
	f0=$(date +%s%N)
	run_as "$who" "$D" "$REPORT" -i "$D/fp.data" --user --folded >"$D/fp-folded.out" 2>/dev/null
	f1=$(date +%s%N)
	nfp=$("$REPORT" -i "$D/fp.data" --dump 2>/dev/null | grep -c ' CALLCHAIN ')
	sfp=$(stat -c %s "$D/fp.data")
	set -- $(leaf_share "$D/fp-folded.out")
	log "$tag: fp log: $sfp bytes, $nfp samples, $((sfp / (nfp > 0 ? nfp : 1))) bytes per sample; full path in $1 of $2 (frame pointers cannot follow it)"
	# ... but -g's stack copy gives the frameless leaf its caller.
	set -- $(awk '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s)
		if (s ~ /;dwarf_leaf$/) { t += n; if (s ~ /;dwarf_b;dwarf_leaf$/) f += n } }
		END { print f + 0, t + 0 }' "$D/fp-folded.out")
	ok "$tag: record -g: the leaf's caller dwarf_b in >= 95% of dwarf_leaf's samples ($1 of $2)" \
		ge95 "$1" "$2"
	log "$tag: report --folded: dwarf $(((s1 - s0) / 1000000)) ms for $nsamp samples, fp $(((f1 - f0) / 1000000)) ms for $nfp samples"
done

# --- perf record --call-graph dwarf of the same program ---------------------
if ! command -v perf >/dev/null; then
	skip "perf --call-graph dwarf of the same program" "no perf (linux-perf: scripts/deps)"
	finish
fi
cd "$T" || exit 1
perf record -q --call-graph dwarf -e cpu-clock -o perf.data -- "$PROG" 1 >perf-record.out 2>&1
rc=$?
show perf-record.out 4
ok "perf record --call-graph dwarf of the same program" test "$rc" -eq 0
perf script -i perf.data -F comm,ip,sym >perf-script.out 2>/dev/null
# perf script: a header line (the comm, right-aligned), then a line per
# frame (a tab, the address, the symbol; innermost first), then a blank line; the four innermost frames of each sample of
# the program, outermost first, and their count, most frequent first.
awk 'function flush() { if (n >= 1 && comm ~ /^hwpmc-record-dw/) {
		s = f[1]; for (i = 2; i <= n && i <= 4; i++) s = f[i] ";" s; c[s]++ } n = 0 }
	/^$/ { flush(); next }
	!/^\t/ { flush(); comm = $1; next }
	{ n++; f[n] = $2 }
	END { flush(); for (s in c) print c[s], s }' perf-script.out | sort -rn >perf-paths.out
show perf-paths.out 5
awk -v p="$PATH4" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, a, ";")
	t = a[k]; for (i = k - 1; i >= 1 && i > k - 4; i--) t = a[i] ";" t; c[t] += n }
	END { for (t in c) print c[t], t }' "$T/root/folded.out" | sort -rn >hwpmc-paths.out
show hwpmc-paths.out 5
ptop=$(head -n 1 perf-paths.out | awk '{ print $2 }')
htop=$(head -n 1 hwpmc-paths.out | awk '{ print $2 }')
ok "perf and hwpmc-report agree on the top path (perf: ${ptop:-?}, hwpmc: ${htop:-?})" \
	test -n "$ptop" -a "$ptop" = "$htop" -a "$ptop" = "$PATH4"
finish
