/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hwpmc: the other interfaces of the specification, each a thin adapter
 * over the core's rows, classes and backend (the files of kmod/iface/): OpenBSD's
 * pctr(4) (/dev/pctr), FreeBSD's perfmon(4) (/dev/perfmon) and NetBSD's
 * pmc(9) (in-kernel).  Each is registered from hwpmc_main.c through
 * hwpmc_ifaces[].
 *
 * Their counters are system-scope counting PMCs of a kernel owner (an
 * owner no process opened: GETPMCINFO shows its rows with owner pid 0),
 * one per online CPU on the row the interface names, so hwpmc, perf and
 * the interfaces share the PMU through the core's row dispositions: a row
 * one of them holds is refused to the others (EBUSY) until it lets go.
 */
#ifndef _HWPMC_IFACE_H
#define _HWPMC_IFACE_H

#include "../hwpmc.h"

struct hwpmc_iface {
	const char *name;
	int (*init)(void);
	void (*exit)(void);
};

extern const struct hwpmc_iface hwpmc_pctr_iface;
extern const struct hwpmc_iface hwpmc_perfmon_iface;
extern const struct hwpmc_iface hwpmc_pmc9_iface;

/* An owner of the kernel's: the interfaces' counters belong to it. */
struct hwpmc_owner *hwpmc_kowner_new(void);
void hwpmc_kowner_free(struct hwpmc_owner *po);

/*
 * One counter of an interface: a system-scope counting PMC on one row
 * (index @idx of the class) on every CPU online when it was allocated.
 * Every function below is called with the owner's lock held (the
 * interface's own lock before it) and takes hwpmc_sx itself.
 */
struct hwpmc_kctr {
	u32 *pmcid;			/* per CPU; 0: none there */
	bool allocated;
	bool running;
};

/* The machine's programmable class (IAP or K8), or NULL. */
const struct hwpmc_class *hwpmc_kctr_class(void);
int hwpmc_kctr_init(struct hwpmc_kctr *kc);
void hwpmc_kctr_fini(struct hwpmc_kctr *kc);
/* @period 0: counting; else system-scope sampling with that period. */
int hwpmc_kctr_alloc(struct hwpmc_owner *po, struct hwpmc_kctr *kc,
		     const struct hwpmc_class *cls, unsigned int idx,
		     u32 event, u64 config, bool holds_count, u64 period);
void hwpmc_kctr_release(struct hwpmc_owner *po, struct hwpmc_kctr *kc);
int hwpmc_kctr_start(struct hwpmc_owner *po, struct hwpmc_kctr *kc);
void hwpmc_kctr_stop(struct hwpmc_owner *po, struct hwpmc_kctr *kc);
/* @cpu's count, or the sum over the CPUs when @cpu is negative. */
u64 hwpmc_kctr_read(struct hwpmc_owner *po, struct hwpmc_kctr *kc, int cpu);
/* Set every CPU's count to @value (stopped counters only). */
void hwpmc_kctr_write(struct hwpmc_owner *po, struct hwpmc_kctr *kc,
		      u64 value);

#endif /* _HWPMC_IFACE_H */
