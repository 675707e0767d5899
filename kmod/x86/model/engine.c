// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: the PMU model's engine, for tests only: counting, overflow and
 * the NMIs it raises, the debugfs files, and setting the model up.  The
 * registers are regs.c's.
 *
 * Counting.  Events are abstract: event code, umask, EDGE, INV, CMASK,
 * ANY, HostOnly/GuestOnly are stored but ignored.  An event is either a
 * user-mode event or a kernel-mode one.  A programmable counter counts an
 * event when its event select has EN and USR (user-mode event) or OS
 * (kernel-mode event) and its GLOBAL_CTRL bit is set; an Intel fixed
 * counter when its nibble has USR or OS and GLOBAL_CTRL bit 32+i is set.
 *
 * Overflow.  A counter that crosses 2^48 wraps to the low 48 bits and sets
 * its GLOBAL_STATUS bit (Intel: i for PMCi, 32+i for fixed i; AMD: i).  If
 * a status bit became set by this advance (it was clear before) and the
 * counter's interrupt is enabled (event select INT, bit 20; fixed nibble
 * PMI, 0x8), the model raises one real NMI on this CPU through the local
 * APIC once all counters have moved: several overflows in one advance give
 * one NMI with several status bits.  A counter that wraps while its status
 * bit is still set raises no NMI.  The model has its own LVTPC per CPU
 * (the write_lvtpc op; the real one is left alone), masked at power-on:
 * an overflow raises its NMI only while the LVTPC says NMI, unmasked, and
 * delivery masks it (as the CPU does), so that the PMI handler must
 * unmask it for the next one; an interrupt refused counts in
 * "pmis_masked".  The NMI is a fixed-destination NMI IPI to this CPU (apic->send_IPI_mask(); not
 * send_IPI_self(), whose x2APIC form, the SELF IPI register, cannot carry
 * NMI delivery).  The advance waits (up to 100 ms) until the NMI has been
 * taken, so when a write to "advance" returns, every NMI handler has run.
 * A user of the model must have an NMI_LOCAL handler that claims these
 * NMIs, or the kernel reports "NMI received for unknown reason".
 *
 * debugfs: /sys/kernel/debug/hwpmc-model/, present while a model is
 * active.
 *   advance   (write) "N", "usr N" or "os N", N decimal, 0 < N < 2^47:
 *             every counter enabled on the writing CPU for user-mode
 *             ("N", "usr N") or kernel-mode ("os N") events advances by N,
 *             with interrupts disabled on that CPU.  Pin the writer
 *             (taskset) to choose the CPU.  A suffix " xK" (1 <= K <= 8)
 *             makes it K such advances in a row, each with its NMI, with
 *             preemption disabled between them: the writer is not
 *             switched out in between, so nothing folds a process PMC's
 *             counter between them (hwpmc does at a switch-out), which K
 *             separate writes cannot promise.  "status 0xBITS" instead sets
 *             those global status bits of the writing CPU, as a write to
 *             the STATUS_SET MSR does (no NMI): an overflow that hwpmc did
 *             not see.  "nmi" sends this CPU an NMI that is no PMI (as
 *             another NMI user would), which the model claims itself and
 *             counts in "nmis_foreign".  Bad input: -EINVAL.
 *   state     (read) a line "model model-intel" (or model-amd), then for
 *             each online CPU a line "cpu N" and one line per register,
 *             "name 0x%016llx" (ctr0..ctrN,
 *             sel0..selN, Intel also fixed0..2 and fixed_ctrl,
 *             global_ctrl, global_status (not "amd-ext", "amd-legacy"),
 *             lvtpc), "cr4_pce N" (the CPU's real CR4.PCE, 0 or 1, when
 *             the state was read: whether user RDPMC is allowed on it),
 *             then "advances N",
 *             "overflows N", "nmis_sent N", "nmis_seen N",
 *             "nmis_lost N" (an NMI that did not arrive in 100 ms) and
 *             "pmis_masked N" (an overflow's interrupt that the LVTPC
 *             refused) and "nmis_foreign N".
 *   perf_rdpmc (read, write) what hwpmc reads as perf's user-RDPMC
 *             setting (/sys/devices/cpu/rdpmc) while the model is active:
 *             "real" (the default: the real attribute), "0", "1", "2",
 *             or "fail" (reading it fails with EIO).  Bad input: -EINVAL.
 *   selftest  (read) checks the model on the reading CPU through its ops
 *             table, with that CPU's register file saved and restored and
 *             a temporary NMI handler of its own (registered first, it
 *             claims and clears the selftest's overflows), and prints one
 *             "FAIL what: got X want Y" line per failed check, then
 *             "ok N checks (model-intel, cpu C)" or "FAIL F of N checks
 *             (...)".  Run it while no hardware PMC is allocated.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": pmu model: " fmt

#include <linux/bits.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <asm/apic.h>
#include <asm/irq_vectors.h>
#include <asm/nmi.h>
#include <asm/processor.h>
#include <asm/tlbflush.h>

#include "model.h"

DEFINE_PER_CPU(struct model_stats, model_stats);
/* Serializes hwpmc_pmu_model_init() and hwpmc_pmu_model_fini(). */
static DEFINE_MUTEX(model_mutex);
static struct dentry *model_dir;

/*
 * Counting.
 */

/*
 * Add @n to *@ctr.  Returns the counter's status bit if it wrapped and
 * that bit newly became set (the caller sets the bits), else 0.
 */
static u64 model_add(u64 *ctr, u64 n, u64 status, u64 bit)
{
	u64 old = *ctr;

	*ctr = (old + n) & MODEL_MASK;
	if (*ctr >= old)
		return 0;
	this_cpu_inc(model_stats.overflows);
	return status & bit ? 0 : bit;
}

/*
 * Advance the counters of this CPU that count @os (kernel-mode) or user
 * events by @n.  Sets the status bits of the counters that wrapped and
 * returns those that newly became set with their interrupt enabled.
 * Interrupts are disabled; n < 2^47, so a counter wraps once at most.
 */
static u64 model_count(struct model_regs *r, enum model_kind kind, u64 n,
		       bool os)
{
	u64 mode = os ? HWPMC_EVSEL_OS : HWPMC_EVSEL_USR;
	u8 fmode = os ? HWPMC_FIXED_OS : HWPMC_FIXED_USR;
	int ngp = model_ngp(kind);
	u64 newly = 0, pmi = 0, bit;
	int i;

	for (i = 0; i < ngp; i++) {
		bit = BIT_ULL(i);
		if (!(r->sel[i] & HWPMC_EVSEL_EN) || !(r->sel[i] & mode) ||
		    !(r->global_ctrl & bit))
			continue;
		bit = model_add(&r->ctr[i], n, r->global_status, bit);
		newly |= bit;
		if (r->sel[i] & HWPMC_EVSEL_INT)
			pmi |= bit;
	}
	for (i = 0; kind == MODEL_INTEL && i < INTEL_NFIXED; i++) {
		u8 nib = (r->fixed_ctrl >> (4 * i)) & 0xf;

		bit = BIT_ULL(32 + i);
		if (!(nib & fmode) || !(r->global_ctrl & bit))
			continue;
		bit = model_add(&r->fixed[i], n, r->global_status, bit);
		newly |= bit;
		if (nib & HWPMC_FIXED_PMI)
			pmi |= bit;
	}
	/* AMD before PerfMonV2 keeps no status: every wrap interrupts. */
	if (kind != MODEL_AMD || model_amd_v2())
		r->global_status |= newly;
	return pmi;
}

/*
 * NMI context: no locks, no allocation.  Counts the NMIs this CPU takes,
 * so that an advance can wait for its own; never claims one.
 */
static int model_nmi(unsigned int type, struct pt_regs *regs)
{
	struct model_stats *s = this_cpu_ptr(&model_stats);

	WRITE_ONCE(s->nmis_seen, s->nmis_seen + 1);
	if (READ_ONCE(s->foreign_pending)) {
		/* Another NMI user's: claimed here, so none is unknown. */
		WRITE_ONCE(s->foreign_pending, false);
		return NMI_HANDLED;
	}
	return NMI_DONE;
}

/* IRQs off: wait until the NMI sent after nmis_seen was @seen arrives. */
static void model_wait_nmi(struct model_stats *s, unsigned long seen)
{
	int i;

	for (i = 0; i < MODEL_NMI_WAIT_US; i++) {
		if (READ_ONCE(s->nmis_seen) != seen)
			return;
		udelay(1);
	}
	s->nmis_lost++;
}

/*
 * An NMI that is not a PMI, as another NMI user (a watchdog, an IPI) sends
 * one: the model claims it itself; the PMU's registers do not change.
 */
static void model_foreign_nmi_local(void)
{
	struct model_stats *s;
	unsigned long flags, seen;

	local_irq_save(flags);
	s = this_cpu_ptr(&model_stats);
	seen = READ_ONCE(s->nmis_seen);
	s->nmis_foreign++;
	WRITE_ONCE(s->foreign_pending, true);
	apic->send_IPI_mask(cpumask_of(smp_processor_id()), NMI_VECTOR);
	model_wait_nmi(s, seen);
	local_irq_restore(flags);
}

/*
 * Advance this CPU's counters (see model_count()) and raise the NMI that
 * any new overflow with interrupt enabled calls for, then wait until it
 * has been taken.  Any context but NMI.
 */
void model_advance_local(u64 n, bool os)
{
	struct model_regs *r;
	struct model_stats *s;
	unsigned long flags, seen;

	local_irq_save(flags);
	s = this_cpu_ptr(&model_stats);
	r = this_cpu_ptr(&model_regs);
	s->advances++;
	if (model_count(r, READ_ONCE(model_kind), n, os)) {
		if (READ_ONCE(r->lvtpc) != APIC_DM_NMI) {
			/* Masked, or not NMI delivery: the PMI is lost. */
			s->pmis_masked++;
			local_irq_restore(flags);
			return;
		}
		/* Delivery masks the entry; the handler unmasks it. */
		WRITE_ONCE(r->lvtpc, APIC_DM_NMI | APIC_LVT_MASKED);
		seen = READ_ONCE(s->nmis_seen);
		s->nmis_sent++;
		apic->send_IPI_mask(cpumask_of(smp_processor_id()), NMI_VECTOR);
		model_wait_nmi(s, seen);
	}
	local_irq_restore(flags);
}

/*
 * "N", "usr N" or "os N" with 0 < N < 2^47, optionally followed by " xK"
 * with 1 <= K <= MODEL_ADVANCE_TIMES (K advances; 1 without it); 0 or
 * -EINVAL.  @buf is modified.
 */
int model_parse_advance(char *buf, u64 *n, bool *os, unsigned int *times)
{
	char *p = strim(buf), *x = strchr(p, 'x');

	*os = false;
	*times = 1;
	if (x) {
		if (x == p || x[-1] != ' ' || kstrtouint(x + 1, 10, times) ||
		    !*times || *times > MODEL_ADVANCE_TIMES)
			return -EINVAL;
		*x = '\0';
		p = strim(p);
	}
	if (!strncmp(p, "os ", 3)) {
		*os = true;
		p += 3;
	} else if (!strncmp(p, "usr ", 4)) {
		p += 4;
	}
	if (kstrtou64(skip_spaces(p), 10, n) || !*n || *n >= MODEL_ADVANCE_MAX)
		return -EINVAL;
	return 0;
}

/*
 * debugfs: advance.
 */

static ssize_t model_advance_write(struct file *file, const char __user *ubuf,
				   size_t len, loff_t *ppos)
{
	unsigned int times;
	char buf[32];
	bool os;
	u64 n;

	if (!len || len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (!strncmp(buf, "status ", 7)) {
		const struct hwpmc_pmu_ops *ops = model_ops_of(READ_ONCE(model_kind));
		u32 msr = READ_ONCE(model_kind) == MODEL_AMD ?
			  MODEL_MSR_AMD_STATUS_SET : MODEL_MSR_IA32_STATUS_SET;
		unsigned long flags;
		int err;

		if (kstrtou64(strim(buf + 7), 16, &n))
			return -EINVAL;
		local_irq_save(flags);
		err = ops->write_msr(msr, n);
		local_irq_restore(flags);
		return err ? err : len;
	}
	if (!strcmp(strim(buf), "nmi")) {
		model_foreign_nmi_local();
		return len;
	}
	if (model_parse_advance(buf, &n, &os, &times))
		return -EINVAL;
	/* " xK": no context switch (no fold) between the advances. */
	preempt_disable();
	while (times--)
		model_advance_local(n, os);
	preempt_enable();
	return len;
}

static const struct file_operations model_advance_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= model_advance_write,
	.llseek	= noop_llseek,
};

/*
 * debugfs: perf_rdpmc.
 */

/* -ENOENT: the real attribute; else -errno or the setting; model_mutex. */
static int model_perf_rdpmc = -ENOENT;

int hwpmc_pmu_model_perf_rdpmc(int *val)
{
	int v;

	mutex_lock(&model_mutex);
	v = model_perf_rdpmc;
	mutex_unlock(&model_mutex);
	if (v < 0)
		return v;
	*val = v;
	return 0;
}

static ssize_t model_perf_rdpmc_write(struct file *file,
				      const char __user *ubuf, size_t len,
				      loff_t *ppos)
{
	char buf[8], *p;
	int v;

	if (!len || len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	p = strim(buf);
	if (!strcmp(p, "real"))
		v = -ENOENT;
	else if (!strcmp(p, "fail"))
		v = -EIO;
	else if (kstrtoint(p, 10, &v) || v < 0 || v > 2)
		return -EINVAL;
	mutex_lock(&model_mutex);
	model_perf_rdpmc = v;
	mutex_unlock(&model_mutex);
	return len;
}

static ssize_t model_perf_rdpmc_read(struct file *file, char __user *ubuf,
				     size_t len, loff_t *ppos)
{
	char buf[8];
	int v, n;

	mutex_lock(&model_mutex);
	v = model_perf_rdpmc;
	mutex_unlock(&model_mutex);
	if (v == -ENOENT)
		n = scnprintf(buf, sizeof(buf), "real\n");
	else if (v < 0)
		n = scnprintf(buf, sizeof(buf), "fail\n");
	else
		n = scnprintf(buf, sizeof(buf), "%d\n", v);
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations model_perf_rdpmc_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.read	= model_perf_rdpmc_read,
	.write	= model_perf_rdpmc_write,
	.llseek	= default_llseek,
};

/*
 * debugfs: state.
 */

struct model_snapshot {
	struct model_regs regs;
	struct model_stats stats;
	bool pce;
};

/* IPI: copy this CPU's registers and statistics, and its CR4.PCE. */
static void model_snapshot_local(void *arg)
{
	struct model_snapshot *snap = arg;

	snap->regs = *this_cpu_ptr(&model_regs);
	snap->stats = *this_cpu_ptr(&model_stats);
	snap->pce = !!(__read_cr4() & X86_CR4_PCE);
}

static int model_state_show(struct seq_file *m, void *unused)
{
	enum model_kind kind = READ_ONCE(model_kind);
	int ngp = model_ngp(kind);
	struct model_snapshot snap;
	int cpu, i;

	seq_printf(m, "model %s\n", model_ops_of(kind)->name);
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		if (smp_call_function_single(cpu, model_snapshot_local, &snap,
					     1))
			continue;
		seq_printf(m, "cpu %d\n", cpu);
		for (i = 0; i < ngp; i++)
			seq_printf(m, "ctr%d 0x%016llx\n", i, snap.regs.ctr[i]);
		for (i = 0; i < ngp; i++)
			seq_printf(m, "sel%d 0x%016llx\n", i, snap.regs.sel[i]);
		for (i = 0; kind == MODEL_INTEL && i < INTEL_NFIXED; i++)
			seq_printf(m, "fixed%d 0x%016llx\n", i,
				   snap.regs.fixed[i]);
		if (kind == MODEL_INTEL)
			seq_printf(m, "fixed_ctrl 0x%016llx\n",
				   snap.regs.fixed_ctrl);
		if (kind != MODEL_AMD || model_amd_v2()) {
			seq_printf(m, "global_ctrl 0x%016llx\n",
				   snap.regs.global_ctrl);
			seq_printf(m, "global_status 0x%016llx\n",
				   snap.regs.global_status);
		}
		seq_printf(m, "lvtpc 0x%016x\n", snap.regs.lvtpc);
		seq_printf(m, "cr4_pce %d\n", snap.pce);
		seq_printf(m, "advances %lu\noverflows %lu\n",
			   snap.stats.advances, snap.stats.overflows);
		seq_printf(m, "nmis_sent %lu\nnmis_seen %lu\nnmis_lost %lu\n",
			   snap.stats.nmis_sent, snap.stats.nmis_seen,
			   snap.stats.nmis_lost);
		seq_printf(m, "pmis_masked %lu\nnmis_foreign %lu\n",
			   snap.stats.pmis_masked, snap.stats.nmis_foreign);
	}
	cpus_read_unlock();
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(model_state);

/*
 * Setting up and tearing down.
 */

/*
 * The model @which ("intel", "intel-nofw", "amd", "amd-ext" or
 * "amd-legacy"), with every CPU's registers at their
 * power-on values; NULL for another name, or if another model is active.
 * Calling it again for the active model returns the same table and
 * changes nothing.  Process context.
 */
const struct hwpmc_pmu_ops *hwpmc_pmu_model_init(const char *which)
{
	const struct hwpmc_pmu_ops *ops = NULL;
	enum model_amd_layout amd = AMD_V2;
	enum model_kind kind;
	int cpu;

	if (!which)
		return NULL;
	if (!strcmp(which, "intel") || !strcmp(which, "intel-nofw")) {
		kind = MODEL_INTEL;
	} else if (!strcmp(which, "amd")) {
		kind = MODEL_AMD;
	} else if (!strcmp(which, "amd-ext")) {
		kind = MODEL_AMD;
		amd = AMD_EXT;
	} else if (!strcmp(which, "amd-legacy")) {
		kind = MODEL_AMD;
		amd = AMD_LEGACY;
	} else {
		return NULL;
	}

	mutex_lock(&model_mutex);
	if (model_kind != MODEL_NONE) {
		if (model_kind == kind &&
		    (kind != MODEL_AMD || READ_ONCE(model_amd) == amd))
			ops = model_ops_of(kind);
		else
			pr_err("%s is active, cannot start model-%s\n",
			       model_ops_of(model_kind)->name, which);
		goto out;
	}
	model_perf_rdpmc = -ENOENT;
	/* Nobody uses the registers before model_kind is set. */
	WRITE_ONCE(model_fw, strcmp(which, "intel-nofw") != 0);
	WRITE_ONCE(model_amd, amd);
	for_each_possible_cpu(cpu) {
		model_reset(per_cpu_ptr(&model_regs, cpu), kind);
		memset(per_cpu_ptr(&model_stats, cpu), 0,
		       sizeof(struct model_stats));
	}
	if (register_nmi_handler(NMI_LOCAL, model_nmi, 0, "hwpmc_model"))
		goto out;
	WRITE_ONCE(model_kind, kind);
	ops = model_ops_of(kind);

	model_dir = debugfs_create_dir("hwpmc-model", NULL);
	debugfs_create_file("advance", 0200, model_dir, NULL,
			    &model_advance_fops);
	debugfs_create_file("state", 0444, model_dir, NULL, &model_state_fops);
	debugfs_create_file("perf_rdpmc", 0600, model_dir, NULL,
			    &model_perf_rdpmc_fops);
	debugfs_create_file("selftest", 0444, model_dir, NULL,
			    &model_selftest_fops);
	pr_info("%s active\n", ops->name);
out:
	mutex_unlock(&model_mutex);
	return ops;
}

/*
 * Remove the debugfs files and the NMI handler; the model must no longer
 * be in use.  Does nothing if no model is active.  Process context.
 */
void hwpmc_pmu_model_fini(void)
{
	mutex_lock(&model_mutex);
	if (model_kind != MODEL_NONE) {
		debugfs_remove_recursive(model_dir);
		model_dir = NULL;
		unregister_nmi_handler(NMI_LOCAL, "hwpmc_model");
		WRITE_ONCE(model_kind, MODEL_NONE);
	}
	mutex_unlock(&model_mutex);
}

