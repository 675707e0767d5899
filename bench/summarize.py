#!/usr/bin/env python3
"""bench/summarize.py RESULTS [HEADER] — make bench's table.

Reads the lines bench/run-guest wrote ("PART VARIANT ROUND VALUE", ending
with "done"), takes the median of each (PART, VARIANT) over the rounds and
prints the tables: hwpmc and perf side by side, the ratios, and the
issue's goals.  Exits 1 (and prints nothing but the reason) if the run did
not finish: figures from a crashed or cut-short guest are never reported.
"""
import statistics
import sys


def load(path):
    with open(path) as f:
        lines = [l.split() for l in f if l.strip()]
    if not lines or lines[-1] != ["done"]:
        sys.exit("bench: %s does not end with 'done': the guest run did not "
                 "finish, so none of its figures are reported" % path)
    data = {}
    for fields in lines[:-1]:
        if len(fields) != 4 or fields[3] == "-":
            continue
        data.setdefault((fields[0], fields[1]), []).append(float(fields[3]))
    return {k: statistics.median(v) for k, v in data.items()}, data


def fmt(x, digits=0):
    return "-" if x is None else "{:,.{}f}".format(x, digits)


def ratio(a, b):
    return None if a is None or b in (None, 0) else a / b


def rtxt(r):
    return "-" if r is None else "%.2fx" % r


def pct(a, b):
    return None if a is None or b in (None, 0) else 100.0 * (a - b) / b


def ptxt(p):
    return "-" if p is None else "%+.1f%%" % p


def ptxt2(p):
    return "-" if p is None else "%+.2f%%" % p


def verdict(ok):
    return "-" if ok is None else ("met" if ok else "NOT met")


def table(title, head, rows):
    print("\n" + title)
    widths = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
    for r in [head, ["-" * w for w in widths]] + rows:
        print("  " + "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths))))


def per_round_added(raw, v):
    """(ns at 8 - ns at 1) / 7 for each round that has both, in round order."""
    one, eight = raw.get(("scale", "ppk1:" + v), []), raw.get(("scale", "ppk8:" + v), [])
    return [(b - a) / 7.0 for a, b in zip(one, eight)]


def added_verdict(h, p):
    """hwpmc's per-round costs per added counter against perf's: met when
    all of hwpmc's are below all of perf's, NOT met when all are above, a
    tie when the two spreads overlap (both the same cost within the
    run's resolution, e.g. both zero)."""
    if not h or not p:
        return "-"
    if max(h) < min(p):
        return "met"
    if min(h) > max(p):
        return "NOT met"
    return "tie"


def scale_counters(g, raw):
    """The ping-pong with 1 and 8 counters on both sides: per counter added,
    the median and the spread of the rounds' own figures."""
    pairs = (("SCHED.SWITCH", "hwpmc-SCHED.SWITCH", "perf-context-switches"),
             ("CLOCK.PROF", "hwpmc-CLOCK.PROF", "perf-task-clock"))
    rows = []
    for name, h, p in pairs:
        per = {}
        for tool, v in (("hwpmc", h), ("perf", p)):
            one, eight = g("scale", "ppk1:" + v), g("scale", "ppk8:" + v)
            per[tool] = per_round_added(raw, v)
            med = None if one is None or eight is None else (eight - one) / 7.0
            spread = ("%.1f..%.1f" % (min(per[tool]), max(per[tool]))
                      if len(per[tool]) > 1 else "")
            rows.append(["%s %s" % (tool, v.split("-", 1)[1]), fmt(one), fmt(eight),
                         fmt(med, 1), spread])
        rows[-2] += ["< perf", added_verdict(per["hwpmc"], per["perf"])]
        rows[-1] += ["", ""]
    if any(r[1] != "-" for r in rows):
        table("Counters on both sides of the ping-pong (ns per round trip)",
              ["counters", "1", "8", "per added", "rounds", "goal", ""], rows)


def scale_pmcs(g, keys):
    """Allocation, one read and kernel memory against the number of PMCs."""
    ns = sorted({int(v.rsplit(":", 1)[1]) for (part, v) in keys
                 if part == "scale" and v.startswith("pmcs:") and v.count(":") == 3})
    if not ns:
        return
    rows = []
    for what, label, scale, digits in (("alloc", "µs per counter made", 1e-3, 1),
                                       ("read", "ns per read of one", 1, 0)):
        for tool in ("hwpmc", "perf"):
            vals = [g("scale", "pmcs:%s:%s:%d" % (tool, what, n)) for n in ns]
            rows.append(["%s, %s" % (label, tool)] +
                         [fmt(None if v is None else v * scale, digits) for v in vals])
    table("Counters against their number (16 on each target process; hwpmc: 16 an owner)",
          ["what"] + [fmt(n) for n in ns], rows)
    big = ns[-1]
    hm, pm = g("scale", "pmcs:hwpmc:mem:%d" % big), g("scale", "pmcs:perf:mem:%d" % big)
    rows = [["per counter, %s of them" % fmt(big), fmt(hm), fmt(pm), rtxt(ratio(hm, pm)),
             "< perf", verdict(None if hm is None or pm is None else hm < pm)],
            ["left after closing them: Slab, VmallocUsed", fmt(g("scale", "pmcs:hwpmc:left")),
             fmt(g("scale", "pmcs:perf:left")), "", "", ""],
            ["left after closing them: Percpu", fmt(g("scale", "pmcs:hwpmc:leftpercpu")),
             fmt(g("scale", "pmcs:perf:leftpercpu")), "", "", ""]]
    owners = sorted({int(v.rsplit(":", 1)[1]) for (part, v) in keys
                     if part == "scale" and v.startswith("owners:mem:")})
    for k in owners:
        rows.append(["per owner (open of /dev/hwpmc), %s of them" % fmt(k),
                     fmt(g("scale", "owners:mem:%d" % k)), "-", "", "", ""])
    if owners:
        rows.append(["left after closing them: Slab, VmallocUsed",
                     fmt(g("scale", "owners:left")), "-", "", "", ""])
        rows.append(["left after closing them: Percpu",
                     fmt(g("scale", "owners:leftpercpu")), "-", "", "", ""])
    table("Kernel memory (bytes of /proc/meminfo's Slab, VmallocUsed and Percpu, in all)",
          ["what", "hwpmc", "perf", "ratio", "goal", ""], rows)


def concurrent(g):
    """Two readers on two CPUs at once against one: what they get together."""
    def speedup(v):
        one, a, b = (g("concurrent", "%s:%s" % (k, v)) for k in ("one", "two-a", "two-b"))
        if None in (one, a, b) or not a or not b:
            return one, None, None
        return one, (a + b) / 2.0, (1.0 / a + 1.0 / b) * one
    base = speedup("getppid")[2]
    rows = []
    for name, v in (("getppid()", "getppid"), ("raw PMCRW, SCHED.SWITCH", "pmcrw:SCHED.SWITCH"),
                    ("raw PMCRW, CLOCK.PROF", "pmcrw:CLOCK.PROF"),
                    ("perf read() task-clock", "perf:task-clock")):
        one, two, sp = speedup(v)
        hw = v.startswith("pmcrw:")
        ok = None if not hw or sp is None or base is None else sp >= 0.9 * base
        rows.append([name, fmt(one), fmt(two), rtxt(sp),
                     ">= 0.9x getppid's" if hw else "", verdict(ok) if hw else ""])
    table("Two readers at once against one (2 vCPUs in parallel, multi-threaded TCG: "
          "host ns, compare within the run)",
          ["what", "one", "each of two", "together", "goal", ""], rows)


def main():
    med, raw = load(sys.argv[1])
    if len(sys.argv) > 2:
        print(sys.argv[2])
    g = lambda part, v: med.get((part, v))
    rounds = max((len(v) for v in raw.values()), default=0)
    print("medians of %d interleaved rounds; times in guest nanoseconds" % rounds)

    if any(k[0] == "read" for k in med):
        pp = g("read", "getppid")
        perf_tc = g("read", "perf:task-clock")
        rows = []
        def row(name, val, refname, ref, goal=None, absgoal=None):
            r = ratio(val, ref)
            if absgoal is not None:
                # Under -icount shift=0 a guest ns is one instruction.
                rows.append([name, fmt(val), refname, fmt(ref), rtxt(r),
                             "<= %d ns" % absgoal,
                             verdict(None if val is None else val <= absgoal)])
                return
            rows.append([name, fmt(val), refname, fmt(ref), rtxt(r),
                         "<= %.2fx" % goal if goal else "",
                         verdict(None if goal is None or r is None else r <= goal)])
        row("null ioctl (GETMODULEVERSION)", g("read", "null-ioctl"), "getppid()", pp, 1.6)
        if g("read", "enotty-ioctl") is not None:
            # The floor of any ioctl into the module: VFS and the syscall.
            row("ioctl floor (ENOTTY at once)", g("read", "enotty-ioctl"), "getppid()", pp)
        for ev in ("SCHED.SWITCH", "CLOCK.PROF", "PAGE_FAULT.ALL", "TSC"):
            row("raw PMCRW, " + ev, g("read", "pmcrw:" + ev),
                "perf read() task-clock", perf_tc, 0.6)
        for ev in ("SCHED.SWITCH", "CLOCK.PROF", "PAGE_FAULT.ALL", "TSC"):
            row("pmc_read(), " + ev, g("read", "pmc_read:" + ev),
                "raw PMCRW " + ev, g("read", "pmcrw:" + ev), 1.05)
        # Every class's system call as cheap as SCHED.SWITCH's (pmc_read()
        # of SCHED.SWITCH is a read-page read now: the ioctls are compared).
        for ev in ("CLOCK.PROF", "PAGE_FAULT.ALL", "TSC"):
            row("raw PMCRW %s vs SCHED.SWITCH" % ev, g("read", "pmcrw:" + ev),
                "raw PMCRW SCHED.SWITCH", g("read", "pmcrw:SCHED.SWITCH"), 1.05)
        # The read page (no system call): <= 100 instructions per read.
        for ev in ("SCHED.SWITCH", "PAGE_FAULT.ALL", "TSC"):
            if g("read", "page:" + ev) is None:
                continue
            row("read page, " + ev, g("read", "page:" + ev),
                "raw PMCRW " + ev, g("read", "pmcrw:" + ev), absgoal=100)
            row("read page, %s vs perf" % ev, g("read", "page:" + ev),
                "perf read() task-clock", perf_tc)
        row("perf read() context-switches", g("read", "perf:context-switches"),
            "getppid()", pp)
        table("Read path (ns per read)",
              ["what", "hwpmc", "reference", "ref", "ratio", "goal", ""], rows)

    if any(k[0] == "switch" for k in med):
        base = g("switch", "unloaded")
        rows = []
        for v, name, goal in (("unloaded", "module not loaded", None),
                              ("loaded-idle", "loaded, no PMC", 1.0),
                              ("hwpmc-SCHED.SWITCH", "hwpmc-stat -e SCHED.SWITCH", 5.0),
                              ("perf-context-switches", "perf stat -e context-switches", None)):
            val = g("switch", v)
            p = pct(val, base) if v != "unloaded" else None
            rows.append([name, fmt(val), ptxt(p), "<= %+.0f%%" % goal if goal else "",
                         verdict(None if goal is None or p is None else p <= goal)])
        hw = pct(g("switch", "hwpmc-SCHED.SWITCH"), base)
        pf = pct(g("switch", "perf-context-switches"), base)
        rows.append(["TC PMC below perf's overhead", "", "", "",
                     verdict(None if hw is None or pf is None else hw < pf)])
        table("Context switches (pipe ping-pong, ns per round trip)",
              ["what", "ns", "vs unloaded", "goal", ""], rows)

    if any(k[0] == "sample" for k in med):
        bare = g("sample", "bare")
        rows = []
        for hz in ("1000", "4000", "10000"):
            for cg in ("", "-g"):
                h, p, c = "hwpmc-" + hz + cg, "perf-" + hz + cg, "perfc-" + hz + cg
                ho, po = pct(g("sample", h), bare), pct(g("sample", p), bare)
                co = pct(g("sample", c), bare)
                hs, hd = g("samples", h), g("dropped", h)
                ps, pl, cs = g("samples", p), g("dropped", p), g("samples", c)
                # What one sample costs: the job's extra time over the
                # samples taken (perf -F takes fewer than the rate asks;
                # perf -c, a fixed period, the rate's).
                hn = ratio(None if ho is None else g("sample", h) - bare, hs)
                pn = ratio(None if po is None else g("sample", p) - bare, ps)
                cn = ratio(None if co is None else g("sample", c) - bare, cs)
                rows.append([hz + " Hz" + (" -g" if cg else ""), ptxt2(ho), ptxt2(co), ptxt2(po),
                             fmt(hs), fmt(hd), fmt(cs), fmt(ps), fmt(pl), fmt(hn), fmt(cn),
                             fmt(pn),
                             verdict(None if ho is None or co is None else ho <= co),
                             verdict(None if ho is None or po is None else ho <= po),
                             verdict(None if hd is None else hd == 0)])
        table("Sampling a CPU-bound job pinned to one CPU (CLOCK.PROF vs perf record"
              " -c, the same rate, and -F)",
              ["rate", "hwpmc", "perf -c", "perf -F", "samples", "dropped", "-c samples",
               "-F samples", "perf lost", "ns/sample", "-c ns/s", "-F ns/s", "<= perf -c",
               "<= perf -F", "no drops"], rows)

    if any(k == ("samples", "hwpmc-10000-g-2cpu") for k in med):
        hs, hd = g("samples", "hwpmc-10000-g-2cpu"), g("dropped", "hwpmc-10000-g-2cpu")
        table("Drops with a job on both CPUs (hwpmc-record -F 10000 -g)",
              ["rate", "samples", "dropped", "no drops"],
              [["10000 Hz -g", fmt(hs), fmt(hd), verdict(None if hd is None else hd == 0)]])

    if any(k[0] == "concurrent" for k in med):
        concurrent(g)

    if any(k[0] == "report" for k in med):
        hs, ps = g("reportsamples", "hwpmc"), g("reportsamples", "perf")
        rows = []
        def rate(n, ns):
            return None if n is None or ns in (None, 0) else n / (ns / 1e9)
        for name, h, p, goal in (("flat", "hwpmc-flat", "perf-flat", 5e6),
                                 ("-g", "hwpmc-g", "perf-g", None),
                                 ("--folded", "hwpmc-folded", None, None)):
            hr = rate(hs, g("report", h))
            pr = rate(ps, g("report", p)) if p else None
            r = ratio(hr, pr)
            ok = None
            if hr is not None and (goal or pr):
                ok = (goal is None or hr >= goal) and (pr is None or r >= 3.0)
            rows.append([name, fmt(hr), fmt(pr), rtxt(r),
                         (">= 5M/s, " if goal else "") + (">= 3x perf" if p else ""),
                         verdict(ok)])
        table("Report speed (samples per second; %s hwpmc and %s perf samples, 10 kHz -g)"
              % (fmt(hs), fmt(ps)),
              ["report", "hwpmc", "perf report --stdio", "ratio", "goal", ""], rows)

    if any(k[0] == "scale" for k in med):
        cpus = sorted({int(v.split(":", 1)[0][len("read-"):])
                       for (part, v) in med if part == "scale" and v.startswith("read-")})
        rows = []
        for ev in ("SCHED.SWITCH", "CLOCK.PROF", "PAGE_FAULT.ALL", "TSC"):
            vals = [g("scale", "read-%d:pmcrw:%s" % (c, ev)) for c in cpus]
            first, last = (vals[0], vals[-1]) if vals else (None, None)
            perf = g("scale", "read-%d:perf:task-clock" % cpus[-1]) if cpus else None
            r, rp = ratio(last, first), ratio(last, perf)
            rows.append(["raw PMCRW, " + ev] + [fmt(v) for v in vals] +
                        [rtxt(r), verdict(None if r is None else r <= 1.05),
                         rtxt(rp), verdict(None if rp is None else rp <= 1.0)])
        vals = [g("scale", "read-%d:perf:task-clock" % c) for c in cpus]
        r = ratio(vals[-1], vals[0]) if vals else None
        rows.append(["perf read() task-clock"] + [fmt(v) for v in vals] +
                    [rtxt(r), "", "", ""])
        table("Reads against the machine's size (ns per read, by vCPUs)",
              ["what"] + ["%d CPU%s" % (c, "" if c == 1 else "s") for c in cpus] +
              ["%d vs %d" % (cpus[-1], cpus[0]) if cpus else "ratio", "<= 1.05x",
               "vs perf", "<= 1.00x"], rows)
        # "none": no PMC, the switch hook still attached (it lingers 5 s
        # after the reads' PMCs); "hook detached": no PMC for 6 s, so no
        # probe on the tracepoint (informational: the goal is against none).
        base = g("scale", "pp-mon0")
        idle = g("scale", "pp-idle")
        rows = [["none", fmt(base), "", "", "", ptxt(pct(base, idle)) if idle else ""]]
        if idle:
            rows.insert(0, ["none, hook detached", fmt(idle), ptxt(pct(idle, base)), "",
                            "", ""])
        for ev in ("SCHED.SWITCH", "CLOCK.PROF"):
            for n in ("1", "1000"):
                val = g("scale", "pp-mon%s:%s" % (n, ev))
                p = pct(val, base)
                rows.append(["%s with a %s PMC" % (n, ev), fmt(val), ptxt(p), "<= +1%",
                             verdict(None if p is None else p <= 1.0),
                             ptxt(pct(val, idle)) if idle else ""])
        table("Unmonitored ping-pong while other processes are monitored (ns per round trip)",
              ["monitored elsewhere", "ns", "vs none", "goal", "",
               "vs detached" if idle else ""], rows)
        scale_counters(g, raw)
        scale_pmcs(g, med)

    if any(k[0] == "report" for k in med):
        hs, ps = g("reportsamples", "hwpmc"), g("reportsamples", "perf")
        # Peak memory per sample (bench_peak's KiB over the samples): the
        # recordings, then the synthetic logs at each size.
        def per_sample(kb, n):
            return None if kb is None or not n else kb * 1024.0 / n
        rows = []
        for name, h, p in (("flat", "hwpmc-flat", "perf-flat"), ("-g", "hwpmc-g", "perf-g"),
                           ("--folded", "hwpmc-folded", None)):
            hb = per_sample(g("reportmem", h), hs)
            pb = per_sample(g("reportmem", p), ps) if p else None
            rows.append([name + " (recordings)", fmt(hs), fmt(g("reportmem", h)), fmt(hb, 1),
                         fmt(pb, 1), fmt(g("report", h) / hs if hs and g("report", h) else None),
                         "", ""])
        sizes = sorted({int(k[1][len("synth-"):]) for k in med
                        if k[0] == "reportsamples" and k[1].startswith("synth-")})
        for n in sizes:
            for mode in ("flat", "g"):
                v = "synth-%d-%s" % (n, mode)
                b = per_sample(g("reportmem", v), n)
                ns = g("report", v)
                big = n >= 1000000
                rows.append(["%s synthetic" % ("flat" if mode == "flat" else "-g"), fmt(n),
                             fmt(g("reportmem", v)), fmt(b, 1), "-",
                             fmt(ns / n if ns else None), "<= 50 B" if big else "",
                             verdict(None if b is None or not big else b <= 50)])
        table("Report peak memory (bytes per sample: peak RSS / samples) and time per sample",
              ["report", "samples", "peak KiB", "hwpmc B", "perf B", "ns/sample", "goal", ""],
              rows)


main()
