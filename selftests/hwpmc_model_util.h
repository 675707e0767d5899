/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The PMU model for the kselftests of the other interfaces (pctr_test,
 * perfmon_test, pmc9_test): load the test flavor of the module with
 * pmu_model=MODEL, advance the model's counters, read its registers, and
 * load the release module back at the end.  The same steps as
 * hwmodel_test's (see its header comment for the model).
 */
#ifndef HWPMC_MODEL_UTIL_H
#define HWPMC_MODEL_UTIL_H

#include <sched.h>
#include <stdarg.h>
#include <sys/wait.h>
#include "hwpmc_util.h"

#define MODEL_DIR	"/sys/kernel/debug/hwpmc-model"
#define PARAM_MODEL	"/sys/module/hwpmc/parameters/pmu_model"

static inline int model_module_loaded(void)
{
	return !access("/sys/module/hwpmc", F_OK);
}

/* Has the loaded module a programmable class (IAP, K8)?  -1: no open. */
static inline int model_has_counters(void)
{
	int fd = hwpmc_open(), n;

	if (fd < 0)
		return -1;
	n = hwpmc_class_firstrow(fd, PMC_CLASS_IAP, NULL) >= 0 ||
	    hwpmc_class_firstrow(fd, PMC_CLASS_K8, NULL) >= 0;
	close(fd);
	return n;
}

/* The pmu_model parameter of the loaded module, or ENOENT (release). */
static inline int model_loaded(char *buf, size_t len)
{
	FILE *f = fopen(PARAM_MODEL, "r");

	if (!f)
		return ENOENT;
	if (!fgets(buf, len, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/*
 * The test flavor with pmu_model=@model (a fresh load unless it is loaded
 * already); @why says what failed.  @model "" is the test flavor without a
 * model: the plain guest's classes.
 */
static inline int model_use(const char *model, char *why, size_t len)
{
	char cur[32], params[64];
	int err;

	if (!model_loaded(cur, sizeof(cur)) && !strcmp(cur, model) &&
	    (!*model || !access(MODEL_DIR "/advance", W_OK)))
		return 0;
	err = hwpmc_module_unload_wait();
	if (err && err != ENOENT) {
		snprintf(why, len, "unloading hwpmc: %s (is a device open?)",
			 strerror(err));
		return err;
	}
	snprintf(params, sizeof(params), "pmu_model=%s", model);
	err = hwpmc_module_load("test/", *model ? params : "");
	if (err) {
		snprintf(why, len, "loading test/hwpmc.ko %s: %s", params,
			 strerror(err));
		return err;
	}
	if (*model && access(MODEL_DIR "/advance", W_OK)) {
		err = errno;
		snprintf(why, len, "%s/advance: %s", MODEL_DIR, strerror(err));
		return err;
	}
	return 0;
}

/* The release module with default parameters, as vm-run loaded it. */
static inline int model_restore_release(void)
{
	char cur[32];
	int err;

	if (model_module_loaded() && model_loaded(cur, sizeof(cur)) == ENOENT)
		return 0;
	err = hwpmc_module_unload_wait();
	if (err && err != ENOENT)
		return err;
	return hwpmc_module_load("", "");
}

/*
 * The binary's safety net: its main process never leaves the test flavor
 * behind (a filtered run, a failed test).  model_at_exit, if the test
 * file sets it (in a constructor), runs first: e.g. it unloads a module
 * that holds hwpmc.
 */
static pid_t model_main_pid;
static void (*model_at_exit)(void);

static void __attribute__((constructor)) model_remember_main(void)
{
	model_main_pid = getpid();
}

static void __attribute__((destructor)) model_leave_release_loaded(void)
{
	char cur[32];

	if (getpid() != model_main_pid)
		return;
	if (model_at_exit)
		model_at_exit();
	if (!model_loaded(cur, sizeof(cur)))
		model_restore_release();
}

/* Advance this CPU's counters: "N", "usr N" or "os N", each optionally " xK". */
static inline int __attribute__((format(printf, 1, 2)))
model_advance(const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	int fd, err = 0;
	ssize_t n;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fd = open(MODEL_DIR "/advance", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	n = write(fd, buf, strlen(buf));
	if (n != (ssize_t)strlen(buf))
		err = n < 0 ? errno : EIO;
	close(fd);
	return err;
}

/* One value of the model's state file: @key ("ctr0", "cr4_pce") of @cpu. */
static inline int model_get(int cpu, const char *key, __u64 *val)
{
	static char buf[65536];
	char want[32], *line, *save = NULL;
	size_t len = 0, k = strlen(key);
	ssize_t n;
	int fd, in = 0;

	fd = open(MODEL_DIR "/state", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = 0;
	snprintf(want, sizeof(want), "cpu %d", cpu);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "cpu ", 4)) {
			in = !strcmp(line, want);
			continue;
		}
		if (in && !strncmp(line, key, k) && line[k] == ' ') {
			*val = strtoull(line + k + 1, NULL, 0);
			return 0;
		}
	}
	return ENOENT;
}

/* @key of @cpu, ~0 if absent; @fmt may hold one %d (a counter index). */
static inline __u64 model_reg(int cpu, const char *fmt, int i)
{
	char key[32];
	__u64 v = ~0ULL;

	snprintf(key, sizeof(key), fmt, i);
	model_get(cpu, key, &v);
	return v;
}

/* What hwpmc reads as perf's /sys/devices/cpu/rdpmc ("real": the file). */
static inline int model_perf_rdpmc(const char *v)
{
	return hwpmc_write_str(MODEL_DIR "/perf_rdpmc", v);
}

/* The CPUs this process may run on: the last in @cpu, the one before in
 * @other (-1 if none). */
static inline void model_cpus(int *cpu, int *other)
{
	cpu_set_t set;
	int i;

	*cpu = *other = -1;
	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	for (i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, &set))
			continue;
		if (*cpu >= 0)
			*other = *cpu;
		*cpu = i;
	}
}

#endif /* HWPMC_MODEL_UTIL_H */
