#!/usr/bin/env bash
# bench/summarize.py reports figures only from a guest run that finished:
# a results file without its final "done" (the guest crashed, hung or was
# rerun and cut short) gives exit 1 and no table; a finished one gives the
# tables with the medians of the rounds.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sum=$here/../summarize.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$2"; then echo "ok - $1"; else echo "not ok - $1"; fail=1; fi; }

cat >"$tmp/finished.txt" <<'EOT'
read getppid 1 300
read null-ioctl 1 1000
read getppid 2 400
read null-ioctl 2 1200
read getppid 3 350
read null-ioctl 3 1100
read pmcrw:SCHED.SWITCH 1 900
read page:SCHED.SWITCH 1 40
read page:TSC 1 130
read perf:task-clock 1 1300
switch unloaded 1 10000
switch loaded-idle 1 10100
scale read-1:pmcrw:CLOCK.PROF 1 1000
scale read-8:pmcrw:CLOCK.PROF 1 1040
scale read-1:perf:task-clock 1 1300
scale read-8:perf:task-clock 1 1310
scale pp-idle 1 9900
scale pp-mon0 1 10000
scale pp-mon1000:CLOCK.PROF 1 10200
scale ppk1:hwpmc-SCHED.SWITCH 1 12000
scale ppk8:hwpmc-SCHED.SWITCH 1 12700
scale ppk1:perf-context-switches 1 13000
scale ppk8:perf-context-switches 1 14000
scale ppk1:hwpmc-CLOCK.PROF 1 12300
scale ppk1:hwpmc-CLOCK.PROF 2 12310
scale ppk8:hwpmc-CLOCK.PROF 1 12307
scale ppk8:hwpmc-CLOCK.PROF 2 12303
scale ppk1:perf-task-clock 1 12600
scale ppk1:perf-task-clock 2 12600
scale ppk8:perf-task-clock 1 12600
scale ppk8:perf-task-clock 2 12607
scale pmcs:hwpmc:alloc:1 1 50000
scale pmcs:hwpmc:read:1 1 760
scale pmcs:hwpmc:alloc:16384 1 6000
scale pmcs:hwpmc:read:16384 1 770
scale pmcs:hwpmc:mem:16384 1 250
scale pmcs:hwpmc:left 1 4096
scale pmcs:perf:alloc:16384 1 9000
scale pmcs:perf:mem:16384 1 1700
scale owners:mem:1024 1 900
concurrent one:getppid 1 500
concurrent two-a:getppid 1 600
concurrent two-b:getppid 1 600
concurrent one:pmcrw:CLOCK.PROF 1 1000
concurrent two-a:pmcrw:CLOCK.PROF 1 2000
concurrent two-b:pmcrw:CLOCK.PROF 1 2000
sample bare 1 1000000
sample hwpmc-10000 1 1050000
samples hwpmc-10000 1 20
dropped hwpmc-10000 1 0
sample perf-10000 1 1040000
samples perf-10000 1 10
dropped perf-10000 1 0
sample perfc-10000 1 1060000
samples perfc-10000 1 20
dropped perfc-10000 1 0
sample hwpmc-10000-g-2cpu 1 1100000
samples hwpmc-10000-g-2cpu 1 40
dropped hwpmc-10000-g-2cpu 1 3
reportsamples hwpmc 1 500000
reportsamples perf 1 400000
reportsamples synth-1000000 1 1000000
report hwpmc-flat 1 1000000000
reportmem hwpmc-flat 1 20000
report perf-flat 1 4000000000
reportmem perf-flat 1 40000
report synth-1000000-flat 1 2000000000
reportmem synth-1000000-flat 1 30000
report synth-1000000-g 1 3000000000
reportmem synth-1000000-g 1 60000
done
EOT
head -n 4 "$tmp/finished.txt" >"$tmp/crashed.txt"

out=$("$sum" "$tmp/crashed.txt" 2>&1); rc=$?
check "an unfinished run exits 1" '[ "$rc" -eq 1 ]'
check "an unfinished run prints no table" '! grep -q "null ioctl" <<<"$out"'
check "an unfinished run says why" 'grep -q "did not finish" <<<"$out"'

out=$("$sum" "$tmp/finished.txt" 2>&1); rc=$?
check "a finished run exits 0" '[ "$rc" -eq 0 ]'
# medians: getppid 350, null ioctl 1,100 -> 3.14x
check "medians and ratio" 'grep -Eq "null ioctl \(GETMODULEVERSION\) +1,100 +getppid\(\) +350 +3\.14x" <<<"$out"'
check "switch overhead against the unloaded module" 'grep -Eq "loaded, no PMC +10,100 +\+1\.0%" <<<"$out"'
check "scale: the read at 8 vCPUs against 1" 'grep -Eq "raw PMCRW, CLOCK.PROF +1,000 +1,040 +1\.04x +met +0\.79x +met" <<<"$out"'
check "scale: the ping-pong beside 1,000 monitored processes" 'grep -Eq "1000 with a CLOCK.PROF PMC +10,200 +\+2\.0% +<= \+1% +NOT met +\+3\.0%" <<<"$out"'
check "scale: the ping-pong with the hook detached" 'grep -Eq "none, hook detached +9,900 +-1\.0%" <<<"$out"'
# (12,700 - 12,000) / 7 = 100 ns a counter against perf's 1,000 / 7 = 143
check "scale: per counter added to the ping-pong against perf" 'grep -Eq "hwpmc SCHED.SWITCH +12,000 +12,700 +100\.0 +< perf +met" <<<"$out"'
check "scale: per counter added, spreads that overlap are a tie" 'grep -Eq "hwpmc CLOCK.PROF +12,305 +12,305 +0\.0 +-1\.0\.\.1\.0 +< perf +tie" <<<"$out" && grep -Eq "perf task-clock +12,600 +12,604 +0\.5 +0\.0\.\.1\.0" <<<"$out"'
check "scale: allocation and read against the number of PMCs" 'grep -Eq "counter made, hwpmc +50\.0 +6\.0" <<<"$out" && grep -Eq "counter made, perf +- +9\.0" <<<"$out"'
check "scale: kernel memory per PMC against perf" 'grep -Eq "per counter, 16,384 of them +250 +1,700 +0\.15x +< perf +met" <<<"$out"'
check "scale: kernel memory per owner" 'grep -Eq "per owner .*1,024 of them +900" <<<"$out"'
# getppid: 2 x 500/600 = 1.67x together; CLOCK.PROF 2 x 1,000/2,000 = 1.00x,
# under 0.9 x 1.67
check "concurrent: two readers against one, against getppid's" 'grep -Eq "getppid\(\) +500 +600 +1\.67x" <<<"$out" && grep -Eq "raw PMCRW, CLOCK.PROF +1,000 +2,000 +1\.00x .* NOT met" <<<"$out"'
# 30,000 KiB over 1 M samples: 30.7 B a sample, within 50; 60,000: 61.4, not.
check "report memory per sample, synthetic flat within the goal" 'grep -Eq "flat synthetic +1,000,000 +30,000 +30\.7 .* met" <<<"$out"'
check "report memory per sample, synthetic -g over the goal" 'grep -Eq "\-g synthetic +1,000,000 +60,000 +61\.4 .* NOT met" <<<"$out"'
check "report memory per sample, recordings against perf" 'grep -Eq "flat \(recordings\) +500,000 +20,000 +41\.0 +102\.4" <<<"$out"'
# +5% against -c's +6% and -F's +4%; per sample 50,000 / 20 = 2,500 ns,
# 60,000 / 20 = 3,000 and 40,000 / 10 = 4,000
check "sample: overhead and cost per sample against perf" 'grep -Eq "10000 Hz +\+5\.00% +\+6\.00% +\+4\.00% +20 +0 +20 +10 +0 +2,500 +3,000 +4,000 +met +NOT met +met" <<<"$out"'
check "sample: drops with the job on both CPUs" 'grep -Eq "10000 Hz -g +40 +3 +NOT met" <<<"$out"'
check "read page within 100 instructions" 'grep -Eq "read page, SCHED.SWITCH +40 +raw PMCRW SCHED.SWITCH +900 +0\.04x +<= 100 ns +met" <<<"$out"'
check "read page over 100 instructions" 'grep -Eq "read page, TSC +130 .* NOT met" <<<"$out"'
check "read page against perf" 'grep -Eq "read page, SCHED.SWITCH vs perf +40 +perf read\(\) task-clock +1,300 +0\.03x" <<<"$out"'
exit $fail
