// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: kernel owners and their counters, for the other interfaces
 * (iface.h).  Everything goes through the core's operations on PMCs
 * (hwpmc_pmc.c), so rows, privilege checks, the reservation with perf and
 * the backend are exactly hwpmc's.  Process context.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/cpumask.h>
#include <linux/percpu.h>

#include "iface.h"

struct hwpmc_owner *hwpmc_kowner_new(void)
{
	struct hwpmc_owner *po = kzalloc(sizeof(*po), GFP_KERNEL);

	if (!po)
		return NULL;
	refcount_set(&po->ref, 1);
	mutex_init(&po->lock);
	mutex_init(&po->log_lock);
	INIT_WORK(&po->sigio_work, hwpmc_owner_sigio_fn);
	idr_init(&po->pmcs);
	/* Counted as the loading user's (root): exempt from the limits. */
	if (hwpmc_owner_charge(po)) {
		idr_destroy(&po->pmcs);
		kfree(po);
		return NULL;
	}
	return po;
}

void hwpmc_kowner_free(struct hwpmc_owner *po)
{
	if (!po)
		return;
	hwpmc_owner_kill(po);
	hwpmc_owner_uncharge(po);
	idr_destroy(&po->pmcs);
	/* The hooks may see it through its PMCs until a grace period. */
	kfree_rcu(po, rcu);
}

const struct hwpmc_class *hwpmc_kctr_class(void)
{
	const struct hwpmc_class *cls = hwpmc_class_find(PMC_CLASS_IAP);

	return cls ? cls : hwpmc_class_find(PMC_CLASS_K8);
}

int hwpmc_kctr_init(struct hwpmc_kctr *kc)
{
	kc->pmcid = kcalloc(nr_cpu_ids, sizeof(*kc->pmcid), GFP_KERNEL);
	kc->allocated = false;
	kc->running = false;
	return kc->pmcid ? 0 : -ENOMEM;
}

void hwpmc_kctr_fini(struct hwpmc_kctr *kc)
{
	kfree(kc->pmcid);
	kc->pmcid = NULL;
}

/*
 * Each CPU's PMC of @kc stopped or, with @release, released (stopped, its
 * counter cleared on its CPU, its row freed) and forgotten.
 */
static void hwpmc_kctr_stop_all(struct hwpmc_owner *po, struct hwpmc_kctr *kc,
				bool release)
{
	struct pmc_op_simple s = { };
	unsigned int cpu;

	hwpmc_owner_assert_held(po);
	mutex_lock(&hwpmc_sx);
	if (release) {
		/* One grace period for all the CPUs' samplers. */
		hwpmc_pmcs_release(po, kc->pmcid, nr_cpu_ids);
		memset(kc->pmcid, 0, nr_cpu_ids * sizeof(*kc->pmcid));
	} else {
		for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
			if (!kc->pmcid[cpu])
				continue;
			s.pm_pmcid = kc->pmcid[cpu];
			hwpmc_pmc_stop_locked(po, &s);
		}
	}
	mutex_unlock(&hwpmc_sx);
	kc->running = false;
}

void hwpmc_kctr_release(struct hwpmc_owner *po, struct hwpmc_kctr *kc)
{
	hwpmc_kctr_stop_all(po, kc, true);
	kc->allocated = false;
}

int hwpmc_kctr_alloc(struct hwpmc_owner *po, struct hwpmc_kctr *kc,
		     const struct hwpmc_class *cls, unsigned int idx,
		     u32 event, u64 config, bool holds_count, u64 period)
{
	const struct pmc_op_pmcallocate t = {
		.pm_class = cls->ops->class,
		.pm_event = event,
		.pm_mode = period ? PMC_MODE_SS : PMC_MODE_SC,
	};
	u32 hooks = hwpmc_alloc_hooks(&t);
	unsigned int cpu;
	int err = 0;

	hwpmc_owner_assert_held(po);
	if (kc->allocated)
		hwpmc_kctr_release(po, kc);
	err = hwpmc_alloc_begin(hooks);
	if (err)
		return err;
	for_each_online_cpu(cpu) {
		struct pmc_op_pmcallocate a = {
			.pm_cpu = cpu,
			.pm_class = cls->ops->class,
			.pm_event = event,
			.pm_mode = period ? PMC_MODE_SS : PMC_MODE_SC,
			.pm_config = config,
			.pm_count = period,
		};
		struct hwpmc_pmc *pm;

		err = hwpmc_pmc_allocate_at(po, &a, idx);
		if (err)
			break;
		kc->pmcid[cpu] = a.pm_pmcid;
		pm = idr_find(&po->pmcs, a.pm_pmcid);
		if (holds_count)
			pm->pflags |= HWPMC_PF_HOLDS_COUNT;
	}
	hwpmc_alloc_end(hooks);
	kc->allocated = true;
	if (err)
		hwpmc_kctr_release(po, kc);
	return err;
}

int hwpmc_kctr_start(struct hwpmc_owner *po, struct hwpmc_kctr *kc)
{
	struct pmc_op_simple s = { };
	unsigned int cpu;
	int err;

	hwpmc_owner_assert_held(po);
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		if (!kc->pmcid[cpu])
			continue;
		s.pm_pmcid = kc->pmcid[cpu];
		err = hwpmc_op_pmcstart(po, &s);
		/* A CPU gone offline meanwhile: it counts when it is back. */
		if (err && err != -ENXIO) {
			hwpmc_kctr_stop(po, kc);
			return err;
		}
	}
	kc->running = true;
	return 0;
}

void hwpmc_kctr_stop(struct hwpmc_owner *po, struct hwpmc_kctr *kc)
{
	hwpmc_kctr_stop_all(po, kc, false);
}

static u64 hwpmc_kctr_read_one(struct hwpmc_owner *po, u32 id)
{
	struct pmc_op_pmcrw rw = {
		.pm_pmcid = id,
		.pm_flags = PMC_F_OLDVALUE,
	};

	if (!id || hwpmc_op_pmcrw(po, &rw))
		return 0;
	return rw.pm_value;
}

u64 hwpmc_kctr_read(struct hwpmc_owner *po, struct hwpmc_kctr *kc, int cpu)
{
	unsigned int c;
	u64 sum = 0;

	hwpmc_owner_assert_held(po);
	if (cpu >= 0)
		return cpu < nr_cpu_ids ? hwpmc_kctr_read_one(po, kc->pmcid[cpu])
					: 0;
	for (c = 0; c < nr_cpu_ids; c++)
		sum += hwpmc_kctr_read_one(po, kc->pmcid[c]);
	return sum;
}

void hwpmc_kctr_write(struct hwpmc_owner *po, struct hwpmc_kctr *kc,
		      u64 value)
{
	struct pmc_op_pmcrw rw = {
		.pm_flags = PMC_F_NEWVALUE,
		.pm_value = value,
	};
	unsigned int cpu;

	hwpmc_owner_assert_held(po);
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		if (!kc->pmcid[cpu])
			continue;
		rw.pm_pmcid = kc->pmcid[cpu];
		hwpmc_op_pmcrw(po, &rw);
	}
}
