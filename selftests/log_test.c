// SPDX-License-Identifier: GPL-2.0
/*
 * The log file: CONFIGURELOG / FLUSHLOG / CLOSELOG / WRITELOG, the record
 * format, the errors of hwpmc(4), and the faults a log must survive (a
 * pipe whose reader exits, a full file system, an owner killed while
 * logging).
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_log_util.h"

#include <signal.h>
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define LOGPATH "/tmp/hwpmc-log-test.log"

static int writelog(int fd, __u32 data)
{
	struct pmc_op_writelog w = { .pm_userdata = data };

	return hwpmc_ioctl_err(fd, HWPMC_IOC_WRITELOG, &w);
}

struct summary {
	int count[PMCLOG_TYPE_MAX + 1];
	int first_type, last_type;
	__u64 last_time;
	int time_backwards;
	__u32 userdata[16];
	int nuser;
	struct pmclog_pmcallocate alloc;
	char attach_path[256];
	__u32 version;
};

static int summarize(const struct pmclog_header *h, void *arg)
{
	struct summary *s = arg;

	if (!s->first_type)
		s->first_type = h->pl_type;
	s->last_type = h->pl_type;
	s->count[h->pl_type]++;
	if (h->pl_time < s->last_time)
		s->time_backwards++;
	s->last_time = h->pl_time;
	switch (h->pl_type) {
	case PMCLOG_TYPE_INITIALIZE:
		s->version = ((const struct pmclog_initialize *)h)->pl_version;
		break;
	case PMCLOG_TYPE_USERDATA:
		if (s->nuser < 16)
			s->userdata[s->nuser++] =
				((const struct pmclog_userdata *)h)->pl_userdata;
		break;
	case PMCLOG_TYPE_PMCALLOCATE:
		s->alloc = *(const struct pmclog_pmcallocate *)h;
		break;
	case PMCLOG_TYPE_PMCATTACH:
		snprintf(s->attach_path, sizeof(s->attach_path), "%s",
			 ((const struct pmclog_pmcattach *)h)->pl_path);
		break;
	}
	return 0;
}

static int summarize_file(const char *path, struct summary *s)
{
	size_t len = 0;
	char *buf = hwpmc_slurp(path, &len);
	int n;

	memset(s, 0, sizeof(*s));
	if (!buf)
		return -1;
	n = hwpmc_for_each_record(buf, len, summarize, s);
	free(buf);
	return n;
}

FIXTURE(log) {
	int fd, logfd;
};

FIXTURE_SETUP(log)
{
	self->fd = hwpmc_open();
	ASSERT_LE(0, self->fd);
	self->logfd = open(LOGPATH, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT_LE(0, self->logfd);
}

FIXTURE_TEARDOWN(log)
{
	close(self->fd);
	close(self->logfd);
	unlink(LOGPATH);
}

TEST_F(log, records_in_order)
{
	struct summary s;
	__u32 id;
	int i;

	ASSERT_EQ(0, hwpmc_soft_tc(self->fd, PMC_SOFT_SCHED_SWITCH, 0, &id));
	ASSERT_EQ(0, hwpmc_configure_log(self->fd, self->logfd));
	/* The module holds its own reference: our descriptor may go. */
	close(self->logfd);
	self->logfd = -1;
	ASSERT_EQ(0, hwpmc_attach(self->fd, id, 0));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, writelog(self->fd, 100 + i));
	ASSERT_EQ(0, hwpmc_detach(self->fd, id, 0));
	ASSERT_EQ(0, hwpmc_flushlog(self->fd));
	ASSERT_LT(0, summarize_file(LOGPATH, &s));
	EXPECT_EQ(PMCLOG_TYPE_INITIALIZE, s.first_type);
	EXPECT_EQ(1, s.count[PMCLOG_TYPE_INITIALIZE]);
	EXPECT_EQ(PMCLOG_VERSION, s.version);
	/* The PMC allocated before the log is announced when it starts. */
	EXPECT_EQ(1, s.count[PMCLOG_TYPE_PMCALLOCATE]);
	EXPECT_EQ(id, s.alloc.pl_pmcid);
	EXPECT_STREQ("SOFT-SCHED.SWITCH", s.alloc.pl_name);
	EXPECT_EQ(PMC_MODE_TC, s.alloc.pl_mode);
	EXPECT_EQ(1, s.count[PMCLOG_TYPE_PMCATTACH]);
	EXPECT_NE(NULL, strstr(s.attach_path, "/log_test"))
		TH_LOG("attach path '%s'", s.attach_path);
	EXPECT_EQ(1, s.count[PMCLOG_TYPE_PMCDETACH]);
	ASSERT_EQ(3, s.nuser);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(100 + i, s.userdata[i]);
	EXPECT_EQ(0, s.time_backwards);
	EXPECT_EQ(0, s.count[PMCLOG_TYPE_CLOSELOG]);

	ASSERT_EQ(0, hwpmc_closelog(self->fd));
	ASSERT_LT(0, summarize_file(LOGPATH, &s));
	EXPECT_EQ(PMCLOG_TYPE_CLOSELOG, s.last_type);
	/* Closed: no log any more. */
	EXPECT_EQ(EINVAL, writelog(self->fd, 1));
	EXPECT_EQ(EINVAL, hwpmc_flushlog(self->fd));
	EXPECT_EQ(EINVAL, hwpmc_closelog(self->fd));
}

static int count_map_in(const struct pmclog_header *h, void *arg)
{
	if (h->pl_type == PMCLOG_TYPE_MAP_IN &&
	    ((const struct pmclog_map_in *)h)->pl_pid == (__u32)getpid())
		(*(int *)arg)++;
	return 0;
}

/* A log configured after the attach still hears of the target. */
TEST_F(log, attach_before_configure)
{
	struct summary s;
	size_t len;
	char *buf;
	int nmap = 0;
	__u32 id;

	ASSERT_EQ(0, hwpmc_soft_tc(self->fd, PMC_SOFT_SCHED_SWITCH, 0, &id));
	ASSERT_EQ(0, hwpmc_attach(self->fd, id, 0));
	ASSERT_EQ(0, hwpmc_configure_log(self->fd, self->logfd));
	ASSERT_EQ(0, hwpmc_flushlog(self->fd));
	ASSERT_LT(0, summarize_file(LOGPATH, &s));
	EXPECT_EQ(1, s.count[PMCLOG_TYPE_PMCALLOCATE]);
	EXPECT_EQ(1, s.count[PMCLOG_TYPE_PMCATTACH]);
	EXPECT_NE(NULL, strstr(s.attach_path, "/log_test"));
	buf = hwpmc_slurp(LOGPATH, &len);
	ASSERT_NE(NULL, buf);
	hwpmc_for_each_record(buf, len, count_map_in, &nmap);
	free(buf);
	EXPECT_LE(2, nmap);	/* the program and libc at least */
}

TEST_F(log, configure_errors)
{
	int ro = open("/proc/self/status", O_RDONLY);
	struct pmc_op_configurelog c = { .pm_logfd = self->logfd,
					 .pm_flags = 1 };

	EXPECT_EQ(EBADF, hwpmc_configure_log(self->fd, 999));
	EXPECT_EQ(EBADF, hwpmc_configure_log(self->fd, ro));
	EXPECT_EQ(EBADF, hwpmc_configure_log(self->fd, -2));
	EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_CONFIGURELOG, &c));
	EXPECT_EQ(EINVAL, hwpmc_configure_log(self->fd, -1));	/* none to remove */
	ASSERT_EQ(0, hwpmc_configure_log(self->fd, self->logfd));
	EXPECT_EQ(EBUSY, hwpmc_configure_log(self->fd, self->logfd));	/* active */
	ASSERT_EQ(0, hwpmc_configure_log(self->fd, -1));
	EXPECT_EQ(EINVAL, hwpmc_configure_log(self->fd, -1));
	/* And again: a log can be configured after the last one went. */
	ASSERT_EQ(0, hwpmc_configure_log(self->fd, self->logfd));
	close(ro);
}

/*
 * A log on /dev/hwpmc itself would keep an owner open for ever (its PMCs,
 * the writer and the buffers with it): the caller's own open and another
 * owner's are refused.
 */
TEST_F(log, configure_rejects_device_fd)
{
	int other = hwpmc_open();

	ASSERT_LE(0, other);
	EXPECT_EQ(EINVAL, hwpmc_configure_log(self->fd, self->fd));
	EXPECT_EQ(EINVAL, hwpmc_configure_log(self->fd, other));
	EXPECT_EQ(EINVAL, hwpmc_configure_log(other, self->fd));
	/* Nothing was configured. */
	EXPECT_EQ(EINVAL, hwpmc_flushlog(self->fd));
	EXPECT_EQ(EINVAL, hwpmc_flushlog(other));
	/* A real log still works afterwards. */
	ASSERT_EQ(0, hwpmc_configure_log(self->fd, self->logfd));
	EXPECT_EQ(0, hwpmc_closelog(self->fd));
	close(other);
}

/* Open for writing, but with no write operation: no log either. */
TEST_F(log, configure_rejects_unwritable_file)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);

	ASSERT_LE(0, ep);
	/* epoll files are opened read-write: not EBADF, but EINVAL. */
	EXPECT_EQ(EINVAL, hwpmc_configure_log(self->fd, ep));
	EXPECT_EQ(EINVAL, hwpmc_flushlog(self->fd));
	close(ep);
}

/*
 * /dev/null and /dev/full have ->write but the kernel's writer
 * (kernel_write()) cannot write them: EINVAL at once, not a log whose
 * every write fails and says so in the kernel log (found by fuzz_test).
 */
TEST_F(log, configure_rejects_file_the_kernel_cannot_write)
{
	static const char *const paths[] = { "/dev/null", "/dev/full" };
	unsigned int i;

	for (i = 0; i < 2; i++) {
		int dev = open(paths[i], O_WRONLY | O_CLOEXEC);

		ASSERT_LE(0, dev);
		EXPECT_EQ(EINVAL, hwpmc_configure_log(self->fd, dev)) {
			TH_LOG("%s", paths[i]);
		}
		EXPECT_EQ(EINVAL, hwpmc_flushlog(self->fd));
		close(dev);
	}
}

TEST_F(log, logging_pmcs_start_only_with_a_log)
{
	__u32 id;

	ASSERT_EQ(0, hwpmc_soft_tc(self->fd, PMC_SOFT_SCHED_SWITCH,
				   PMC_F_LOG_PROCEXIT, &id));
	EXPECT_EQ(HWPMC_EDOOFUS, hwpmc_start(self->fd, id));
	ASSERT_EQ(0, hwpmc_configure_log(self->fd, self->logfd));
	EXPECT_EQ(0, hwpmc_start(self->fd, id));
	/* Removing the log stops the PMCs that need it. */
	ASSERT_EQ(0, hwpmc_configure_log(self->fd, -1));
	EXPECT_EQ(HWPMC_EDOOFUS, hwpmc_start(self->fd, id));
}

struct starter {
	int fd;
	__u32 id;
	int stop;
};

static void *keep_starting(void *arg)
{
	struct starter *st = arg;

	while (!__atomic_load_n(&st->stop, __ATOMIC_RELAXED))
		hwpmc_start(st->fd, st->id);
	return NULL;
}

/*
 * CLOSELOG while another thread of the owner keeps starting a PMC that
 * needs the log, and a monitored descendant keeps forking: once CLOSELOG
 * returns the PMC is stopped for good (EDOOFUS, its count frozen), and
 * CLOSELOG is the last record of the log.
 */
TEST_F(log, closelog_races_start_and_fork)
{
	struct starter st = { .fd = self->fd };
	struct summary s;
	pthread_t thr;
	int go, i, status;
	pid_t child;

	child = hwpmc_fork_gated(&go);
	ASSERT_LE(0, child);
	if (!child) {
		for (;;) {
			pid_t p = fork();

			if (!p)
				_exit(0);
			if (p > 0)
				waitpid(p, NULL, 0);
		}
	}
	ASSERT_EQ(0, hwpmc_soft_tc(self->fd, PMC_SOFT_SCHED_SWITCH,
				   PMC_F_DESCENDANTS | PMC_F_LOG_PROCEXIT,
				   &st.id));
	ASSERT_EQ(0, hwpmc_attach(self->fd, st.id, child));
	ASSERT_EQ(1, write(go, "g", 1));
	ASSERT_EQ(0, pthread_create(&thr, NULL, keep_starting, &st));
	for (i = 0; i < 20; i++) {
		__u64 v1, v2;
		int logfd = open(LOGPATH, O_WRONLY | O_TRUNC | O_CLOEXEC);

		ASSERT_LE(0, logfd);
		ASSERT_EQ(0, hwpmc_configure_log(self->fd, logfd));
		close(logfd);
		usleep(20000);
		ASSERT_EQ(0, hwpmc_closelog(self->fd));
		EXPECT_EQ(HWPMC_EDOOFUS, hwpmc_start(self->fd, st.id));
		ASSERT_EQ(0, hwpmc_read(self->fd, st.id, &v1));
		usleep(30000);
		ASSERT_EQ(0, hwpmc_read(self->fd, st.id, &v2));
		EXPECT_EQ(v1, v2) TH_LOG("round %d: still running", i);
		ASSERT_LT(0, summarize_file(LOGPATH, &s));
		EXPECT_EQ(PMCLOG_TYPE_CLOSELOG, s.last_type)
			TH_LOG("round %d: record %d after CLOSELOG", i,
			       s.last_type);
		EXPECT_EQ(1, s.count[PMCLOG_TYPE_CLOSELOG]);
	}
	__atomic_store_n(&st.stop, 1, __ATOMIC_RELAXED);
	pthread_join(thr, NULL);
	close(go);
	kill(child, SIGKILL);
	ASSERT_EQ(child, waitpid(child, &status, 0));
}

/* Separate owners have separate logs. */
TEST_F(log, owners_have_their_own_log)
{
	int other = hwpmc_open();
	int p[2];
	char buf[4096];
	ssize_t n;

	ASSERT_LE(0, other);
	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, hwpmc_configure_log(self->fd, self->logfd));
	ASSERT_EQ(0, hwpmc_configure_log(other, p[1]));
	ASSERT_EQ(0, writelog(other, 7));
	ASSERT_EQ(0, hwpmc_flushlog(other));
	n = read(p[0], buf, sizeof(buf));
	ASSERT_LT(0, n);
	EXPECT_EQ(2, hwpmc_for_each_record(buf, n, NULL, NULL));	/* INITIALIZE, USERDATA */
	close(other);
	close(p[0]);
	close(p[1]);
}

static volatile sig_atomic_t got_sigio;

static void on_sigio(int sig)
{
	got_sigio++;
}

/* A pipe whose reader exits: EPIPE kept and returned, SIGIO, no hang. */
TEST_F(log, pipe_reader_gone_is_epipe)
{
	int p[2], i, err = 0;
	__u32 id;

	signal(SIGPIPE, SIG_IGN);
	signal(SIGIO, on_sigio);
	got_sigio = 0;
	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, hwpmc_soft_tc(self->fd, PMC_SOFT_SCHED_SWITCH, 0, &id));
	ASSERT_EQ(0, hwpmc_configure_log(self->fd, p[1]));
	close(p[1]);
	close(p[0]);		/* the reader is gone */
	for (i = 0; i < 4 && !err; i++) {
		writelog(self->fd, i);
		err = hwpmc_flushlog(self->fd);
	}
	EXPECT_EQ(EPIPE, err);
	EXPECT_EQ(EPIPE, hwpmc_flushlog(self->fd));	/* kept */
	EXPECT_LT(0, got_sigio);
	/* The owner can still release and de-configure. */
	EXPECT_EQ(0, hwpmc_release(self->fd, id));
	EXPECT_EQ(EPIPE, hwpmc_configure_log(self->fd, -1));
	signal(SIGIO, SIG_DFL);
}

/* A full file system: ENOSPC kept and returned. */
TEST_F(log, full_filesystem_is_enospc)
{
	const char *dir = "/tmp/hwpmc-small-fs";
	char path[128];
	int logfd, i, err = 0;

	mkdir(dir, 0700);
	if (mount("tmpfs", dir, "tmpfs", 0, "size=64k"))
		SKIP(return, "cannot mount a small tmpfs: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/log", dir);
	logfd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT_LE(0, logfd);
	ASSERT_EQ(0, hwpmc_configure_log(self->fd, logfd));
	/* 64 KB of tmpfs fills with ~4000 USERDATA records. */
	for (i = 0; i < 200 && !err; i++) {
		int j;

		for (j = 0; j < 100; j++)
			writelog(self->fd, j);
		err = hwpmc_flushlog(self->fd);
	}
	EXPECT_EQ(ENOSPC, err);
	EXPECT_EQ(ENOSPC, hwpmc_flushlog(self->fd));
	EXPECT_EQ(ENOSPC, hwpmc_configure_log(self->fd, -1));
	close(logfd);
	umount(dir);
	rmdir(dir);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Read @fd until EOF: 0, or -1 if it did not come within @ms. */
static int read_to_eof(int fd, int ms)
{
	long long end = now_ms() + ms;
	static char buf[65536];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	while (now_ms() < end) {
		ssize_t n;

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		n = read(fd, buf, sizeof(buf));
		if (!n)
			return 0;
		if (n < 0 && errno != EINTR)
			return -1;
	}
	return -1;
}

/* Is a kernel thread named @comm (as /proc shows it) alive? */
static bool thread_exists(const char *comm)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	bool found = false;

	if (!d)
		return true;
	while (!found && (e = readdir(d))) {
		char path[300], name[64] = "";
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f)) {
			name[strcspn(name, "\n")] = 0;
			found = !strcmp(name, comm);
		}
		fclose(f);
	}
	closedir(d);
	return found;
}

/* 0 once no writer thread of owner @pid is left, -1 after @ms. */
static int wait_no_writer(pid_t pid, int ms)
{
	long long end = now_ms() + ms;
	char comm[64];

	/* comm holds 15 characters: "hwpmc-log/" and the pid, truncated. */
	snprintf(comm, sizeof(comm), "hwpmc-log/%d", pid);
	comm[15] = 0;
	while (thread_exists(comm)) {
		if (now_ms() >= end)
			return -1;
		usleep(20000);
	}
	return 0;
}

/*
 * An owner killed while its log is active (and its pipe is full with
 * nobody reading): the writer ends and drops its reference to the pipe,
 * the module can be unloaded (the rig checks that at the end), and nothing
 * hangs.
 */
TEST(owner_killed_with_stalled_pipe)
{
	int p[2], ready[2], status;
	pid_t child;
	char c;

	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, pipe(ready));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		int fd = hwpmc_open(), i;

		if (fd < 0 || hwpmc_configure_log(fd, p[1]))
			_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(2);
		/* Fill the pipe (64 KB) and more; nobody reads. */
		for (i = 0; ; i++) {
			writelog(fd, i);
			if (i % 1000 == 0)
				hwpmc_flushlog(fd);	/* blocks for ever */
		}
	}
	close(p[1]);
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	usleep(300000);
	ASSERT_EQ(0, kill(child, SIGKILL));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	/*
	 * Only the module holds the write end now: once the writer has
	 * ended and dropped its file, the pipe reads to EOF.
	 */
	EXPECT_EQ(0, read_to_eof(p[0], 30000));
	EXPECT_EQ(0, wait_no_writer(child, 5000));
	close(p[0]);
	close(ready[0]);
}

/* A socket works as a log too. */
TEST(socket_log)
{
	int fd = hwpmc_open(), sv[2];
	char buf[4096];
	ssize_t n;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	ASSERT_EQ(0, hwpmc_configure_log(fd, sv[0]));
	ASSERT_EQ(0, writelog(fd, 5));
	ASSERT_EQ(0, hwpmc_closelog(fd));
	n = read(sv[1], buf, sizeof(buf));
	ASSERT_LT(0, n);
	EXPECT_EQ(3, hwpmc_for_each_record(buf, n, NULL, NULL));
	close(fd);
	close(sv[0]);
	close(sv[1]);
}

TEST_HARNESS_MAIN
