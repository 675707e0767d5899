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
 *  debugfs hwpmc-test/    the directory of these triggers and the
 *                        backends' (x86/test_hold.c: hold_perfctr)
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/bug.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/slab.h>

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

static struct dentry *hwpmc_test_dir;

/* debugfs hwpmc-test/: the backends' test triggers go there too. */
struct dentry *hwpmc_testing_dir(void)
{
	return hwpmc_test_dir;
}

int hwpmc_testing_init(void)
{
	WARN_ONCE(test_warn, "hwpmc: test_warn=1: deliberate warning for the rig self-test\n");
	if (test_leak)
		test_leak_cookie = ~(unsigned long)kmalloc(64, GFP_KERNEL);
	hwpmc_test_dir = debugfs_create_dir("hwpmc-test", NULL);
	return 0;
}

void hwpmc_testing_fini(void)
{
	debugfs_remove_recursive(hwpmc_test_dir);
}
