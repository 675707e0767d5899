#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The tools on hardware counters, end to end, on the test flavor's PMU model
# (pmu_model=intel, amd, amd-ext and amd-legacy): hwpmc-stat counts exactly what a command drives
# the model's counters by (with perf's :u/:k modifiers and IPC),
# hwpmc-record samples at the period and hwpmc-report names the event as
# the user did, hwpmc-control lists the hardware class; as uid 65534 the
# tools need kernel.hwpmc.unprivileged_hw and count user mode only.  The
# release module is loaded back at the end.
. "$(dirname "$0")/lib.sh"
tools=$BIN/tools
rel=$(uname -r)
testko=$TOP/build/$rel/test/hwpmc.ko
releaseko=$TOP/build/$rel/hwpmc.ko
adv=/sys/kernel/debug/hwpmc-model/advance
hold=/sys/kernel/debug/hwpmc-test/hold_perfctr
tmp=$(mktemp -d)

[ "$(id -u)" -eq 0 ] || { skip "hardware tools on the PMU model" "needs root (loads the test module)"; finish; }
[ -e "$testko" ] || { skip "hardware tools on the PMU model" "no $testko (make modules-test)"; finish; }
command -v taskset >/dev/null || { skip "hardware tools on the PMU model" "no taskset(1)"; finish; }

restore() {
	if [ -e "$releaseko" ]; then swap_module "$releaseko"; else rmmod hwpmc 2>/dev/null; fi
	rm -rf "$tmp"
}
trap restore EXIT


for model in intel amd amd-ext amd-legacy; do
	case $model in
	intel) class=IAP rows=4 cputype=INTEL_ARCH ;;
	amd) class=K8 rows=6 cputype=AMD_V2 ;;
	amd-ext) class=K8 rows=6 cputype=AMD_EXT ;;
	amd-legacy) class=K8 rows=4 cputype=AMD_K8 ;;
	esac
	if ! swap_module "$testko" pmu_model=$model; then
		ok "$model: the test module loads with pmu_model=$model" false
		continue
	fi

	"$tools/hwpmc-control" -L >"$tmp/L" 2>&1
	ok "$model: hwpmc-control -L shows CPU type $cputype and $class with $rows 48-bit rows" \
		sh -c "grep -q '^CPU type $cputype,' '$tmp/L' && grep -q '^$class: $rows rows, 48-bit' '$tmp/L'"

	# Counters held by perf (the test module's hold_perfctr plays perf):
	# every hardware row of every CPU is unavailable, none of the others.
	# The kernel's reservation bits follow the CPU's vendor: an Intel model
	# in a guest whose CPU says AMD (QEMU's default) is not covered.
	case $model in intel) vendor=GenuineIntel ;; amd*) vendor=AuthenticAMD ;; esac
	if ! grep -q "^vendor_id.*: $vendor\$" /proc/cpuinfo; then
		skip "$model: hwpmc-control -l shows rows held by perf as UNAVAILABLE" \
			"the guest CPU is not $vendor: its reservation bits do not cover the model's counters"
	elif echo 1 >"$hold"; then
		"$tools/hwpmc-control" -l >"$tmp/lh" 2>&1
		echo 0 >"$hold"
		"$tools/hwpmc-control" -l >"$tmp/lf" 2>&1
		n=$(grep -cE "^  [0-9]+ +$class-[0-9]+ +$class +yes +FREE +UNAVAILABLE +- +- +- \(held by perf\)$" "$tmp/lh")
		ok "$model: hwpmc-control -l shows the $rows $class rows of each CPU held by perf as UNAVAILABLE" \
			sh -c "[ $n -eq $((rows * $(nproc))) ] && ! grep -qE ' (SOFT|TSC) .*UNAVAILABLE' '$tmp/lh'"
		ok "$model: and as FREE once perf lets them go" \
			sh -c "grep -qE '^  [0-9]+ +$class-0 +$class +yes +FREE +FREE ' '$tmp/lf' && ! grep -q UNAVAILABLE '$tmp/lf'"
	else
		ok "$model: hold_perfctr takes the counters as perf would" false
	fi

	# libhwpmc's pmc_read() with RDPMC on the model's counters.
	"$BIN/libhwpmc/tests/libhwpmc_model_tests" >"$tmp/m" 2>&1
	rc=$?
	grep -E '^\[ +(OK|FAILED|SKIPPED) +\]|Failure|Expected|Which is' "$tmp/m" | sed 's/^/#   /'
	ok "$model: pmc_read() uses RDPMC once granted, 64-bit past the 48-bit counter, the ioctl once revoked" \
		sh -c "[ $rc -eq 0 ] && grep -q '^\[  PASSED  \] 2 tests' '$tmp/m' && ! grep -q SKIPPED '$tmp/m'"

	"$tools/hwpmc-stat" -x, -e instructions -e cycles -e instructions:u -e instructions:k \
		-- taskset -c 0 sh -c "echo 3000 > $adv; echo 'os 1000' > $adv" >"$tmp/s" 2>&1
	rc=$?
	sed 's/^/#   /' "$tmp/s"
	ok "$model: hwpmc-stat exits 0" test $rc -eq 0
	ok "$model: instructions and cycles count the 4,000 events driven, IPC 1.00" \
		sh -c "grep -q '^4000,,instructions,.*,1.000,insn per cycle' '$tmp/s' && grep -q '^4000,,cycles,' '$tmp/s'"
	ok "$model: instructions:u counts the 3,000 user-mode ones, :k the 1,000 kernel-mode ones" \
		sh -c "grep -q '^3000,,instructions:u,' '$tmp/s' && grep -q '^1000,,instructions:k,' '$tmp/s'"

	# A unit-masked event (Intel LLC misses, 0x412e), by its raw codes.
	"$tools/hwpmc-stat" -x, -e event=0x2e,umask=0x41,usr \
		-- taskset -c 0 sh -c "echo 500 > $adv; echo 'os 7' > $adv" >"$tmp/u" 2>&1
	rc=$?
	sed 's/^/#   /' "$tmp/u"
	ok "$model: an event with a unit mask (event=0x2e,umask=0x41,usr) counts the 500 user-mode events" \
		sh -c "[ $rc -eq 0 ] && grep -q '^500,,' '$tmp/u'"

	"$tools/hwpmc-record" -c 1000 -e instructions -o "$tmp/r.data" \
		-- taskset -c 0 sh -c "echo 999 > $adv; echo 1 > $adv; echo 1000 > $adv" >"$tmp/rec" 2>&1
	rc=$?
	sed 's/^/#   /' "$tmp/rec"
	ok "$model: hwpmc-record takes a sample at each period: 2 for 2,000 events" \
		sh -c "[ $rc -eq 0 ] && grep -q ': 2 samples of instructions' '$tmp/rec'"
	"$tools/hwpmc-report" -i "$tmp/r.data" >"$tmp/rep" 2>&1
	sed -n '1,4p' "$tmp/rep" | sed 's/^/#   /'
	ok "$model: hwpmc-report names the event as the user did (instructions)" \
		grep -q '^# Event: instructions, every 1,000 events, 2 samples' "$tmp/rep"
	"$tools/hwpmc-report" -i "$tmp/r.data" --dump >"$tmp/dump" 2>&1
	ok "$model: the log names it by its codes ($class-event=0xc0,umask=0x0)" \
		grep -q "PMCALLOCATE .*$class-event=0xc0,umask=0x0" "$tmp/dump"

	# An unprivileged user (uid 65534): no hardware PMC without
	# kernel.hwpmc.unprivileged_hw=1, and then user mode only: a plain
	# "instructions" (both modes) falls back to user mode, ":k" is refused
	# with what to do.
	if command -v setpriv >/dev/null; then
		nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"; }
		echo 0 >/proc/sys/kernel/hwpmc/unprivileged_hw
		nobody "$tools/hwpmc-stat" -x, -e instructions -- true >"$tmp/n0" 2>&1
		rc=$?
		sed 's/^/#   /' "$tmp/n0"
		ok "$model: as uid 65534, hardware events fail (status 1) and name kernel.hwpmc.unprivileged_hw" \
			sh -c "[ $rc -eq 1 ] && grep -q 'kernel.hwpmc.unprivileged_hw=1' '$tmp/n0'"
		echo 1 >/proc/sys/kernel/hwpmc/unprivileged_hw
		nobody "$tools/hwpmc-stat" -x, -e instructions -e instructions:u -- true >"$tmp/n1" 2>&1
		rc=$?
		sed 's/^/#   /' "$tmp/n1"
		ok "$model: with unprivileged_hw=1, 'instructions' and 'instructions:u' count user mode" \
			sh -c "[ $rc -eq 0 ] && grep -q '^0,,instructions,' '$tmp/n1' && grep -q '^0,,instructions:u,' '$tmp/n1'"
		nobody "$tools/hwpmc-stat" -x, -e instructions:k -- true >"$tmp/n2" 2>&1
		rc=$?
		sed 's/^/#   /' "$tmp/n2"
		ok "$model: and 'instructions:k' is refused (EACCES), naming kernel.hwpmc.unprivileged_kernel" \
			sh -c "[ $rc -eq 1 ] && grep -q 'Permission denied' '$tmp/n2' && grep -q 'kernel.hwpmc.unprivileged_kernel=1' '$tmp/n2'"
		echo 0 >/proc/sys/kernel/hwpmc/unprivileged_hw
	else
		skip "$model: hardware events as uid 65534" "no setpriv(1)"
	fi
done
finish
