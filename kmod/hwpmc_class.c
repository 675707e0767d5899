// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: the registry of counter classes and their rows.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/printk.h>

#include "hwpmc.h"

/* Every class the module knows, in row order.  Absent ones probe to 0. */
static const struct hwpmc_class_ops *hwpmc_all_classes[] = {
	&hwpmc_tsc_ops,
	NULL,			/* IAP */
	NULL,			/* IAF */
	NULL,			/* K8 */
	&hwpmc_soft_ops,
};

static struct hwpmc_class hwpmc_classes[PMC_CLASS_TABLE_SIZE];
static unsigned int hwpmc_nclass;
static unsigned int hwpmc_total_rows;

int hwpmc_classes_init(void)
{
	unsigned int i, n;

	hwpmc_nclass = 0;
	hwpmc_total_rows = 0;
	hwpmc_all_classes[1] = hwpmc_iap_ops;
	hwpmc_all_classes[2] = hwpmc_iaf_ops;
	hwpmc_all_classes[3] = hwpmc_k8_ops;
	for (i = 0; i < ARRAY_SIZE(hwpmc_all_classes); i++) {
		const struct hwpmc_class_ops *ops = hwpmc_all_classes[i];

		n = ops->probe();
		if (!n)
			continue;
		if (hwpmc_total_rows + n > HWPMC_MAX_ROWS) {
			pr_warn("%s: %u rows exceed the %u supported; ignored\n",
				ops->name, n, HWPMC_MAX_ROWS);
			continue;
		}
		hwpmc_classes[hwpmc_nclass].ops = ops;
		hwpmc_classes[hwpmc_nclass].firstrow = hwpmc_total_rows;
		hwpmc_classes[hwpmc_nclass].nrows = n;
		hwpmc_classes[hwpmc_nclass].width = ops->get_width ?
						    ops->get_width() : ops->width;
		hwpmc_classes[hwpmc_nclass].caps = ops->get_caps ?
						   ops->get_caps() : ops->caps;
		hwpmc_nclass++;
		hwpmc_total_rows += n;
	}
	return 0;
}

void hwpmc_classes_fini(void)
{
	hwpmc_nclass = 0;
	hwpmc_total_rows = 0;
}

unsigned int hwpmc_nclasses(void)
{
	return hwpmc_nclass;
}

const struct hwpmc_class *hwpmc_class_at(unsigned int i)
{
	return i < hwpmc_nclass ? &hwpmc_classes[i] : NULL;
}

const struct hwpmc_class *hwpmc_class_find(u32 class)
{
	unsigned int i;

	for (i = 0; i < hwpmc_nclass; i++)
		if (hwpmc_classes[i].ops->class == class)
			return &hwpmc_classes[i];
	return NULL;
}

const struct hwpmc_class *hwpmc_class_of_row(unsigned int row)
{
	unsigned int i;

	for (i = 0; i < hwpmc_nclass; i++)
		if (row - hwpmc_classes[i].firstrow < hwpmc_classes[i].nrows)
			return &hwpmc_classes[i];
	return NULL;
}

/* CPU hotplug callbacks, run on @cpu itself. */
void hwpmc_classes_cpu_online(unsigned int cpu)
{
	unsigned int i;

	for (i = 0; i < hwpmc_nclass; i++)
		if (hwpmc_classes[i].ops->cpu_online)
			hwpmc_classes[i].ops->cpu_online(cpu);
}

void hwpmc_classes_cpu_offline(unsigned int cpu)
{
	unsigned int i;

	for (i = 0; i < hwpmc_nclass; i++)
		if (hwpmc_classes[i].ops->cpu_offline)
			hwpmc_classes[i].ops->cpu_offline(cpu);
}

/* Any context, NMI included: no locks. */
unsigned int hwpmc_nrows(void)
{
	return hwpmc_total_rows;
}

/* The hwpmc(4) DIAGNOSTICS announcement: [class/npmc/capabilities]... */
void hwpmc_classes_announce(void)
{
	char buf[160];
	unsigned int i, len = 0;

	for (i = 0; i < hwpmc_nclass; i++) {
		const struct hwpmc_class *c = &hwpmc_classes[i];

		len += scnprintf(buf + len, sizeof(buf) - len, " %s/%u/0x%x",
				 c->ops->name, c->nrows, c->caps);
	}
	pr_info("%s\n", buf);
}
