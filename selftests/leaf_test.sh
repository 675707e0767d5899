#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The leaf's caller in frame-pointer callchains (hwpmc-record -g): a
# program built -O1 -fno-omit-frame-pointer whose hot leaf has no frame
# (tools/hwpmc-record-leafpath: main -> leaf_mid -> leaf_hot, the last two
# in libhwpmc-record-leaflib.so).  -g records a 64-byte USERSTACK beside
# each callchain, and hwpmc-report puts in the caller the frame-pointer
# walk misses: main;leaf_mid;leaf_hot in >= 95% of leaf_hot's samples, in
# the folded stacks, the call graph and --script; as root and as uid
# 65534.  The module loaded with max_user_stack=0 (no stack copy, as a
# module before it): hwpmc-record says so once and records the callchains
# alone, where leaf_mid is in almost none of leaf_hot's samples (the old
# behaviour).  With the smallest rings and buffers, samples are dropped
# and counted whole (taken = logged + dropped + throttled).  The figures
# (log bytes per sample with and without the copy, report time) are
# printed as comments.
# HWPMC_TOOLS=DIR runs the tools of another build.
. "$(dirname "$0")/lib.sh"

TOOLS=${HWPMC_TOOLS:-$BIN/tools}
RECORD=$TOOLS/hwpmc-record
REPORT=$TOOLS/hwpmc-report
PROG=$TOOLS/hwpmc-record-leafpath
PATH3="main;leaf_mid;leaf_hot"
RELEASE_KO=${BIN%/userland}/$(uname -r)/hwpmc.ko

need_tools "leaf callers" "$RECORD" "$REPORT" "$PROG"

T=$(mktemp -d /tmp/leaf_test.XXXXXX)
chmod 755 "$T"
restore_module() {
	[ -e "$T/nostack" ] || return 0
	swap_module "$RELEASE_KO" || echo "# cannot load $RELEASE_KO back"
	rm -f "$T/nostack"
}
trap 'restore_module; rm -rf "$T"' EXIT

# Of the folded stacks (--user), the samples whose leaf is leaf_hot and
# those of them with main;leaf_mid;leaf_hot: "FULL TOTAL".
leaf_share() {
	awk -v p=";$PATH3" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s)
		if (s ~ /;leaf_hot$/) { t += n; if (substr(s, length(s) - length(p) + 1) == p) f += n } }
		END { print f + 0, t + 0 }' "$1"
}
# Of --script's samples, those whose innermost frame is leaf_hot and those
# of them whose next two are leaf_mid and main: "FULL TOTAL".
script_share() {
	awk 'function flush() { if (n >= 1 && f[1] == "leaf_hot") { t++
			if (n >= 3 && f[2] == "leaf_mid" && f[3] == "main") g++ } n = 0 }
		/^$/ { flush(); next }
		/^\t/ { s = $2; sub(/\+0x[0-9a-f]+$/, "", s); f[++n] = s; next }
		{ flush() }
		END { flush(); print g + 0, t + 0 }' "$1"
}
# At least 95% (and at least 10 samples).
ge95() { [ "$2" -ge 10 ] && [ $(($1 * 100)) -ge $(($2 * 95)) ]; }
# At most 5% (and at least 10 samples).
le5() { [ "$2" -ge 10 ] && [ $(($1 * 100)) -le $(($2 * 5)) ]; }

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
	skip "uid 65534: leaf callers" "no setpriv or no user nobody"
fi

for who in "${users[@]}"; do
	D=$T/$who
	mkdir -p "$D"
	[ "$who" = root ] || chown nobody "$D"
	tag=$who
	[ "$who" = nobody ] && tag="uid 65534"

	run_as "$who" "$D" "$RECORD" -g -o "$D/g.data" -- "$PROG" 1 >"$D/record.out" 2>&1
	rc=$?
	show "$D/record.out" 4
	ok "$tag: record -g of the -O1 -fno-omit-frame-pointer program" test "$rc" -eq 0
	ok "$tag: record -g: no note of a missing stack copy" \
		bash -c "! grep -q 'no user stack copy' '$D/record.out'"
	"$REPORT" -i "$D/g.data" --dump >"$D/dump.out" 2>&1
	ncc=$(grep -c ' CALLCHAIN ' "$D/dump.out")
	nus=$(grep -c ' USERSTACK .*size=64 ' "$D/dump.out")
	ok "$tag: record -g: a 64-byte USERSTACK per CALLCHAIN ($nus of $ncc)" \
		test "$ncc" -gt 0 -a "$nus" -eq "$ncc"

	s0=$(date +%s%N)
	run_as "$who" "$D" "$REPORT" -i "$D/g.data" --user --folded >"$D/folded.out" \
		2>"$D/folded.err"
	rc=$?
	s1=$(date +%s%N)
	show "$D/folded.out" 6
	ok "$tag: report --folded" test "$rc" -eq 0
	set -- $(leaf_share "$D/folded.out")
	log "$tag: $1 of $2 samples in leaf_hot have $PATH3"
	ok "$tag: $PATH3 in >= 95% of leaf_hot's samples ($1 of $2)" ge95 "$1" "$2"

	run_as "$who" "$D" "$REPORT" -i "$D/g.data" --user -g --sort sym >"$D/graph.out" 2>/dev/null
	show "$D/graph.out" 16
	ok "$tag: report -g: leaf_hot's call graph goes through leaf_mid to main" \
		bash -c "awk '/leaf_hot/ { on = 1 } on' '$D/graph.out' | grep -q leaf_mid &&
			awk '/leaf_hot/ { on = 1 } on' '$D/graph.out' | grep -qw main"

	run_as "$who" "$D" "$REPORT" -i "$D/g.data" --user --script >"$D/script.out" 2>/dev/null
	set -- $(script_share "$D/script.out")
	ok "$tag: report --script: leaf_hot, leaf_mid, main in >= 95% of leaf_hot's samples ($1 of $2)" \
		ge95 "$1" "$2"

	size=$(stat -c %s "$D/g.data")
	log "$tag: -g log with the leaf copy: $size bytes, $ncc samples, $((size / (ncc > 0 ? ncc : 1))) bytes per sample; report --folded $(((s1 - s0) / 1000000)) ms"
done

# --- without a stack copy: the module's max_user_stack=0 --------------------
if [ "$(id -u)" != 0 ] || [ ! -e "$RELEASE_KO" ]; then
	skip "-g without a stack copy" "needs root and $RELEASE_KO to reload the module"
	finish
fi
: >"$T/nostack"
if ! swap_module "$RELEASE_KO" max_user_stack=0; then
	ok "the module loads with max_user_stack=0" false
	finish
fi
D=$T/nostack.d
mkdir -p "$D"
"$RECORD" -g -o "$D/g.data" -- "$PROG" 1 >"$D/record.out" 2>&1
rc=$?
restore_module
show "$D/record.out" 4
ok "max_user_stack=0: record -g exits 0" test "$rc" -eq 0
ok "max_user_stack=0: record says once that there is no stack copy" \
	test "$(grep -c 'no user stack copy' "$D/record.out")" -eq 1
"$REPORT" -i "$D/g.data" --dump >"$D/dump.out" 2>&1
ncc=$(grep -c ' CALLCHAIN ' "$D/dump.out")
nus=$(grep -c ' USERSTACK ' "$D/dump.out")
ok "max_user_stack=0: callchains ($ncc), no USERSTACK ($nus)" test "$ncc" -gt 0 -a "$nus" -eq 0
s0=$(date +%s%N)
"$REPORT" -i "$D/g.data" --user --folded >"$D/folded.out" 2>/dev/null
s1=$(date +%s%N)
show "$D/folded.out" 6
set -- $(leaf_share "$D/folded.out")
log "max_user_stack=0: $1 of $2 samples in leaf_hot have $PATH3 (the frame-pointer walk alone)"
ok "max_user_stack=0: the walk alone misses leaf_mid in >= 95% of leaf_hot's samples ($1 of $2)" \
	le5 "$1" "$2"
size=$(stat -c %s "$D/g.data")
log "-g log without the leaf copy: $size bytes, $ncc samples, $((size / (ncc > 0 ? ncc : 1))) bytes per sample; report --folded $(((s1 - s0) / 1000000)) ms"

# --- drops: a sample's two records are logged or dropped together -----------
# The smallest rings and buffers that hold -g's two records (4 KB: a
# callchain of callchaindepth 128 and the 240-byte USERSTACK), four busy
# processes at 20 kHz: samples are dropped, and taken = logged + dropped +
# throttled in the driver's statistics (-v), with a USERSTACK for every
# logged CALLCHAIN.
: >"$T/nostack"
if ! swap_module "$RELEASE_KO" nsamples=1 nbuffers=1 logbuffersize=4; then
	ok "the module loads with nsamples=1 nbuffers=1 logbuffersize=4" false
	finish
fi
"$RECORD" -g -v -F 20000 -o "$D/drop.data" -- sh -c \
	"for i in 1 2 3 4; do '$PROG' 0.5 & done; wait" >"$D/drop.out" 2>&1
rc=$?
restore_module
show "$D/drop.out" 8
ok "drops: record -g exits 0, with the stack copy" \
	test "$rc" -eq 0 -a "$(grep -c 'no user stack copy' "$D/drop.out")" -eq 0
n=$(sed -n 's/^hwpmc-record: \([0-9,]*\) samples of.*/\1/p' "$D/drop.out" | tr -d ,)
d=$(sed -n 's/^hwpmc-record: [0-9,]* samples of.*, \([0-9,]*\) dropped\(, [0-9,]* throttled\)\{0,1\}$/\1/p' \
	"$D/drop.out" | tr -d ,)
t=$(sed -n 's/^hwpmc-record: [0-9,]* samples of.*, \([0-9,]*\) throttled$/\1/p' "$D/drop.out" | tr -d ,)
t=${t:-0}
dt=$(sed -n 's/.*(all users): \([0-9,]*\) samples taken, .*/\1/p' "$D/drop.out" | tr -d ,)
log "drops: logged ${n:-?}, dropped ${d:-?}, throttled $t, taken ${dt:-?}"
ok "drops: some samples were dropped (${d:-?})" test "${d:-0}" -gt 0
ok "drops: taken ${dt:-?} = logged ${n:-?} + dropped ${d:-?} + throttled $t" \
	test "${dt:-x}" = "$((${n:-0} + ${d:-0} + t))"
"$REPORT" -i "$D/drop.data" --dump >"$D/drop.dump" 2>&1
ncc=$(grep -c ' CALLCHAIN ' "$D/drop.dump")
nus=$(grep -c ' USERSTACK .*size=64 ' "$D/drop.dump")
ok "drops: a USERSTACK for each of the $ncc logged CALLCHAIN records ($nus)" \
	test "$ncc" -gt 0 -a "$nus" -eq "$ncc" -a "$ncc" = "${n:-x}"
finish
