/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixtures of pctr_test and perfmon_test (the other interfaces'
 * device files), declared in the order the harness runs them:
 *
 * "plain": the module vm-run loaded, on a guest without a PMU
 * (plain_fixture_setup() skips where the device is missing or the
 * machine has programmable counters).
 *
 * "model": the test flavor with the PMU model in three layouts (Intel, AMD
 * PerfMonV2, AMD legacy), the test pinned to the last CPU it may run on,
 * the programmable class's first row and rows, and
 * kernel.hwpmc.unprivileged_syspmcs and unprivileged_hw put back as they
 * were.  It comes after "plain": the model tests leave the test flavor
 * loaded for the next (the release module comes back when the binary
 * exits, hwpmc_model_util.h).
 *
 * Each test's FIXTURE_SETUP and FIXTURE_TEARDOWN call the helpers below,
 * then do their own.
 */
#ifndef HWPMC_MODEL_FIXTURE_H
#define HWPMC_MODEL_FIXTURE_H

#include "kselftest_harness.h"
#include "hwpmc_model_util.h"

#define SYSCTL_SYS	"/proc/sys/kernel/hwpmc/unprivileged_syspmcs"
#define SYSCTL_HW	"/proc/sys/kernel/hwpmc/unprivileged_hw"

FIXTURE(plain) {
	int dummy;
};

/* The plain fixture's setup: the release module, @dev, no counters. */
static void plain_fixture_setup(struct __test_metadata *_metadata,
				const char *dev)
{
	if (!model_module_loaded() && !geteuid())
		ASSERT_EQ(0, hwpmc_module_load("", ""));
	if (access(dev, F_OK))
		SKIP(return, "%s: %s (module not loaded?)", dev,
		     strerror(errno));
	if (model_has_counters())
		SKIP(return, "this machine has programmable counters: the no-counter paths are the plain guest's");
}

FIXTURE(model) {
	int cpu, other;
	__u32 first;		/* first row of the programmable class */
	__u32 nrows;
	long sys, hw;		/* the sysctls before the test */
};

FIXTURE_VARIANT(model) {
	const char *model;
	__u32 class;
};

FIXTURE_VARIANT_ADD(model, intel) {
	.model = "intel",
	.class = PMC_CLASS_IAP,
};

FIXTURE_VARIANT_ADD(model, amd) {
	.model = "amd",
	.class = PMC_CLASS_K8,
};

FIXTURE_VARIANT_ADD(model, amd_legacy) {
	.model = "amd-legacy",
	.class = PMC_CLASS_K8,
};

/* The model fixture's setup: true when set up, false when it skips. */
static bool model_fixture_setup(struct __test_metadata *_metadata,
				FIXTURE_DATA(model) *self,
				const FIXTURE_VARIANT(model) *variant)
{
	char why[256] = "";
	int fd, first;

	self->sys = self->hw = -1;
	if (geteuid())
		SKIP(return false,
		     "needs root: it loads the test flavor of the module");
	ASSERT_EQ(0, model_use(variant->model, why, sizeof(why)))
		TH_LOG("%s", why);
	model_cpus(&self->cpu, &self->other);
	ASSERT_LE(0, self->cpu);
	ASSERT_EQ(0, hwpmc_pin_cpu(self->cpu));
	fd = hwpmc_open();
	ASSERT_LE(0, fd);
	first = hwpmc_class_firstrow(fd, variant->class, &self->nrows);
	close(fd);
	ASSERT_LE(0, first);
	self->first = first;
	self->sys = hwpmc_sysctl_get(SYSCTL_SYS);
	self->hw = hwpmc_sysctl_get(SYSCTL_HW);
	return true;
}

/* The sysctls back as they were before the test. */
static void model_fixture_teardown(FIXTURE_DATA(model) *self)
{
	if (self->sys >= 0)
		hwpmc_sysctl_set(SYSCTL_SYS, self->sys);
	if (self->hw >= 0)
		hwpmc_sysctl_set(SYSCTL_HW, self->hw);
}

#endif /* HWPMC_MODEL_FIXTURE_H */
