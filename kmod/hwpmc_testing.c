// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: test-only hooks, built only into the test flavor of the module
 * (HWPMC_TESTING=y), never into a release module.
 *
 *  test_warn=1           WARN once at load (proves the rig's log check)
 *  test_leak=1           leak 64 bytes at load (proves the rig's kmemleak
 *                        check on the debug kernel)
 *  test_attach_delay_ms  sleep this long in PMCATTACH between the
 *                        permission check and the link (exec_test races
 *                        a set-id exec into that window)
 *  test_log_busy=MASK    a log's lock reads as held by another CPU to a
 *                        sampler in hard interrupt context: 1, for its
 *                        samples (they go through the ring); 2, for its
 *                        drop reports (clockbusy_test)
 *  debugfs hwpmc-test/    the directory of these triggers and the
 *                        backends' (x86/test_hold.c: hold_perfctr)
 *  debugfs hwpmc-test/hold_cpu
 *                        write N (1-15000): the writer's CPU spins with
 *                        interrupts off until 0 is written (by another
 *                        CPU) or N ms passed, as a vCPU its hypervisor
 *                        descheduled would; read: the CPU held + 1, or 0
 *                        (clockread_test: reads do not wait for it)
 *  debugfs hwpmc-test/hold_gp
 *                        the same with preemption off and interrupts on:
 *                        no grace period ends, but IPIs are answered
 *                        (releasewait_test: no global lock is held
 *                        across a grace period; the kernel's own IPIs,
 *                        such as a TLB flush, are not held up with it)
 *  debugfs hwpmc-test/hooks
 *                        read: BIT(enum hwpmc_hook) of the hooks whose
 *                        probe the kernel's tracepoints hold now, read
 *                        from the tracepoints themselves (hooks_test;
 *                        a seq_file: an open file is read again by pread)
 *  debugfs hwpmc-test/switch_gate
 *                        read: "EVERY PREV NEXT CPUS", the switch gate's
 *                        counts and the online CPUs with a reason of
 *                        their own (switchgate_test: all 0 once every
 *                        PMC is gone)
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/bug.h>
#include <linux/cpu.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/slab.h>
#include <linux/mutex.h>
#include <linux/preempt.h>
#include <linux/seq_file.h>
#include <linux/timekeeping.h>

#include "hwpmc.h"

static bool test_warn;
module_param(test_warn, bool, 0444);
MODULE_PARM_DESC(test_warn, "Test only: WARN once at load, to prove the rig's kernel-log check");

static bool test_leak;
module_param(test_leak, bool, 0444);
MODULE_PARM_DESC(test_leak, "Test only: leak 64 bytes at load, to prove the rig's kmemleak check");
/* The leaked object's address, hidden from kmemleak's scan of this module. */
static unsigned long test_leak_cookie;

static unsigned int test_attach_delay_ms;
module_param(test_attach_delay_ms, uint, 0644);
MODULE_PARM_DESC(test_attach_delay_ms, "Test only: PMCATTACH sleeps this long between its permission check and the link");

/* PMCATTACH, between its permission check and the link (process context). */
void hwpmc_test_attach_window(void)
{
	unsigned int ms = READ_ONCE(test_attach_delay_ms);

	if (ms)
		msleep(ms);
}

static unsigned int test_log_busy;
module_param(test_log_busy, uint, 0644);
MODULE_PARM_DESC(test_log_busy, "Test only: a hard-IRQ sampler finds every log's lock held (1: for samples, 2: for drop reports)");

/* Any context: a hard-IRQ sampler's try of a log's lock for @what fails. */
bool hwpmc_test_log_busy(unsigned int what)
{
	return READ_ONCE(test_log_busy) & what;
}

static struct dentry *hwpmc_test_dir;

/* debugfs hwpmc-test/: the backends' test triggers go there too. */
struct dentry *hwpmc_testing_dir(void)
{
	return hwpmc_test_dir;
}

#define HOLD_CPU_MAX_MS	15000
static DEFINE_MUTEX(hwpmc_test_hold_lock);	/* one holder */
static int hwpmc_test_cpu_held;		/* the CPU held + 1, or 0 */
static bool hwpmc_test_cpu_release;

static int hold_cpu_get(void *data, u64 *val)
{
	*val = READ_ONCE(hwpmc_test_cpu_held);
	return 0;
}

/*
 * Hold this CPU until released or @val ms passed, one holder at a time:
 * with interrupts off if @irqs_off (nothing else runs here: no IPI is
 * answered, no timer fires), else with preemption off (no task switch,
 * so no grace period ends, but interrupts and IPIs are served).
 */
static int hold_set(u64 val, bool irqs_off)
{
	unsigned long flags = 0;
	u64 end;

	if (!val) {
		WRITE_ONCE(hwpmc_test_cpu_release, true);
		return 0;
	}
	if (val > HOLD_CPU_MAX_MS)
		return -EINVAL;
	if (!mutex_trylock(&hwpmc_test_hold_lock))
		return -EBUSY;
	WRITE_ONCE(hwpmc_test_cpu_release, false);
	preempt_disable();
	if (irqs_off)
		local_irq_save(flags);
	end = ktime_get_mono_fast_ns() + val * NSEC_PER_MSEC;
	WRITE_ONCE(hwpmc_test_cpu_held, smp_processor_id() + 1);
	while (!READ_ONCE(hwpmc_test_cpu_release) &&
	       ktime_get_mono_fast_ns() < end)
		cpu_relax();
	WRITE_ONCE(hwpmc_test_cpu_held, 0);
	if (irqs_off)
		local_irq_restore(flags);
	preempt_enable();
	mutex_unlock(&hwpmc_test_hold_lock);
	return 0;
}

static int hold_cpu_set(void *data, u64 val)
{
	return hold_set(val, true);
}

static int hold_gp_set(void *data, u64 val)
{
	return hold_set(val, false);
}

DEFINE_DEBUGFS_ATTRIBUTE(hold_cpu_fops, hold_cpu_get, hold_cpu_set,
			 "%llu\n");
DEFINE_DEBUGFS_ATTRIBUTE(hold_gp_fops, hold_cpu_get, hold_gp_set,
			 "%llu\n");

/* A seq_file, unlike a debugfs attribute, can be read again by pread(). */
static int hooks_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "0x%x\n", hwpmc_hooks_attached());
	return 0;
}

DEFINE_SHOW_ATTRIBUTE(hooks);

static int switch_gate_show(struct seq_file *m, void *unused)
{
	unsigned int cpu, here = 0;

	cpus_read_lock();
	for_each_online_cpu(cpu)
		if (READ_ONCE(per_cpu(hwpmc_switch_here, cpu).any))
			here++;
	cpus_read_unlock();
	seq_printf(m, "%d %d %d %u\n",
		   atomic_read(&hwpmc_switch_gate[HWPMC_GATE_EVERY]),
		   atomic_read(&hwpmc_switch_gate[HWPMC_GATE_PREV]),
		   atomic_read(&hwpmc_switch_gate[HWPMC_GATE_NEXT]), here);
	return 0;
}

DEFINE_SHOW_ATTRIBUTE(switch_gate);

int hwpmc_testing_init(void)
{
	WARN_ONCE(test_warn, "hwpmc: test_warn=1: deliberate warning for the rig self-test\n");
	if (test_leak)
		test_leak_cookie = ~(unsigned long)kmalloc(64, GFP_KERNEL);
	hwpmc_test_dir = debugfs_create_dir("hwpmc-test", NULL);
	debugfs_create_file_unsafe("hold_cpu", 0600, hwpmc_test_dir, NULL,
				   &hold_cpu_fops);
	debugfs_create_file_unsafe("hold_gp", 0600, hwpmc_test_dir, NULL,
				   &hold_gp_fops);
	debugfs_create_file("hooks", 0400, hwpmc_test_dir, NULL, &hooks_fops);
	debugfs_create_file("switch_gate", 0400, hwpmc_test_dir, NULL,
			    &switch_gate_fops);
	return 0;
}

void hwpmc_testing_fini(void)
{
	debugfs_remove_recursive(hwpmc_test_dir);
}
