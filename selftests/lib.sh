# SPDX-License-Identifier: GPL-2.0
# Shell helpers for *_test.sh tool tests: kselftest-style TAP output.
#   . "$(dirname "$0")/lib.sh"
#   ok "name" command...      # passes when the command exits 0
#   skip "name" "reason"
#   finish                    # prints the plan, "# Totals:" and exits
#   swap_module KO [PARAM=V]... # unload hwpmc (waiting for its last user), load KO
KSFT_PASS=0 KSFT_FAIL=0 KSFT_SKIP=0 KSFT_N=0
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$TOP/build/userland

ok() {
	local name=$1
	shift
	KSFT_N=$((KSFT_N + 1))
	if "$@"; then
		KSFT_PASS=$((KSFT_PASS + 1))
		echo "ok $KSFT_N $name"
	else
		KSFT_FAIL=$((KSFT_FAIL + 1))
		echo "not ok $KSFT_N $name"
	fi
}

skip() {
	KSFT_N=$((KSFT_N + 1)) KSFT_SKIP=$((KSFT_SKIP + 1))
	echo "ok $KSFT_N $1 # SKIP $2"
}

finish() {
	echo "1..$KSFT_N"
	echo "# Totals: pass:$KSFT_PASS fail:$KSFT_FAIL xfail:0 xpass:0 skip:$KSFT_SKIP error:0"
	[ "$KSFT_FAIL" -eq 0 ] && exit 0
	exit 1
}

# A tool test's preconditions: every FILE built and the module loaded;
# else one skip named NAME, and the test ends there.
#   need_tools NAME FILE...
need_tools() {
	local name=$1 f
	shift
	for f in "$@"; do
		if [ ! -x "$f" ]; then
			skip "$name" "not built: $f"
			finish
		fi
	done
	if [ ! -c /dev/hwpmc ]; then
		skip "$name" "no /dev/hwpmc: the module is not loaded"
		finish
	fi
}

# The share of a busy loop's samples, in percent, that a test may ask to
# find in the loop: over half on Debian's kernels; a fifth on the debug
# kernel (scripts/debug-kernel: its release ends in -hwpmc-debug), whose
# own interrupt paths take much of a busy task's time under emulation, so
# that half or more of its samples are rightly in the kernel.
hot_share_min() {
	case $(uname -r) in
	*-hwpmc-debug) echo 20 ;;
	*) echo 50 ;;
	esac
}

# Wait (up to 60 s) until a command succeeds.
wait_for() {
	local i
	for i in $(seq 600); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# A comment line; a file shown as TAP comments (its first N lines, 40).
log() { echo "# $*"; }
show() { head -n "${2:-40}" "$1" | sed 's/^/#   /'; }

# Unload hwpmc, retrying for 5 s while a just-exited user still holds it,
# then load the module file $1 with the parameters that follow.
swap_module() {
	local i
	for i in $(seq 50); do
		[ -e /sys/module/hwpmc ] || break
		rmmod hwpmc 2>/dev/null && break
		sleep 0.1
	done
	[ ! -e /sys/module/hwpmc ] && insmod "$@"
}
