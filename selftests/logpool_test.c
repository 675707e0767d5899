// SPDX-License-Identifier: GPL-2.0
/*
 * What logs may take, for any user (/dev/hwpmc is 0666):
 *  - writers: a bounded pool of kernel threads, not one per log; an
 *    unprivileged user gets at most kernel.hwpmc.max_logs_per_user logs
 *    (EMFILE beyond), and every log still delivers its records;
 *  - buffers: a log of an unprivileged owner holds at most its share of the
 *    pool (kernel.hwpmc.log_buffer_share) and leaves the reserve
 *    (kernel.hwpmc.log_buffer_reserve) to privileged owners, so that an
 *    unprivileged owner logging into a pipe nobody reads cannot starve
 *    root's logs; what it drops is reported (taken = logged + dropped);
 *  - a writer killed from outside (SIGKILL) neither spins nor loses the
 *    log.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_log_util.h"

#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define NOBODY	65534
#define SYSCTL(name)	"/proc/sys/kernel/hwpmc/" name
#define LOGPATH	"/tmp/hwpmc-logpool-test.log"

static int writelog(int fd, __u32 data)
{
	struct pmc_op_writelog w = { .pm_userdata = data };

	return hwpmc_ioctl_err(fd, HWPMC_IOC_WRITELOG, &w);
}

static int become(uid_t uid)
{
	if (!uid)
		return 0;
	return setresgid(uid, uid, uid) || setresuid(uid, uid, uid);
}

/* Kernel threads (children of kthreadd, pid 2). */
static int count_kthreads(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300], buf[512], *p;
		int ppid = -1;
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f)) {
			p = strrchr(buf, ')');
			if (p && sscanf(p + 2, "%*c %d", &ppid) == 1 && ppid == 2)
				n++;
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

/* pids of the threads named "hwpmc-log..." (the log writers). */
static int writer_pids(pid_t *pids, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) && n < max) {
		char path[300], name[64] = "";
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f) &&
		    !strncmp(name, "hwpmc-log", 9))
			pids[n++] = atoi(e->d_name);
		fclose(f);
	}
	closedir(d);
	return n;
}

/* utime + stime of @pid in clock ticks, or -1. */
static long long cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	p = p ? strrchr(buf, ')') : NULL;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			 &ut, &st) != 2)
		return -1;
	return ut + st;
}

static int count_type(const struct pmclog_header *h, void *arg)
{
	int *counts = arg;

	counts[h->pl_type]++;
	if (h->pl_type == PMCLOG_TYPE_DROPNOTIFY)
		counts[0] += ((const struct pmclog_dropnotify *)h)->pl_records;
	return 0;
}

/* Read @fd until EOF into a growing buffer; its length, or -1. */
static ssize_t read_all(int fd, char **out)
{
	size_t len = 0, cap = 1 << 20;
	char *buf = malloc(cap);
	ssize_t n;

	if (!buf)
		return -1;
	for (;;) {
		if (len == cap) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb) {
				free(buf);
				return -1;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	*out = buf;
	return n < 0 ? -1 : (ssize_t)len;
}

/* --- a bounded pool of writers, a per-user count of logs --------------- */

#define NLOGS	300

struct many_result {
	int ok, emfile, other, other_err;
	int kt0, kt1, nuser, flush_errs;
};

static int many_logs(uid_t uid, int out)
{
	static int fds[NLOGS];
	struct rlimit one = { 1, 1 };
	struct many_result r = { 0 };
	int p[2], i, counts[PMCLOG_TYPE_MAX + 1] = { 0 };
	char *buf;
	ssize_t len;

	if (become(uid) || pipe(p))
		return 10;
	/* As the issue found it: no process may be created... */
	if (uid && setrlimit(RLIMIT_NPROC, &one))
		return 11;
	r.kt0 = count_kthreads();
	for (i = 0; i < NLOGS; i++) {
		int err;

		fds[i] = hwpmc_open();
		if (fds[i] < 0)
			return 12;
		err = hwpmc_configure_log(fds[i], p[1]);
		if (!err) {
			r.ok++;
		} else if (err == EMFILE) {
			r.emfile++;
			close(fds[i]);
			fds[i] = -1;
		} else {
			r.other++;
			r.other_err = err;
		}
	}
	/* ...but kernel threads, one per log, were. */
	r.kt1 = count_kthreads();
	for (i = 0; i < NLOGS; i++) {
		if (fds[i] < 0)
			continue;
		if (writelog(fds[i], i) || hwpmc_flushlog(fds[i]))
			r.flush_errs++;
	}
	for (i = 0; i < NLOGS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	close(p[1]);
	len = read_all(p[0], &buf);
	if (len < 0)
		return 13;
	hwpmc_for_each_record(buf, len, count_type, counts);
	r.nuser = counts[PMCLOG_TYPE_USERDATA];
	free(buf);
	return hwpmc_xwrite(out, &r, sizeof(r)) ? 14 : 0;
}

FIXTURE(many) {
};

FIXTURE_VARIANT(many) {
	uid_t uid;
};

FIXTURE_VARIANT_ADD(many, root) {
	.uid = 0,
};

FIXTURE_VARIANT_ADD(many, nobody) {
	.uid = NOBODY,
};

FIXTURE_SETUP(many)
{
}

FIXTURE_TEARDOWN(many)
{
}

TEST_F(many, logs_share_a_bounded_pool_of_writers)
{
	long cap = hwpmc_sysctl_get(SYSCTL("max_logs_per_user"));
	long writers = hwpmc_sysctl_get(SYSCTL("log_writers"));
	struct many_result r;
	int res[2], status;
	pid_t child;

	ASSERT_LT(0, cap) TH_LOG("no kernel.hwpmc.max_logs_per_user");
	ASSERT_LT(0, writers) TH_LOG("no kernel.hwpmc.log_writers");
	ASSERT_EQ(0, pipe(res));
	fflush(stdout);
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		close(res[0]);
		_exit(many_logs(variant->uid, res[1]));
	}
	close(res[1]);
	ASSERT_EQ(0, hwpmc_xread(res[0], &r, sizeof(r)));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	TH_LOG("%d logs, %d EMFILE, kernel threads %d -> %d", r.ok, r.emfile,
	       r.kt0, r.kt1);
	EXPECT_EQ(0, r.other) TH_LOG("CONFIGURELOG failed with %d",
				     r.other_err);
	if (variant->uid) {
		/* EMFILE beyond the cap. */
		EXPECT_EQ(cap < NLOGS ? cap : NLOGS, r.ok);
		EXPECT_EQ(NLOGS - r.ok, r.emfile);
	} else {
		/* CAP_PERFMON is not counted. */
		EXPECT_EQ(NLOGS, r.ok);
	}
	/* The writers and a few kworkers, not a thread per log. */
	EXPECT_GE(writers + 8, r.kt1 - r.kt0);
	/* Every log delivered its record. */
	EXPECT_EQ(0, r.flush_errs);
	EXPECT_EQ(r.ok, r.nuser);
}

/* --- buffers: a share per log, a reserve for privileged owners ---------- */

struct sysctls {
	long share, reserve;
};

static int set_pool_sysctls(struct sysctls *saved, long share, long reserve)
{
	saved->share = hwpmc_sysctl_get(SYSCTL("log_buffer_share"));
	saved->reserve = hwpmc_sysctl_get(SYSCTL("log_buffer_reserve"));
	if (saved->share < 0 || saved->reserve < 0)
		return ENOENT;
	return hwpmc_sysctl_set(SYSCTL("log_buffer_share"), share) ?:
	       hwpmc_sysctl_set(SYSCTL("log_buffer_reserve"), reserve);
}

static void restore_pool_sysctls(const struct sysctls *saved)
{
	if (saved->share > 0)
		hwpmc_sysctl_set(SYSCTL("log_buffer_share"), saved->share);
	if (saved->reserve >= 0)
		hwpmc_sysctl_set(SYSCTL("log_buffer_reserve"), saved->reserve);
}

/*
 * As nobody, log into pipe @wfd (nobody reads it yet) until a WRITELOG
 * gets ENOBUFS (at most @max), try @extra more (all dropped), report how
 * many went in; then, when told, CLOSELOG and exit.
 */
struct filler {
	int wfd, extra;
	long max;
};

static int fill_until_enobufs(struct hwpmc_child *me, void *arg)
{
	struct filler *f = arg;
	int fd, err = 0, i;
	__u64 n = 0, go;

	if (become(NOBODY))
		return 10;
	fd = hwpmc_open();
	if (fd < 0 || hwpmc_configure_log(fd, f->wfd))
		return 11;
	close(f->wfd);
	while (n < (__u64)f->max && !(err = writelog(fd, n)))
		n++;
	if (err && err != ENOBUFS)
		return 12;
	/* Nothing was freed since: these are dropped too. */
	for (i = 0; err && i < f->extra; i++)
		if (writelog(fd, i) != ENOBUFS)
			return 14;
	if (hwpmc_send_u64(me, err ? n : ~0ull) || hwpmc_recv_u64(me, &go))
		return 13;
	/* The drops since the first ENOBUFS go into a DROPNOTIFY. */
	if (hwpmc_closelog(fd))
		return 15;
	close(fd);
	return 0;
}

/*
 * An unprivileged owner logs into a pipe nobody reads until the pool
 * refuses it: it stops short of the reserve, and root's log still gets
 * buffers.  Then its reader drains the pipe: every record that went in is
 * there, and a DROPNOTIFY counts every one that did not.
 */
TEST(unprivileged_log_cannot_starve_root)
{
	struct filler f = { .max = 2000000, .extra = 5 };
	int p[2], fd, logfd, counts[PMCLOG_TYPE_MAX + 1] = { 0 };
	struct hwpmc_child c;
	struct sysctls saved = { -1, -1 };
	__u64 n;
	ssize_t len;
	size_t flen;
	char *buf;

	/* One log may take any part of the pool but its last 90%. */
	ASSERT_EQ(0, set_pool_sysctls(&saved, 100, 90));
	ASSERT_EQ(0, pipe(p));
	f.wfd = p[1];
	ASSERT_EQ(0, hwpmc_child_start(&c, fill_until_enobufs, &f));
	close(p[1]);
	ASSERT_EQ(0, hwpmc_recv_u64(&c, &n));
	if (n == ~0ull)
		restore_pool_sysctls(&saved);
	ASSERT_NE(~0ull, n) TH_LOG("the unprivileged log never ran out of buffers");
	TH_LOG("the unprivileged log took %llu records", (unsigned long long)n);
	/* Root's log still gets buffers, and writes them. */
	fd = hwpmc_open();
	ASSERT_LE(0, fd);
	logfd = open(LOGPATH, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT_LE(0, logfd);
	ASSERT_EQ(0, hwpmc_configure_log(fd, logfd));
	EXPECT_EQ(0, writelog(fd, 42));
	EXPECT_EQ(0, hwpmc_flushlog(fd));
	EXPECT_EQ(0, hwpmc_closelog(fd));
	close(fd);
	close(logfd);
	buf = hwpmc_slurp(LOGPATH, &flen);
	ASSERT_NE(NULL, buf);
	hwpmc_for_each_record(buf, flen, count_type, counts);
	EXPECT_EQ(1, counts[PMCLOG_TYPE_USERDATA]);
	free(buf);
	unlink(LOGPATH);
	restore_pool_sysctls(&saved);
	/* taken = logged + dropped, for the unprivileged log. */
	memset(counts, 0, sizeof(counts));
	ASSERT_EQ(0, hwpmc_send_u64(&c, 1));
	len = read_all(p[0], &buf);
	ASSERT_LT(0, len);
	hwpmc_for_each_record(buf, len, count_type, counts);
	free(buf);
	EXPECT_EQ(n, counts[PMCLOG_TYPE_USERDATA]);
	/* The first ENOBUFS and the extra ones. */
	EXPECT_EQ(1 + f.extra, counts[0]);
	EXPECT_EQ(0, hwpmc_child_wait(&c));
	close(p[0]);
}

/* Buffers in @pct percent of the pool (nbuffers per possible CPU). */
static long share_buffers(long pct)
{
	long nb = hwpmc_sysctl_get("/sys/module/hwpmc/parameters/nbuffers");
	long cpus = 0, a, b;
	char line[256], *p;
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");

	if (!f || !fgets(line, sizeof(line), f)) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	for (p = strtok(line, ","); p; p = strtok(NULL, ",")) {
		if (sscanf(p, "%ld-%ld", &a, &b) == 2)
			cpus += b - a + 1;
		else
			cpus++;
	}
	return nb * cpus * pct / 100 > 1 ? nb * cpus * pct / 100 : 1;
}

/* One unprivileged log holds at most its share; another still gets one. */
TEST(unprivileged_log_holds_its_share_only)
{
	struct filler f = { .max = 200000, .extra = 0 };
	struct hwpmc_child a, b;
	struct sysctls saved = { -1, -1 };
	int pa[2], pb[2];
	__u64 na, nb;

	/* 2% of the pool: one buffer per log; no reserve. */
	ASSERT_EQ(0, set_pool_sysctls(&saved, 2, 0));
	ASSERT_EQ(0, pipe(pa));
	ASSERT_EQ(0, pipe(pb));
	f.wfd = pa[1];
	ASSERT_EQ(0, hwpmc_child_start(&a, fill_until_enobufs, &f));
	close(pa[1]);
	ASSERT_EQ(0, hwpmc_recv_u64(&a, &na));
	f.wfd = pb[1];
	f.max = 10;
	ASSERT_EQ(0, hwpmc_child_start(&b, fill_until_enobufs, &f));
	close(pb[1]);
	ASSERT_EQ(0, hwpmc_recv_u64(&b, &nb));
	restore_pool_sysctls(&saved);
	TH_LOG("the first log took %llu records", (unsigned long long)na);
	EXPECT_NE(~0ull, na) TH_LOG("the first log was never refused a buffer");
	/* Its share (and its INITIALIZE): 24-byte USERDATA records. */
	EXPECT_GE((share_buffers(2) + 1) *
		  (hwpmc_sysctl_get("/sys/module/hwpmc/parameters/logbuffersize") *
		   1024 / 24), na);
	/* The second log was not refused. */
	EXPECT_EQ(~0ull, nb);
	hwpmc_child_kill(&a);
	hwpmc_child_kill(&b);
	close(pa[0]);
	close(pb[0]);
}

/* --- the writers and an external SIGKILL -------------------------------- */

/* Writer CPU ticks over 1 s, after SIGKILL to every writer. */
static long long kill_writers_and_measure(void)
{
	pid_t pids[64];
	long long t0[64], t1, used = 0;
	int i, n = writer_pids(pids, 64);

	if (n <= 0)
		return -1;
	for (i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	usleep(200000);
	for (i = 0; i < n; i++)
		t0[i] = cpu_ticks(pids[i]);
	sleep(1);
	for (i = 0; i < n; i++) {
		t1 = cpu_ticks(pids[i]);
		if (t0[i] >= 0 && t1 >= 0)
			used += t1 - t0[i];
	}
	return used;
}

static int stall_and_flush(struct hwpmc_child *me, void *arg)
{
	int wfd = *(int *)arg, fd = hwpmc_open(), i;
	__u64 go;

	if (fd < 0 || hwpmc_configure_log(fd, wfd))
		return 10;
	close(wfd);
	/* 600 KB: more than the pipe holds, in more than one buffer. */
	for (i = 0; i < 20000; i++)
		if (writelog(fd, i))
			return 11;
	if (hwpmc_send_u64(me, 1) || hwpmc_recv_u64(me, &go))
		return 12;
	/* Returns once the reader has read everything. */
	return hwpmc_flushlog(fd) ? 13 : 0;
}

/*
 * A log writer blocked on a full pipe is killed with SIGKILL from outside
 * (root can): it must not spin, and the log goes on once the pipe is read.
 */
TEST(writer_killed_from_outside_does_not_spin)
{
	int p[2], counts[PMCLOG_TYPE_MAX + 1] = { 0 };
	struct hwpmc_child c;
	long long used;
	ssize_t len;
	char *buf;
	__u64 v;

	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, hwpmc_child_start(&c, stall_and_flush, &p[1]));
	close(p[1]);
	ASSERT_EQ(0, hwpmc_recv_u64(&c, &v));
	ASSERT_EQ(0, hwpmc_send_u64(&c, 1));
	usleep(300000);		/* the flush has shipped its buffer */
	used = kill_writers_and_measure();
	ASSERT_LE(0, used) TH_LOG("no log writer thread");
	/* Clock ticks are 1/100 s: the writers used at most 10% of 1 s. */
	EXPECT_GE(10, used) TH_LOG("the writers used %lld ticks in 1 s", used);
	/* The log survived: reading the pipe lets the flush finish. */
	len = read_all(p[0], &buf);
	ASSERT_LT(0, len);
	hwpmc_for_each_record(buf, len, count_type, counts);
	free(buf);
	EXPECT_EQ(20000, counts[PMCLOG_TYPE_USERDATA]);
	EXPECT_EQ(0, hwpmc_child_wait(&c));
	close(p[0]);
}

/* The same with the writers idle: they must go back to sleep. */
TEST(idle_writer_killed_does_not_spin)
{
	int fd = hwpmc_open(), logfd, counts[PMCLOG_TYPE_MAX + 1] = { 0 };
	long long used;
	size_t len;
	char *buf;

	ASSERT_LE(0, fd);
	logfd = open(LOGPATH, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT_LE(0, logfd);
	ASSERT_EQ(0, hwpmc_configure_log(fd, logfd));
	ASSERT_EQ(0, writelog(fd, 1));
	ASSERT_EQ(0, hwpmc_flushlog(fd));
	used = kill_writers_and_measure();
	ASSERT_LE(0, used) TH_LOG("no log writer thread");
	EXPECT_GE(10, used) TH_LOG("the writers used %lld ticks in 1 s", used);
	/* And they still write. */
	EXPECT_EQ(0, writelog(fd, 2));
	EXPECT_EQ(0, hwpmc_flushlog(fd));
	close(fd);
	close(logfd);
	buf = hwpmc_slurp(LOGPATH, &len);
	ASSERT_NE(NULL, buf);
	hwpmc_for_each_record(buf, len, count_type, counts);
	free(buf);
	unlink(LOGPATH);
	EXPECT_EQ(2, counts[PMCLOG_TYPE_USERDATA]);
}

/* --- a stalled log cannot keep the writers from the others ------------- */

#define NSTALLED	8

static void *flush_thread(void *arg)
{
	hwpmc_flushlog(*(int *)arg);	/* blocks: nobody reads the pipe */
	return NULL;
}

/*
 * As nobody: NSTALLED logs (more than there are writers) whose pipes
 * nobody reads, each with a FLUSHLOG waiting; then a log on a file must
 * still be written promptly.  Returns 0 or a step; *ms the flush's time.
 */
static int stalled_then_file(struct hwpmc_child *me, void *arg)
{
	static int fds[NSTALLED], pipes[NSTALLED][2];
	pthread_t thr[NSTALLED];
	int i, j, fd, logfd;
	__u64 t0, ms;

	if (become(NOBODY))
		return 10;
	for (i = 0; i < NSTALLED; i++) {
		fds[i] = hwpmc_open();
		if (fds[i] < 0 || pipe(pipes[i]) ||
		    hwpmc_configure_log(fds[i], pipes[i][1]))
			return 11;
		/* 96 KB: more than the pipe holds. */
		for (j = 0; j < 4000; j++)
			if (writelog(fds[i], j))
				return 12;
		if (pthread_create(&thr[i], NULL, flush_thread, &fds[i]))
			return 13;
	}
	usleep(500000);		/* every writer is blocked by now */
	fd = hwpmc_open();
	logfd = open(LOGPATH, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || logfd < 0 || hwpmc_configure_log(fd, logfd))
		return 14;
	t0 = hwpmc_clock_ns(CLOCK_MONOTONIC);
	if (writelog(fd, 1) || hwpmc_flushlog(fd))
		return 15;
	ms = (hwpmc_clock_ns(CLOCK_MONOTONIC) - t0) / 1000000;
	if (hwpmc_send_u64(me, ms))
		return 16;
	/* The stalled flushes never return: exit with them blocked. */
	_exit(0);
}

TEST(stalled_logs_do_not_starve_the_others)
{
	long writers = hwpmc_sysctl_get(SYSCTL("log_writers"));
	struct hwpmc_child c;
	__u64 ms = ~0ull;

	ASSERT_LT(0, writers) TH_LOG("no kernel.hwpmc.log_writers");
	ASSERT_GT(NSTALLED, writers) TH_LOG("more writers than stalled logs");
	ASSERT_EQ(0, hwpmc_child_start(&c, stalled_then_file, NULL));
	EXPECT_EQ(0, hwpmc_recv_u64(&c, &ms));
	TH_LOG("the file log was written in %llu ms", (unsigned long long)ms);
	/* A slice is 100 ms; the guest is slow: 5 s is "not starved". */
	EXPECT_GT(5000, ms);
	EXPECT_EQ(0, hwpmc_child_wait(&c));
	unlink(LOGPATH);
}

TEST_HARNESS_MAIN
