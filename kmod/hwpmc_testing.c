// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: test-only hooks, built only into the test flavor of the module
 * (HWPMC_TESTING=y), never into a release module.
 *
 *  test_warn=1           WARN once at load (proves the rig's log check)
 *  test_attach_delay_ms  sleep this long in PMCATTACH between the
 *                        permission check and the link (exec_test races
 *                        a set-id exec into that window)
 *  debugfs hwpmc-test/hold_perfctr
 *                        write 1: take counter 0 through the kernel's
 *                        reservation protocol, as perf (or the NMI
 *                        watchdog) would; write 0: give it back
 *  debugfs hwpmc-test/hold_cpu
 *                        write N (1-15000): the writer's CPU spins with
 *                        interrupts off until 0 is written (by another
 *                        CPU) or N ms passed, as a vCPU its hypervisor
 *                        descheduled would; read: the CPU held + 1, or 0
 *                        (clockread_test: reads do not wait for it)
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/bug.h>
#include <linux/debugfs.h>
#include <linux/mutex.h>
#include <linux/delay.h>
#include <linux/timekeeping.h>
#include <asm/nmi.h>

#include "hwpmc.h"
#include "x86/x86.h"

static bool test_warn;
module_param(test_warn, bool, 0444);
MODULE_PARM_DESC(test_warn, "Test only: WARN once at load, to prove the rig's kernel-log check");

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

static struct dentry *hwpmc_test_dir;
static bool hwpmc_test_holding;
static DEFINE_MUTEX(hwpmc_test_lock);

static int hold_get(void *data, u64 *val)
{
	*val = hwpmc_test_holding;
	return 0;
}

static int hold_set(void *data, u64 val)
{
	int err = 0;

	mutex_lock(&hwpmc_test_lock);
	if (val && !hwpmc_test_holding) {
		if (!reserve_perfctr_nmi(hwpmc_x86_perfctr_msr(0))) {
			err = -EBUSY;
		} else if (!reserve_evntsel_nmi(hwpmc_x86_evsel_msr(0))) {
			release_perfctr_nmi(hwpmc_x86_perfctr_msr(0));
			err = -EBUSY;
		} else {
			hwpmc_test_holding = true;
		}
	} else if (!val && hwpmc_test_holding) {
		release_evntsel_nmi(hwpmc_x86_evsel_msr(0));
		release_perfctr_nmi(hwpmc_x86_perfctr_msr(0));
		hwpmc_test_holding = false;
	}
	mutex_unlock(&hwpmc_test_lock);
	return err;
}

DEFINE_DEBUGFS_ATTRIBUTE(hold_fops, hold_get, hold_set, "%llu\n");

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
 * Hold this CPU with interrupts off (nothing else runs here: no IPI is
 * answered, no timer fires) until released or @val ms passed.  One
 * holder at a time.
 */
static int hold_cpu_set(void *data, u64 val)
{
	unsigned long flags;
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
	local_irq_save(flags);
	end = ktime_get_mono_fast_ns() + val * NSEC_PER_MSEC;
	WRITE_ONCE(hwpmc_test_cpu_held, smp_processor_id() + 1);
	while (!READ_ONCE(hwpmc_test_cpu_release) &&
	       ktime_get_mono_fast_ns() < end)
		cpu_relax();
	WRITE_ONCE(hwpmc_test_cpu_held, 0);
	local_irq_restore(flags);
	mutex_unlock(&hwpmc_test_hold_lock);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(hold_cpu_fops, hold_cpu_get, hold_cpu_set,
			 "%llu\n");

int hwpmc_testing_init(void)
{
	WARN_ONCE(test_warn, "hwpmc: test_warn=1: deliberate warning for the rig self-test\n");
	hwpmc_test_dir = debugfs_create_dir("hwpmc-test", NULL);
	debugfs_create_file_unsafe("hold_perfctr", 0600, hwpmc_test_dir, NULL,
				   &hold_fops);
	debugfs_create_file_unsafe("hold_cpu", 0600, hwpmc_test_dir, NULL,
				   &hold_cpu_fops);
	return 0;
}

void hwpmc_testing_fini(void)
{
	debugfs_remove_recursive(hwpmc_test_dir);
	hold_set(NULL, 0);
}
