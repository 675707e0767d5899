// SPDX-License-Identifier: GPL-2.0
/*
 * The fuzzer's operation table: one entry per PMC_OP_* of
 * include/uapi/linux/hwpmc.h, each with a generator of mutated arguments
 * and the errnos the operation is documented to answer
 * (selftests/ERRORS.md, the ABI header).  An errno outside the list is a
 * fuzzer failure.
 */
#include <errno.h>
#include <string.h>
#include <linux/hwpmc.h>

#include "fuzz.h"

/*
 * Every operation: EFAULT (a bad argument or embedded pointer, ERRORS.md
 * 11); EINTR (a fatal signal while it waited for a lock, "Errors Linux
 * adds"; only a caller being killed can see it).
 */
static const int e_getcpuinfo[] = { 0 };
static const int e_getdriverstats[] = { 0 };
/* EPROTO: another major version; EINVAL: reserved field. */
static const int e_getmoduleversion[] = { EPROTO, EINVAL, 0 };
/* 13 EINVAL bad CPU, 34 ENXIO offline CPU, E2BIG small array, ENOMEM. */
static const int e_getpmcinfo[] = { EINVAL, ENXIO, E2BIG, ENOMEM, 0 };
/* 39 EPERM, 16-18 EINVAL, ENXIO offline CPU, 3-4 EBUSY. */
static const int e_pmcadmin[] = { EPERM, EINVAL, ENXIO, EBUSY, 0 };
/*
 * 19-24 EINVAL, 35 ENXIO, 37 EOPNOTSUPP, EPERM (system PMCs, hardware,
 * AnyThread), EACCES (hardware kernel mode), ESRCH (opener exited),
 * ENOSPC (max_pmcs_per_user), ENOMEM (32), EBUSY (the PMU held by perf).
 */
static const int e_pmcallocate[] = { EINVAL, ENXIO, EOPNOTSUPP, EPERM, EACCES,
				     ESRCH, ENOSPC, ENOMEM, EBUSY, 0 };
/* 5 EBUSY, 10 EEXIST, 12/26/27 EINVAL, 40-41 EPERM, 42/44 ESRCH, ENOMEM. */
static const int e_pmcattach[] = { EBUSY, EEXIST, EINVAL, EPERM, ESRCH,
				   ENOMEM, 0 };
/* 12/26-28 EINVAL, 42/44/45 ESRCH. */
static const int e_pmcdetach[] = { EINVAL, ESRCH, 0 };
/* 30 EINVAL, 33 EOPNOTSUPP, EPERM (perf's rdpmc setting), 42 ESRCH. */
static const int e_getmsr[] = { EINVAL, EOPNOTSUPP, EPERM, ESRCH, 0 };
/* 12 EINVAL, 42 ESRCH. */
static const int e_simple[] = { EINVAL, ESRCH, 0 };
/* 6 EBUSY, 29 EINVAL, 37 EOPNOTSUPP, 42 ESRCH. */
static const int e_pmcrw[] = { EBUSY, EINVAL, EOPNOTSUPP, ESRCH, 0 };
/* 7 EBUSY, EINVAL (period), 37 EOPNOTSUPP, 42 ESRCH. */
static const int e_setcount[] = { EBUSY, EINVAL, EOPNOTSUPP, ESRCH, 0 };
/*
 * 8-9 EDOOFUS (EBADFD), 12 EINVAL, 36 ENXIO, 42-43 ESRCH, EPERM (attach
 * to the owner not allowed), EBUSY/EEXIST/ENOMEM of that attach.
 */
static const int e_pmcstart[] = { HWPMC_EDOOFUS, EINVAL, ENXIO, ESRCH, EPERM,
				  EBUSY, EEXIST, ENOMEM, 0 };
static const int e_pmcstop[] = { EINVAL, ENXIO, ESRCH, 0 };
/*
 * The log writer's errors, kept and returned by FLUSHLOG, CLOSELOG, the
 * de-configuring CONFIGURELOG and WRITELOG ("EPIPE, ENOSPC, ...": a pipe
 * or socket whose reader is gone, a full file system).
 */
#define WRITE_ERRS EPIPE, ENOSPC
/* 1 EAGAIN, 2 EBUSY, 14 EINVAL, EBADF, EMFILE, ESRCH, ENOMEM. */
static const int e_configurelog[] = { EAGAIN, EBUSY, EINVAL, EBADF, EMFILE,
				      ESRCH, ENOMEM, WRITE_ERRS, 0 };
/* 15 EINVAL without a log; ESRCH: the opener exited while it waited. */
static const int e_flushlog[] = { EINVAL, ESRCH, WRITE_ERRS, 0 };
static const int e_closelog[] = { EINVAL, WRITE_ERRS, 0 };
/* 31 EINVAL, ENOBUFS (no buffer). */
static const int e_writelog[] = { EINVAL, ENOBUFS, WRITE_ERRS, 0 };
static const int e_getdyneventinfo[] = { EINVAL, E2BIG, 0 };
/* EINVAL bad handle, 42 ESRCH. */
static const int e_getcaps[] = { EINVAL, ESRCH, 0 };
static const int e_getreadslot[] = { EINVAL, ESRCH, ENOENT, 0 };

bool fuzz_errno_ok(const struct fuzz_op *op, int err)
{
	const int *e;

	if (err == EFAULT || err == EINTR)
		return true;
	for (e = op->errnos; *e; e++)
		if (*e == err)
			return true;
	return false;
}

/* --- generators -------------------------------------------------------- */

static uint32_t pick_class(struct fuzz_ctx *c)
{
	static const uint32_t classes[] = {
		PMC_CLASS_SOFT, PMC_CLASS_SOFT, PMC_CLASS_SOFT, PMC_CLASS_TSC,
		PMC_CLASS_IAP, PMC_CLASS_IAF, PMC_CLASS_K8,
	};

	if (one_in(&c->rng, 20))
		return (uint32_t)rng_next(&c->rng) % 0x40;
	return classes[rnd(&c->rng, sizeof(classes) / sizeof(classes[0]))];
}

static uint64_t pick_count(struct fuzz_ctx *c)
{
	switch (rnd(&c->rng, 10)) {
	case 0:
		return 0;
	case 1:
		return 1 + rnd(&c->rng, 100);
	case 2:
		return (1ULL << 62) + rnd(&c->rng, 3);	/* SOFT's limit */
	case 3:
		return rng_next(&c->rng);
	case 4:
		return 1ULL << 47;			/* x86's limit */
	case 5:
		return 1000 + rnd(&c->rng, 100000);	/* fast CLOCK.PROF */
	default:
		return 1000000 + rnd(&c->rng, 100000000);
	}
}

static void gen_getmoduleversion(struct fuzz_ctx *c, void *arg)
{
	struct pmc_op_getmoduleversion *a = arg;

	switch (rnd(&c->rng, 4)) {
	case 0:
		a->pm_version = 0;
		break;
	case 1:
		a->pm_version = (uint32_t)rng_next(&c->rng);
		break;
	default:
		a->pm_version = HWPMC_VERSION;
	}
	fuzz_reserved(c, &a->pm_reserved, sizeof(a->pm_reserved));
}

static const char *chk_getmoduleversion(struct fuzz_ctx *c, const void *arg,
					int fdi)
{
	const struct pmc_op_getmoduleversion *a = arg;

	return HWPMC_VERSION_TO_MAJOR(a->pm_version) == HWPMC_VERSION_MAJOR ?
	       NULL : "GETMODULEVERSION: another major version";
}

static void gen_nothing(struct fuzz_ctx *c, void *arg)
{
	/* Output-only: garbage in, which the module must ignore. */
	if (one_in(&c->rng, 2))
		memset(arg, 0xa5, 16);
}

static const char *chk_getcpuinfo(struct fuzz_ctx *c, const void *arg, int fdi)
{
	const struct pmc_op_getcpuinfo *a = arg;

	if (a->pm_nclass == 0 || a->pm_nclass > PMC_CLASS_TABLE_SIZE ||
	    a->pm_ncpu == 0)
		return "GETCPUINFO: nonsense class or CPU count";
	return NULL;
}

static void gen_getpmcinfo(struct fuzz_ctx *c, void *arg)
{
	struct pmc_op_getpmcinfo *a = arg;

	a->pm_cpu = fuzz_pick_cpu(c);
	a->pm_npmc = one_in(&c->rng, 3) ? (uint32_t)rng_next(&c->rng) :
					   rnd(&c->rng, 80);
	a->pm_info = one_in(&c->rng, 4) ? 0 :
		     fuzz_pick_uptr(c, (size_t)64 * sizeof(struct pmc_info));
	fuzz_reserved(c, a->pm_reserved, sizeof(a->pm_reserved));
}

static void gen_pmcadmin(struct fuzz_ctx *c, void *arg)
{
	struct pmc_op_pmcadmin *a = arg;

	a->pm_cpu = fuzz_pick_cpu(c);
	a->pm_pmcid = one_in(&c->rng, 5) ? (uint32_t)rng_next(&c->rng) :
					    rnd(&c->rng, 24);
	a->pm_state = one_in(&c->rng, 6) ? rnd(&c->rng, 8) :
		      one_in(&c->rng, 2) ? PMC_STATE_DISABLED : PMC_STATE_FREE;
	a->pm_flags = one_in(&c->rng, 20) ? (uint32_t)rng_next(&c->rng) : 0;
}

/* A request that can succeed: a SOFT or TSC PMC, sane flags and period. */
static void gen_pmcallocate_good(struct fuzz_ctx *c,
				 struct pmc_op_pmcallocate *a)
{
	static const uint32_t modes[] = {
		PMC_MODE_TC, PMC_MODE_TC, PMC_MODE_TS, PMC_MODE_TS,
		PMC_MODE_SC, PMC_MODE_SS,
	};
	bool sys;

	static const uint32_t hw[] = { PMC_CLASS_IAP, PMC_CLASS_IAF,
				       PMC_CLASS_K8 };
	bool hwc = one_in(&c->rng, 5);

	a->pm_class = hwc ? hw[rnd(&c->rng, 3)] :
		      one_in(&c->rng, 8) ? PMC_CLASS_TSC : PMC_CLASS_SOFT;
	a->pm_mode = modes[rnd(&c->rng, sizeof(modes) / sizeof(modes[0]))];
	sys = a->pm_mode == PMC_MODE_SS || a->pm_mode == PMC_MODE_SC;
	a->pm_cpu = sys ? rnd(&c->rng, 2) : PMC_CPU_ANY;
	a->pm_event = rnd(&c->rng, PMC_SOFT_NEVENTS);
	if (hwc) {
		/* Instructions (IAP, K8: 0xc0; IAF: fixed counter 0-2), user mode. */
		a->pm_event = a->pm_class == PMC_CLASS_IAF ? rnd(&c->rng, 3) : 0xc0;
		a->pm_config = PMC_X86_CONFIG_USR |
			       (one_in(&c->rng, 4) ? PMC_X86_CONFIG_OS : 0);
	}
	a->pm_flags = sys ? 0 : (uint32_t)rng_next(&c->rng) &
		      (PMC_F_DESCENDANTS | PMC_F_LOG_PROCCSW |
		       PMC_F_LOG_PROCEXIT);
	if (a->pm_mode == PMC_MODE_TS || a->pm_mode == PMC_MODE_SS) {
		if (one_in(&c->rng, 2))
			a->pm_flags |= PMC_F_CALLCHAIN;
		if (one_in(&c->rng, 8)) {
			a->pm_flags |= PMC_F_USERSTACK;
			a->pm_ustack_size = 8 * rnd(&c->rng, 1025);
		}
		/* CLOCK.PROF: ns (at least 10 us unprivileged); others: events */
		a->pm_count = hwc ? 10000 + rnd(&c->rng, 1000000) :
			      a->pm_event == PMC_SOFT_CLOCK_PROF ?
			      100000 + rnd(&c->rng, 10000000) :
			      1 + rnd(&c->rng, 1000);
	} else {
		a->pm_count = one_in(&c->rng, 2) ? 0 : rng_next(&c->rng);
	}
}

static void gen_pmcallocate(struct fuzz_ctx *c, void *arg)
{
	struct pmc_op_pmcallocate *a = arg;
	bool sys;

	if (rnd(&c->rng, 3)) {
		gen_pmcallocate_good(c, a);
		fuzz_reserved(c, a->pm_reserved, sizeof(a->pm_reserved));
		return;
	}

	a->pm_class = pick_class(c);
	a->pm_mode = one_in(&c->rng, 10) ? rnd(&c->rng, 8) : rnd(&c->rng, 4);
	sys = a->pm_mode == PMC_MODE_SS || a->pm_mode == PMC_MODE_SC;
	a->pm_cpu = one_in(&c->rng, 8) ? fuzz_pick_cpu(c) :
		    sys ? rnd(&c->rng, 2) : PMC_CPU_ANY;
	a->pm_event = one_in(&c->rng, 10) ? (uint32_t)rng_next(&c->rng) :
					     rnd(&c->rng, PMC_SOFT_NEVENTS + 1);
	if (a->pm_class == PMC_CLASS_IAP || a->pm_class == PMC_CLASS_K8)
		a->pm_event = one_in(&c->rng, 2) ? 0xc0 : 0x3c;
	a->pm_flags = one_in(&c->rng, 10) ? (uint32_t)rng_next(&c->rng) :
		      (uint32_t)rng_next(&c->rng) & PMC_F_ALLOCATE_MASK;
	if (one_in(&c->rng, 2))
		a->pm_flags &= ~PMC_F_KGMON;
	a->pm_caps = one_in(&c->rng, 3) ? (uint32_t)rng_next(&c->rng) &
					   PMC_CAP_MASK : 0;
	a->pm_pmcid = (uint32_t)rng_next(&c->rng);	/* out */
	a->pm_count = pick_count(c);
	a->pm_config = one_in(&c->rng, 4) ? rng_next(&c->rng) &
			(one_in(&c->rng, 2) ? PMC_X86_CONFIG_MASK : ~0ULL) : 0;
	a->pm_config1 = one_in(&c->rng, 20) ? rng_next(&c->rng) : 0;
	a->pm_ustack_size = one_in(&c->rng, 4) ? (uint32_t)rng_next(&c->rng) &
			    0x1ffff : 0;
	fuzz_reserved(c, a->pm_reserved, sizeof(a->pm_reserved));
}

static const char *chk_pmcallocate(struct fuzz_ctx *c, const void *arg,
				   int fdi)
{
	const struct pmc_op_pmcallocate *a = arg;

	if (a->pm_pmcid == 0 || a->pm_pmcid > 0x7fffffff)
		return "PMCALLOCATE: success with a nonsense handle";
	fuzz_note_id(c, fdi, a->pm_pmcid);
	return NULL;
}

static void gen_attach(struct fuzz_ctx *c, void *arg, int fdi)
{
	struct pmc_op_pmcattach *a = arg;

	a->pm_pmcid = fuzz_pick_id(c, fdi);
	a->pm_pid = fuzz_pick_pid(c);
	fuzz_reserved(c, a->pm_reserved, sizeof(a->pm_reserved));
}

/*
 * Generators of operations on a PMC get the descriptor index through the
 * context's scratch (fuzz_test.c sets c->slot->cur_op's descriptor).
 */
extern __thread int fuzz_cur_fdi;

static void gen_pmcattach(struct fuzz_ctx *c, void *arg)
{
	gen_attach(c, arg, fuzz_cur_fdi);
}

static void gen_getmsr(struct fuzz_ctx *c, void *arg)
{
	struct pmc_op_getmsr *a = arg;

	a->pm_pmcid = fuzz_pick_id(c, fuzz_cur_fdi);
	a->pm_msr = (uint32_t)rng_next(&c->rng);
	fuzz_reserved(c, a->pm_reserved, sizeof(a->pm_reserved));
}

static void gen_simple(struct fuzz_ctx *c, void *arg)
{
	struct pmc_op_simple *a = arg;

	a->pm_pmcid = fuzz_pick_id(c, fuzz_cur_fdi);
	fuzz_reserved(c, &a->pm_reserved, sizeof(a->pm_reserved));
}

static void gen_pmcrw(struct fuzz_ctx *c, void *arg)
{
	struct pmc_op_pmcrw *a = arg;

	a->pm_pmcid = fuzz_pick_id(c, fuzz_cur_fdi);
	a->pm_flags = one_in(&c->rng, 10) ? (uint32_t)rng_next(&c->rng) :
		      (uint32_t)rng_next(&c->rng) & PMC_F_RW_MASK;
	a->pm_value = pick_count(c);
}

static void gen_setcount(struct fuzz_ctx *c, void *arg)
{
	struct pmc_op_pmcsetcount *a = arg;

	a->pm_pmcid = fuzz_pick_id(c, fuzz_cur_fdi);
	a->pm_count = pick_count(c);
	fuzz_reserved(c, &a->pm_reserved, sizeof(a->pm_reserved));
}

static void gen_getcaps(struct fuzz_ctx *c, void *arg)
{
	struct pmc_op_caps *a = arg;

	a->pm_pmcid = fuzz_pick_id(c, fuzz_cur_fdi);
	a->pm_caps = (uint32_t)rng_next(&c->rng);
}

static void gen_getreadslot(struct fuzz_ctx *c, void *arg)
{
	struct pmc_op_getreadslot *a = arg;

	a->pm_pmcid = fuzz_pick_id(c, fuzz_cur_fdi);
	a->pm_slot = (uint32_t)rng_next(&c->rng);
	a->pm_gen = (uint32_t)rng_next(&c->rng);
	fuzz_reserved(c, &a->pm_reserved, sizeof(a->pm_reserved));
}

static void gen_configurelog(struct fuzz_ctx *c, void *arg)
{
	struct pmc_op_configurelog *a = arg;

	a->pm_logfd = fuzz_pick_logfd(c);
	a->pm_flags = one_in(&c->rng, 20) ? (uint32_t)rng_next(&c->rng) : 0;
	fuzz_reserved(c, a->pm_reserved, sizeof(a->pm_reserved));
}

static void gen_writelog(struct fuzz_ctx *c, void *arg)
{
	struct pmc_op_writelog *a = arg;

	a->pm_userdata = (uint32_t)rng_next(&c->rng);
	fuzz_reserved(c, &a->pm_reserved, sizeof(a->pm_reserved));
}

static void gen_getdyneventinfo(struct fuzz_ctx *c, void *arg)
{
	struct pmc_op_getdyneventinfo *a = arg;

	a->pm_class = one_in(&c->rng, 4) ? pick_class(c) : PMC_CLASS_SOFT;
	a->pm_nevent = one_in(&c->rng, 3) ? (uint32_t)rng_next(&c->rng) :
					     rnd(&c->rng, 12);
	a->pm_events = one_in(&c->rng, 4) ? 0 :
		       fuzz_pick_uptr(c, 16 *
				      sizeof(struct pmc_dyn_event_descr));
	fuzz_reserved(c, a->pm_reserved, sizeof(a->pm_reserved));
}

#define OP(nm, st, e, g, k) \
	[PMC_OP_##nm] = { #nm, HWPMC_IOC_##nm, st, e, g, k }

const struct fuzz_op fuzz_ops[] = {
	OP(CONFIGURELOG, sizeof(struct pmc_op_configurelog), e_configurelog,
	   gen_configurelog, NULL),
	OP(FLUSHLOG, 0, e_flushlog, NULL, NULL),
	OP(GETCPUINFO, sizeof(struct pmc_op_getcpuinfo), e_getcpuinfo,
	   gen_nothing, chk_getcpuinfo),
	OP(GETDRIVERSTATS, sizeof(struct pmc_op_getdriverstats),
	   e_getdriverstats, gen_nothing, NULL),
	OP(GETMODULEVERSION, sizeof(struct pmc_op_getmoduleversion),
	   e_getmoduleversion, gen_getmoduleversion, chk_getmoduleversion),
	OP(GETPMCINFO, sizeof(struct pmc_op_getpmcinfo), e_getpmcinfo,
	   gen_getpmcinfo, NULL),
	OP(PMCADMIN, sizeof(struct pmc_op_pmcadmin), e_pmcadmin, gen_pmcadmin,
	   NULL),
	OP(PMCALLOCATE, sizeof(struct pmc_op_pmcallocate), e_pmcallocate,
	   gen_pmcallocate, chk_pmcallocate),
	OP(PMCATTACH, sizeof(struct pmc_op_pmcattach), e_pmcattach,
	   gen_pmcattach, NULL),
	OP(PMCDETACH, sizeof(struct pmc_op_pmcattach), e_pmcdetach,
	   gen_pmcattach, NULL),
	OP(PMCGETMSR, sizeof(struct pmc_op_getmsr), e_getmsr, gen_getmsr, NULL),
	OP(PMCRELEASE, sizeof(struct pmc_op_simple), e_simple, gen_simple, NULL),
	OP(PMCRW, sizeof(struct pmc_op_pmcrw), e_pmcrw, gen_pmcrw, NULL),
	OP(PMCSETCOUNT, sizeof(struct pmc_op_pmcsetcount), e_setcount,
	   gen_setcount, NULL),
	OP(PMCSTART, sizeof(struct pmc_op_simple), e_pmcstart, gen_simple, NULL),
	OP(PMCSTOP, sizeof(struct pmc_op_simple), e_pmcstop, gen_simple, NULL),
	OP(WRITELOG, sizeof(struct pmc_op_writelog), e_writelog, gen_writelog,
	   NULL),
	OP(CLOSELOG, 0, e_closelog, NULL, NULL),
	OP(GETDYNEVENTINFO, sizeof(struct pmc_op_getdyneventinfo),
	   e_getdyneventinfo, gen_getdyneventinfo, NULL),
	OP(GETCAPS, sizeof(struct pmc_op_caps), e_getcaps, gen_getcaps, NULL),
	OP(GETREADSLOT, sizeof(struct pmc_op_getreadslot), e_getreadslot,
	   gen_getreadslot, NULL),
};

const unsigned int fuzz_nops = sizeof(fuzz_ops) / sizeof(fuzz_ops[0]);

_Static_assert(sizeof(fuzz_ops) / sizeof(fuzz_ops[0]) == PMC_OP_MAX + 1,
	       "one entry per PMC_OP_*");
_Static_assert(sizeof(struct pmc_op_getcpuinfo) <=
	       sizeof(((struct fuzz_arg *)0)->buf),
	       "the argument buffer holds the largest argument");
