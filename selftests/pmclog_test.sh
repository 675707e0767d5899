#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The pmclog(3) reader of libhwpmc on logs the module writes: a process
# samples itself (SOFT-CLOCK.PROF, callchains, 1 kHz) into a file and into a
# pipe read while it is written, and reads them back with pmclog_open(fd),
# pmclog_feed() in pieces and hwpmc::log_reader (libhwpmc/tests/pmclog_live.cpp);
# then FreeBSD pmclog(3) code built unchanged (libhwpmc/examples/
# pmclog_print.c) prints the file.
. "$(dirname "$0")/lib.sh"

LIVE=$BIN/libhwpmc/tests/pmclog-live
PRINT=$BIN/libhwpmc/examples/pmclog-print
T=$(mktemp -d /tmp/pmclog_test.XXXXXX)
trap 'rm -rf "$T"' EXIT

need_tools "pmclog-live" "$LIVE"

"$LIVE" "$T" >"$T/out" 2>&1
rc=$?
sed 's/^/# /' "$T/out"

# Each check the program makes is one test; a check it never reached fails.
checks=(read initialize-first initialize-fields closelog-last counts-and-offsets
	timestamps pmcallocate pmcattach map-in userdata callchains callchain-frames)
passed() { grep -qx "check $1: ok" "$T/out"; }
for c in "${checks[@]}"; do
	ok "file: $c" passed "file-$c"
done
for c in fed-in-pieces cxx-reader truncated; do
	ok "file: $c" passed "file-$c"
done
ok "pipe: sampling into a pipe" passed pipe-session
for c in "${checks[@]}"; do
	ok "pipe: $c" passed "pipe-$c"
done
ok "pmclog-live exits 0" test "$rc" -eq 0

# FreeBSD's pmcstat -R style dump of the file: every line a record.
printed() {
	local log=$T/pmclog-live.log out=$T/print
	"$PRINT" "$log" >"$out" 2>&1 || { echo "# pmclog-print failed:"; sed 's/^/# /' "$out"; return 1; }
	head -n 3 "$out" | sed 's/^/# /'
	head -n 1 "$out" | grep -q ' initlog 0x1' &&
		grep -q ' allocate 0x[0-9a-f]* "SOFT-CLOCK.PROF" ' "$out" &&
		grep -q " attach 0x[0-9a-f]* [0-9]* \"$LIVE\"" "$out" &&
		grep -q ' callchain [0-9]* 0x[0-9a-f]* [0-9]* [0-9]* u 0x' "$out" &&
		tail -n 1 "$out" | grep -q ' closelog$'
}
if [ -x "$PRINT" ]; then
	ok "pmclog-print (FreeBSD pmclog(3) code) prints the file" printed
else
	skip "pmclog-print" "not built: $PRINT"
fi
finish
