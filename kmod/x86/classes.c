// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: the x86 hardware classes' ops tables, and the backend's setup:
 * choosing the PMU ops (native; the test model in the test flavor),
 * detecting the PMU, registering the NMI handler.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>

#include "x86.h"

/*
 * Load: the class's counters on this machine, their width, and its
 * capabilities (AnyThread where the CPU has it, x86/detect.c).
 */
static unsigned int x86_probe(struct hwpmc_class *cls)
{
	const struct hwpmc_x86_class *xcls =
		container_of(cls->ops, struct hwpmc_x86_class, ops);

	cls->width = xcls->hw->width();
	cls->caps = xcls->caps;
	if (xcls->anythread && hwpmc_x86.anythread)
		cls->caps |= PMC_CAP_ANYTHREAD;
	return xcls->hw->nctr();
}

static u64 x86_max_period(const struct hwpmc_class *cls)
{
	return hwpmc_x86_max_period(hwpmc_x86_hw_of(cls->ops));
}

/*
 * Log names: the event as a raw pmc(3) specifier after the class
 * ("IAP-event=0xc0,umask=0x0"), which libhwpmc maps back to an alias; a
 * fixed counter by its name.
 */
static void x86_describe(const struct hwpmc_pmc *pm, char *buf, size_t len)
{
	snprintf(buf, len, "%s-event=0x%x,umask=0x%llx", pm->cls->ops->name,
		 pm->event, PMC_X86_CONFIG_UMASK(pm->config));
}

static void x86_iaf_describe(const struct hwpmc_pmc *pm, char *buf,
			     size_t len)
{
	static const char *const names[] = {
		"INSTR_RETIRED_ANY", "CPU_CLK_UNHALTED_CORE",
		"CPU_CLK_UNHALTED_REF", "TOPDOWN_SLOTS",
	};

	if (pm->event < ARRAY_SIZE(names))
		snprintf(buf, len, "IAF-%s", names[pm->event]);
	else
		snprintf(buf, len, "IAF-%u", pm->event);
}

#define HWPMC_X86_CAPS (PMC_CAP_INTERRUPT | PMC_CAP_USER | PMC_CAP_SYSTEM | \
			PMC_CAP_READ | PMC_CAP_WRITE)
#define HWPMC_X86_MODES (BIT(PMC_MODE_SS) | BIT(PMC_MODE_SC) | \
			 BIT(PMC_MODE_TS) | BIT(PMC_MODE_TC))

#define HWPMC_X86_OPS							\
	.modes		= HWPMC_X86_MODES,				\
	.probe		= x86_probe,					\
	.max_period	= x86_max_period,				\
	.allocate	= hwpmc_x86_allocate,				\
	.release	= hwpmc_x86_release,				\
	.start		= hwpmc_x86_start,				\
	.stop		= hwpmc_x86_stop,				\
	.read		= hwpmc_x86_read,				\
	.write		= hwpmc_x86_write,				\
	.cpu_online	= hwpmc_x86_cpu_online,				\
	.cpu_offline	= hwpmc_x86_cpu_offline,			\
	.row_ok		= hwpmc_x86_row_ok,				\
	.min_period	= hwpmc_x86_min_period,				\
	.unavailable	= hwpmc_x86_unavailable,			\
	.get_msr	= hwpmc_x86_get_msr,				\
	.revoke_msr	= hwpmc_x86_rdpmc_revoke

static const struct hwpmc_x86_class hwpmc_iap_class = {
	.ops = {
		.name		= "IAP",
		.class		= PMC_CLASS_IAP,
		.describe	= x86_describe,
		HWPMC_X86_OPS,
	},
	.hw = &hwpmc_iap_hw,
	.caps = HWPMC_X86_CAPS | PMC_CAP_EDGE | PMC_CAP_THRESHOLD |
		PMC_CAP_INVERT | PMC_CAP_QUALIFIER,
	.anythread = true,
};

static const struct hwpmc_x86_class hwpmc_iaf_class = {
	.ops = {
		.name		= "IAF",
		.class		= PMC_CLASS_IAF,
		.describe	= x86_iaf_describe,
		HWPMC_X86_OPS,
	},
	.hw = &hwpmc_iaf_hw,
	.caps = HWPMC_X86_CAPS,
	.anythread = true,
};

static const struct hwpmc_x86_class hwpmc_k8_class = {
	.ops = {
		.name		= "K8",
		.class		= PMC_CLASS_K8,
		.describe	= x86_describe,
		HWPMC_X86_OPS,
	},
	.hw = &hwpmc_k8_hw,
	.caps = HWPMC_X86_CAPS | PMC_CAP_EDGE | PMC_CAP_THRESHOLD |
		PMC_CAP_INVERT | PMC_CAP_QUALIFIER,
};

#ifdef HWPMC_TESTING
static char *pmu_model = "";
module_param(pmu_model, charp, 0444);
MODULE_PARM_DESC(pmu_model, "Test only: use the software PMU model 'intel', 'intel-nofw', 'amd', 'amd-ext' or 'amd-legacy'");
#endif

static bool hwpmc_x86_nmi_registered;

static void hwpmc_x86_fini(void)
{
	if (hwpmc_x86_nmi_registered)
		hwpmc_x86_nmi_fini();
	hwpmc_x86_nmi_registered = false;
	hwpmc_x86_rdpmc_fini();
	hwpmc_x86_test_fini();
#ifdef HWPMC_TESTING
	if (hwpmc_pmu != &hwpmc_pmu_native)
		hwpmc_pmu_model_fini();
	hwpmc_pmu = &hwpmc_pmu_native;
#endif
}

/* Every class an x86 machine may have, in row order; absent ones probe 0. */
static const struct hwpmc_class_ops *const hwpmc_x86_classes[] = {
	&hwpmc_tsc_ops,
	&hwpmc_iap_class.ops,
	&hwpmc_iaf_class.ops,
	&hwpmc_k8_class.ops,
	&hwpmc_soft_ops,
};

static struct hwpmc_mdep hwpmc_x86_mdep = {
	.name		= "x86",
	.classes	= hwpmc_x86_classes,
	.nclasses	= ARRAY_SIZE(hwpmc_x86_classes),
	.fork_task	= hwpmc_x86_fork,
	.rdpmc_mm_get	= hwpmc_x86_rdpmc_mm_get,
	.rdpmc_mm_put	= hwpmc_x86_rdpmc_mm_put,
	.fini		= hwpmc_x86_fini,
};

/*
 * The machine, before its classes probe: which PMU ops (native, or the
 * model in the test flavor), what PMU CPUID describes, its NMI handler.
 */
const struct hwpmc_mdep *hwpmc_md_init(void)
{
	int err;

#ifdef HWPMC_TESTING
	if (*pmu_model) {
		hwpmc_pmu = hwpmc_pmu_model_init(pmu_model);
		if (!hwpmc_pmu) {
			pr_err("pmu_model=%s: unknown model (intel, intel-nofw, amd, amd-ext, amd-legacy)\n",
			       pmu_model);
			hwpmc_pmu = &hwpmc_pmu_native;
			return ERR_PTR(-EINVAL);
		}
	}
#endif
	hwpmc_x86_test_init();
	/* Without a PMU no hardware PMC is ever loaded: no switch callback. */
	hwpmc_x86_mdep.switch_task = NULL;
	if (hwpmc_x86_detect()) {
		pr_info("no usable PMU (%s): TSC and SOFT classes only\n",
			hwpmc_pmu->name);
	} else {
		err = hwpmc_x86_nmi_init();
		if (err) {
			hwpmc_x86_fini();
			return ERR_PTR(err);
		}
		hwpmc_x86_nmi_registered = true;
		hwpmc_x86_rdpmc_init();
		hwpmc_x86_mdep.switch_task = hwpmc_x86_switch;
	}
	hwpmc_x86_mdep.cputype = hwpmc_x86.cputype;
	return &hwpmc_x86_mdep;
}
