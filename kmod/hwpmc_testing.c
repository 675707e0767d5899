// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: test-only hooks, built only into the test flavor of the module
 * (HWPMC_TESTING=y), never into a release module.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/bug.h>

#include "hwpmc.h"

static bool test_warn;
module_param(test_warn, bool, 0444);
MODULE_PARM_DESC(test_warn, "Test only: WARN once at load, to prove the rig's kernel-log check");

int hwpmc_testing_init(void)
{
	WARN_ONCE(test_warn, "hwpmc: test_warn=1: deliberate warning for the rig self-test\n");
	return 0;
}
