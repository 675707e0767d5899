// SPDX-License-Identifier: GPL-2.0
/*
 * MAP_IN / MAP_OUT: the code mappings of sampled processes reach the log
 * at attach, after exec, after dlopen (mmap with PROT_EXEC) and dlclose
 * (munmap), and for every process when system sampling starts.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_log_util.h"

#include <dlfcn.h>
#include <sys/wait.h>

#define LOGPATH "/tmp/hwpmc-maps-test.log"
#define LIB "libz.so.1"

struct maps {
	pid_t pid;
	__u64 addr;		/* an address to find in a MAP_IN */
	const char *want;	/* a path fragment to find */
	int nmap_in, nmap_out, found_addr, found_path, addr_out;
	int pids[64], npids;
	int nexec;
	pid_t sysexit_pid;
	int nsysexit;
	int nsysfork, nsysexec;
};

static int maps_fn(const struct pmclog_header *h, void *arg)
{
	struct maps *m = arg;

	if (h->pl_type == PMCLOG_TYPE_MAP_IN) {
		const struct pmclog_map_in *r = (const void *)h;
		int i;

		for (i = 0; i < m->npids && m->pids[i] != (int)r->pl_pid; i++)
			;
		if (i == m->npids && m->npids < 64)
			m->pids[m->npids++] = r->pl_pid;
		if (m->pid && r->pl_pid != (__u32)m->pid)
			return 0;
		m->nmap_in++;
		if (m->addr && r->pl_start <= m->addr && m->addr < r->pl_end)
			m->found_addr++;
		if (m->want && strstr(r->pl_path, m->want))
			m->found_path++;
	} else if (h->pl_type == PMCLOG_TYPE_MAP_OUT) {
		const struct pmclog_map_out *r = (const void *)h;

		if (m->pid && r->pl_pid != (__u32)m->pid)
			return 0;
		m->nmap_out++;
		if (m->addr && r->pl_start <= m->addr && m->addr < r->pl_end)
			m->addr_out++;
	} else if (h->pl_type == PMCLOG_TYPE_PROCEXEC) {
		const struct pmclog_procexec *r = (const void *)h;

		m->nexec++;
		if (r->pl_pid == (__u32)m->sysexit_pid &&
		    r->pl_pmcid == PMC_ID_INVALID && strstr(r->pl_path, "/true"))
			m->nsysexec++;
	} else if (h->pl_type == PMCLOG_TYPE_PROCFORK) {
		const struct pmclog_procfork *r = (const void *)h;

		if (r->pl_pid == (__u32)m->sysexit_pid &&
		    r->pl_ppid == (__u32)getpid())
			m->nsysfork++;
	} else if (h->pl_type == PMCLOG_TYPE_SYSEXIT) {
		const struct pmclog_sysexit *r = (const void *)h;

		if (r->pl_pid == (__u32)m->sysexit_pid)
			m->nsysexit++;
	}
	return 0;
}

static int read_maps(struct maps *m)
{
	size_t len;
	char *buf = hwpmc_slurp(LOGPATH, &len);
	int n;

	if (!buf)
		return -1;
	n = hwpmc_for_each_record(buf, len, maps_fn, m);
	free(buf);
	return n;
}

FIXTURE(maps) {
	int fd, logfd;
	__u32 id;
};

FIXTURE_SETUP(maps)
{
	self->fd = hwpmc_open();
	ASSERT_LE(0, self->fd);
	self->logfd = open(LOGPATH, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT_LE(0, self->logfd);
	ASSERT_EQ(0, hwpmc_configure_log(self->fd, self->logfd));
	ASSERT_EQ(0, hwpmc_alloc(self->fd, PMC_CLASS_SOFT, PMC_SOFT_CLOCK_PROF,
				 PMC_MODE_TS, 0, PMC_CPU_ANY, 10000000, &self->id));
}

FIXTURE_TEARDOWN(maps)
{
	close(self->fd);
	close(self->logfd);
	unlink(LOGPATH);
}

TEST_F(maps, attach_logs_existing_code)
{
	struct maps m = { .pid = getpid(), .addr = (__u64)(uintptr_t)&printf,
			  .want = "/maps_test" };

	ASSERT_EQ(0, hwpmc_attach(self->fd, self->id, 0));
	ASSERT_EQ(0, hwpmc_flushlog(self->fd));
	ASSERT_LT(0, read_maps(&m));
	EXPECT_LE(2, m.nmap_in);	/* the program and libc at least */
	EXPECT_EQ(1, m.found_addr);	/* printf is in exactly one */
	EXPECT_LE(1, m.found_path);
}

TEST_F(maps, dlopen_and_dlclose)
{
	struct maps m = { .pid = getpid(), .want = LIB };
	void *h, *fn;

	ASSERT_EQ(0, hwpmc_attach(self->fd, self->id, 0));
	ASSERT_EQ(0, hwpmc_start(self->fd, self->id));
	ASSERT_EQ(0, hwpmc_flushlog(self->fd));
	ASSERT_LT(0, read_maps(&m));
	if (m.found_path)
		SKIP(return, "%s is already mapped into this test", LIB);
	h = dlopen(LIB, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		SKIP(return, "cannot dlopen %s: %s", LIB, dlerror());
	fn = dlsym(h, "zlibVersion");
	ASSERT_NE(NULL, fn);
	ASSERT_EQ(0, hwpmc_flushlog(self->fd));
	memset(&m, 0, sizeof(m));
	m.pid = getpid();
	m.want = LIB;
	m.addr = (__u64)(uintptr_t)fn;
	ASSERT_LT(0, read_maps(&m));
	EXPECT_EQ(1, m.found_addr) TH_LOG("no MAP_IN covers zlibVersion");
	EXPECT_LE(1, m.found_path);
	ASSERT_EQ(0, dlclose(h));
	ASSERT_EQ(0, hwpmc_flushlog(self->fd));
	memset(&m, 0, sizeof(m));
	m.pid = getpid();
	m.addr = (__u64)(uintptr_t)fn;
	ASSERT_LT(0, read_maps(&m));
	EXPECT_LE(1, m.addr_out) TH_LOG("no MAP_OUT covers the unloaded code");
}

TEST_F(maps, exec_logs_the_new_image)
{
	struct maps m = { .want = "/sleep" };
	int p[2], status;
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(1);
		execl("/bin/sleep", "sleep", "0.2", (char *)NULL);
		_exit(2);
	}
	close(p[0]);
	ASSERT_EQ(0, hwpmc_attach(self->fd, self->id, pid));
	ASSERT_EQ(0, hwpmc_start(self->fd, self->id));
	ASSERT_EQ(1, write(p[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status);
	ASSERT_EQ(0, hwpmc_flushlog(self->fd));
	m.pid = pid;
	ASSERT_LT(0, read_maps(&m));
	EXPECT_EQ(1, m.nexec);
	EXPECT_LE(1, m.found_path) TH_LOG("no MAP_IN of the exec'd image");
	close(p[1]);
}

TEST(system_sampling_logs_every_process)
{
	struct maps m = { .want = "/maps_test" };
	int fd = hwpmc_open(), logfd;
	__u32 id;

	ASSERT_LE(0, fd);
	logfd = open(LOGPATH, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT_LE(0, logfd);
	ASSERT_EQ(0, hwpmc_configure_log(fd, logfd));
	ASSERT_EQ(0, hwpmc_alloc(fd, PMC_CLASS_SOFT, PMC_SOFT_CLOCK_PROF,
				 PMC_MODE_SS, 0, 0, 10000000, &id));
	ASSERT_EQ(0, hwpmc_start(fd, id));
	/* A process forked, exec'd and exited meanwhile is announced. */
	m.sysexit_pid = fork();
	ASSERT_LE(0, m.sysexit_pid);
	if (!m.sysexit_pid) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(2);
	}
	ASSERT_EQ(m.sysexit_pid, waitpid(m.sysexit_pid, NULL, 0));
	ASSERT_EQ(0, hwpmc_flushlog(fd));
	ASSERT_LT(0, read_maps(&m));
	TH_LOG("MAP_IN records for %d processes", m.npids);
	EXPECT_LE(2, m.npids);		/* init and this test at least */
	EXPECT_LE(1, m.found_path);
	EXPECT_EQ(1, m.nsysexit);
	EXPECT_EQ(1, m.nsysfork);
	EXPECT_EQ(1, m.nsysexec);
	close(fd);
	close(logfd);
	unlink(LOGPATH);
}

TEST_HARNESS_MAIN
