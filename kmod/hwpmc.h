/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hwpmc: internal declarations shared by the module's files.
 */
#ifndef _HWPMC_H
#define _HWPMC_H

#include <linux/types.h>
#include <linux/mutex.h>
#include <linux/atomic.h>
#include <linux/hwpmc.h>

struct hwpmc_pmc;
struct hwpmc_owner;

/* Module parameters (read-only tunables), validated at load. */
extern int hwpmc_callchaindepth;
extern int hwpmc_hashsize;
extern int hwpmc_logbuffersize;
extern int hwpmc_mtxpoolsize;
extern int hwpmc_nbuffers;
extern int hwpmc_nsamples;

/*
 * A class of counters: one const ops table each.  Rows of all classes are
 * numbered contiguously; a class owns [firstrow, firstrow + nrows).
 */
struct hwpmc_class_ops {
	const char *name;		/* "TSC", "SOFT", ... */
	u32 class;			/* PMC_CLASS_* */
	u32 caps;			/* PMC_CAP_* the class offers */
	u32 width;			/* counter width in bits */
	/* Probe at load: number of rows, 0 when the class is absent. */
	unsigned int (*probe)(void);
};

struct hwpmc_class {
	const struct hwpmc_class_ops *ops;
	unsigned int firstrow;
	unsigned int nrows;
};

extern const struct hwpmc_class_ops hwpmc_tsc_ops;
extern const struct hwpmc_class_ops hwpmc_soft_ops;

int hwpmc_classes_init(void);
void hwpmc_classes_fini(void);
unsigned int hwpmc_nclasses(void);
const struct hwpmc_class *hwpmc_class_at(unsigned int i);
unsigned int hwpmc_nrows(void);
u32 hwpmc_cputype(void);
void hwpmc_classes_announce(void);

/* Driver statistics (GETDRIVERSTATS). */
struct hwpmc_stats {
	atomic64_t syscalls;
	atomic64_t syscall_errors;
};

extern struct hwpmc_stats hwpmc_stats;

/* One open of /dev/hwpmc: an owner. */
struct hwpmc_owner {
	pid_t tgid;			/* the opening process */
};

long hwpmc_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

#ifdef HWPMC_TESTING
int hwpmc_testing_init(void);
#else
static inline int hwpmc_testing_init(void) { return 0; }
#endif

#endif /* _HWPMC_H */
