// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: a test-only trigger of the x86 backend, built only into the test
 * flavor of the module (HWPMC_TESTING=y), never into a release module.
 *
 *  debugfs hwpmc-test/hold_perfctr
 *                        write 1: take counter 0 through the kernel's
 *                        reservation protocol, as perf (or the NMI
 *                        watchdog) would; write 0: give it back
 */
#include <linux/debugfs.h>
#include <linux/mutex.h>
#include <asm/nmi.h>

#include "x86.h"

static bool hwpmc_test_holding;
static DEFINE_MUTEX(hwpmc_test_hold_lock);

static int hold_get(void *data, u64 *val)
{
	*val = hwpmc_test_holding;
	return 0;
}

static int hold_set(void *data, u64 val)
{
	int err = 0;

	mutex_lock(&hwpmc_test_hold_lock);
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
	mutex_unlock(&hwpmc_test_hold_lock);
	return err;
}

DEFINE_DEBUGFS_ATTRIBUTE(hold_fops, hold_get, hold_set, "%llu\n");

/* At load, in hwpmc_testing_init()'s directory (removed with it). */
void hwpmc_x86_test_init(void)
{
	debugfs_create_file_unsafe("hold_perfctr", 0600, hwpmc_testing_dir(),
				   NULL, &hold_fops);
}

void hwpmc_x86_test_fini(void)
{
	hold_set(NULL, 0);
}
