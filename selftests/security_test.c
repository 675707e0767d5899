// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc(4) "SECURITY CONSIDERATIONS" on Linux: the sysctls
 * kernel.hwpmc.unprivileged_syspmcs and kernel.hwpmc.unprivileged_proc_debug,
 * the rule for attaching to another process (the ptrace credential rule:
 * the caller's real uid and gid equal the target's real, effective and
 * saved ids, and the target is dumpable), privilege as a capability in the
 * initial user namespace (a container's root is "jailed"), and PMCADMIN.
 *
 * Runs as root.  Each check forks a probe that takes on an identity
 * (setresuid/setresgid to "nobody" or another user, optionally keeping a
 * capability, optionally inside a new user namespace), performs one
 * operation and exits with its errno.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <grp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <linux/perf_event.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif

#define SYSCTL_SYSPMCS	"/proc/sys/kernel/hwpmc/unprivileged_syspmcs"
#define SYSCTL_PROCDBG	"/proc/sys/kernel/hwpmc/unprivileged_proc_debug"
#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"

#define NOBODY	65534
#define OTHER	65533

/* Exit codes of a probe that could not take on its identity. */
#define E_SETUP	200

struct ident {
	const char *name;
	uid_t uid;
	gid_t gid;
	int dumpable;		/* PR_SET_DUMPABLE afterwards */
	__u64 caps;		/* capabilities kept (bit mask), nobody only */
	int userns;		/* then unshare(CLONE_NEWUSER), map 0 -> uid */
};

static const struct ident ROOT = { "root", 0, 0, 1 };
static const struct ident USER = { "nobody", NOBODY, NOBODY, 1 };
static const struct ident USER_NODUMP = { "nobody, not dumpable", NOBODY,
					  NOBODY, 0 };
static const struct ident USER_OTHER = { "another user", OTHER, OTHER, 1 };
static const struct ident USER_OTHER_GID = { "nobody, another group", NOBODY,
					     OTHER, 1 };

static int set_caps(__u64 caps)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2] = { { 0 } };
	int i;

	for (i = 0; i < 64; i++) {
		if (!(caps & (1ull << i)))
			continue;
		d[i / 32].effective |= 1u << (i % 32);
		d[i / 32].permitted |= 1u << (i % 32);
	}
	return syscall(SYS_capset, &h, d) ? errno : 0;
}

static int has_cap(int cap)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return 0;
	return !!(d[cap / 32].effective & (1u << (cap % 32)));
}

/* Take on @id in this (forked) process; 0 or an E_SETUP + step code. */
static int become(const struct ident *id)
{
	char map[64];

	if (id->userns && hwpmc_leave_chroot())
		return E_SETUP + 8;
	if (id->caps && prctl(PR_SET_KEEPCAPS, 1))
		return E_SETUP + 1;
	if (id->uid || id->gid) {
		if (setgroups(0, NULL) || setresgid(id->gid, id->gid, id->gid) ||
		    setresuid(id->uid, id->uid, id->uid))
			return E_SETUP + 2;
	}
	if (id->caps && set_caps(id->caps))
		return E_SETUP + 3;
	if (id->userns) {
		/* Non-dumpable, its /proc/self/uid_map would be root's. */
		if (prctl(PR_SET_DUMPABLE, 1))
			return E_SETUP + 7;
		if (unshare(CLONE_NEWUSER))
			return E_SETUP + 4;
		snprintf(map, sizeof(map), "0 %u 1\n", id->uid);
		if (hwpmc_write_str("/proc/self/setgroups", "deny") ||
		    hwpmc_write_str("/proc/self/uid_map", map))
			return E_SETUP + 5;
		snprintf(map, sizeof(map), "0 %u 1\n", id->gid);
		if (hwpmc_write_str("/proc/self/gid_map", map))
			return E_SETUP + 5;
		/* Root, with every capability, in its own namespace. */
		if (getuid() != 0 || !has_cap(CAP_SYS_ADMIN))
			return E_SETUP + 6;
	}
	if (prctl(PR_SET_DUMPABLE, id->dumpable))
		return E_SETUP + 7;
	return 0;
}

/* A target process with identity @arg that waits until told to exit. */
static int target_main(struct hwpmc_child *me, void *arg)
{
	__u64 v;
	int err;

	hwpmc_close_fds_except(me->tx, me->rx, -1);
	err = become(arg);
	if (err)
		return err;
	if (hwpmc_send_u64(me, getpid()))
		return 1;
	hwpmc_recv_u64(me, &v);		/* end of file: exit */
	return 0;
}

static int target_start(struct hwpmc_child *t, const struct ident *id)
{
	__u64 pid;
	int err = hwpmc_child_start(t, target_main, (void *)id);

	if (!err)
		err = hwpmc_recv_u64(t, &pid);
	return err;
}

/* ------------------------------------------------------------ probes */

enum probe_op {
	ATTACH,		/* a process PMC, PMCATTACH to pid */
	START_SELF,	/* a process PMC, PMCSTART (attaches to self) */
	SYS_COUNT,	/* a system counting PMC on CPU 0, started, read */
	SYS_SAMPLE,	/* a system sampling PMC on CPU 0 */
	ADMIN,		/* PMCADMIN: disable a SOFT row on CPU 0, enable it */
	START_OWNERS,	/* PMCSTART of the test's never-attached PMC */
	PERF,		/* perf_event_open(pid), for comparison (EACCES: EPERM) */
};

struct probe {
	enum probe_op op;
	pid_t pid;
	const struct ident *id;
	int fd;			/* START_OWNERS: the test's open, inherited */
	__u32 pmcid;		/* START_OWNERS: its PMC */
};

static int probe_main(struct hwpmc_child *me, void *arg)
{
	const struct probe *p = arg;
	int fd, err, row;
	__u32 id;
	__u64 v;

	err = become(p->id);
	if (err)
		return err;
	fd = hwpmc_open();
	if (fd < 0)
		return E_SETUP + 10;
	switch (p->op) {
	case ATTACH:
		err = hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, 0, &id);
		if (err)
			return E_SETUP + 11;
		return hwpmc_attach(fd, id, p->pid);
	case START_SELF:
		err = hwpmc_soft_tc(fd, PMC_SOFT_SYSCALL_ENTER, 0, &id);
		if (err)
			return E_SETUP + 11;
		err = hwpmc_start(fd, id);
		if (!err && (hwpmc_read(fd, id, &v) || !v))
			return E_SETUP + 12;
		return err;
	case SYS_COUNT:
		err = hwpmc_soft_sc(fd, PMC_SOFT_SCHED_SWITCH, 0, &id);
		if (!err)
			err = hwpmc_start(fd, id);
		if (!err)
			err = hwpmc_read(fd, id, &v);
		return err;
	case SYS_SAMPLE:
		return hwpmc_alloc(fd, PMC_CLASS_SOFT, PMC_SOFT_CLOCK_PROF,
				   PMC_MODE_SS, 0, 0, 1000000, &id);
	case ADMIN:
		row = hwpmc_class_firstrow(fd, PMC_CLASS_SOFT, NULL);
		if (row < 0)
			return E_SETUP + 13;
		err = hwpmc_admin(fd, 0, row + 15, PMC_STATE_DISABLED);
		if (!err)
			err = hwpmc_admin(fd, 0, row + 15, PMC_STATE_FREE);
		return err;
	case START_OWNERS:
		return hwpmc_start(p->fd, p->pmcid);
	case PERF: {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_SOFTWARE, .size = sizeof(attr),
			.config = PERF_COUNT_SW_TASK_CLOCK,
			.exclude_kernel = 1, .exclude_hv = 1,
		};

		fd = syscall(SYS_perf_event_open, &attr, p->pid, -1, -1, 0);
		if (fd < 0)
			return errno == EACCES ? EPERM : errno;
		return 0;
	}
	}
	return E_SETUP + 14;
}

static const char *const op_names[] = {
	[ATTACH] = "attach", [START_SELF] = "start (self)",
	[SYS_COUNT] = "system counting PMC", [SYS_SAMPLE] = "system sampling PMC",
	[ADMIN] = "PMCADMIN", [START_OWNERS] = "start (the owner's PMC)",
	[PERF] = "perf_event_open",
};

/* Run one probe; its errno (0 on success), or >= E_SETUP. */
static int probe(const struct ident *id, enum probe_op op, pid_t pid)
{
	struct probe p = { .op = op, .pid = pid, .id = id };
	struct hwpmc_child c;

	if (hwpmc_child_start(&c, probe_main, &p))
		return -1;
	return hwpmc_child_wait(&c);
}

#define CHECK(ident, op, pid, what, expected) do { \
	int __rc = probe(ident, op, pid); \
	EXPECT_EQ(expected, __rc) \
		TH_LOG("%s: %s %s: got %s (%d), expected %s", (ident)->name, \
		       op_names[op], what, __rc ? strerror(__rc) : "success", \
		       __rc, (expected) ? strerror(expected) : "success"); \
} while (0)

/* ---------------------------------------------------------- fixture */

FIXTURE(sec) {
	long syspmcs, procdbg, paranoid;
	struct hwpmc_child t_root, t_user, t_nodump, t_other, t_gid;
};

FIXTURE_SETUP(sec)
{
	if (geteuid() != 0)
		SKIP(return, "needs root");
	self->syspmcs = hwpmc_sysctl_get(SYSCTL_SYSPMCS);
	self->procdbg = hwpmc_sysctl_get(SYSCTL_PROCDBG);
	self->paranoid = hwpmc_sysctl_get(PARANOID);
	ASSERT_LE(0, self->syspmcs) TH_LOG("%s missing", SYSCTL_SYSPMCS);
	ASSERT_LE(0, self->procdbg) TH_LOG("%s missing", SYSCTL_PROCDBG);
	ASSERT_EQ(0, target_start(&self->t_root, &ROOT));
	ASSERT_EQ(0, target_start(&self->t_user, &USER));
	ASSERT_EQ(0, target_start(&self->t_nodump, &USER_NODUMP));
	ASSERT_EQ(0, target_start(&self->t_other, &USER_OTHER));
	ASSERT_EQ(0, target_start(&self->t_gid, &USER_OTHER_GID));
}

FIXTURE_TEARDOWN(sec)
{
	if (geteuid() != 0)
		return;
	hwpmc_child_wait(&self->t_root);
	hwpmc_child_wait(&self->t_user);
	hwpmc_child_wait(&self->t_nodump);
	hwpmc_child_wait(&self->t_other);
	hwpmc_child_wait(&self->t_gid);
	EXPECT_EQ(0, hwpmc_sysctl_set(SYSCTL_SYSPMCS, self->syspmcs));
	EXPECT_EQ(0, hwpmc_sysctl_set(SYSCTL_PROCDBG, self->procdbg));
	EXPECT_EQ(0, hwpmc_sysctl_set(PARANOID, self->paranoid));
}

/* perf's paranoia must not be what decides a comparison with perf. */
static void perf_paranoid(struct __test_metadata *_metadata, long level)
{
	ASSERT_EQ(0, hwpmc_sysctl_set(PARANOID, level));
}

static void set_sysctls(struct __test_metadata *_metadata, int syspmcs,
			int procdbg)
{
	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_SYSPMCS, syspmcs));
	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_PROCDBG, procdbg));
	ASSERT_EQ(syspmcs, hwpmc_sysctl_get(SYSCTL_SYSPMCS));
	ASSERT_EQ(procdbg, hwpmc_sysctl_get(SYSCTL_PROCDBG));
}

/* hwpmc(4): unprivileged_syspmcs defaults to 0, unprivileged_proc_debug
 * to 1 (FreeBSD's security.bsd.* defaults). */
TEST_F(sec, sysctl_defaults_as_documented)
{
	struct stat st;

	EXPECT_EQ(0, self->syspmcs);
	EXPECT_EQ(1, self->procdbg);
	ASSERT_EQ(0, stat(SYSCTL_SYSPMCS, &st));
	EXPECT_EQ(0644, st.st_mode & 0777);
	ASSERT_EQ(0, stat(SYSCTL_PROCDBG, &st));
	EXPECT_EQ(0644, st.st_mode & 0777);
}

/* Booleans: anything but 0 and 1 is refused and changes nothing. */
TEST_F(sec, sysctls_are_booleans)
{
	set_sysctls(_metadata, 0, 1);
	EXPECT_EQ(EINVAL, hwpmc_sysctl_set(SYSCTL_SYSPMCS, 2));
	EXPECT_EQ(EINVAL, hwpmc_sysctl_set(SYSCTL_SYSPMCS, -1));
	EXPECT_EQ(EINVAL, hwpmc_sysctl_set(SYSCTL_PROCDBG, 2));
	EXPECT_EQ(0, hwpmc_sysctl_get(SYSCTL_SYSPMCS));
	EXPECT_EQ(1, hwpmc_sysctl_get(SYSCTL_PROCDBG));
}

static int write_sysctl_as_nobody(struct hwpmc_child *me, void *arg)
{
	int err = become(&USER);

	if (err)
		return err;
	return hwpmc_sysctl_set(arg, 1);
}

TEST_F(sec, unprivileged_cannot_change_sysctls)
{
	struct hwpmc_child c;

	ASSERT_EQ(0, hwpmc_child_start(&c, write_sysctl_as_nobody,
				       SYSCTL_SYSPMCS));
	EXPECT_EQ(EACCES, hwpmc_child_wait(&c));
	EXPECT_EQ(self->syspmcs, hwpmc_sysctl_get(SYSCTL_SYSPMCS));
}

/* ------------------------------------------------ attaching, unprivileged */

TEST_F(sec, unprivileged_attach_with_proc_debug)
{
	set_sysctls(_metadata, 0, 1);
	/* Itself: always. */
	CHECK(&USER, ATTACH, 0, "to itself (pid 0)", 0);
	CHECK(&USER_NODUMP, ATTACH, 0, "to itself, not dumpable", 0);
	CHECK(&USER, START_SELF, 0, "", 0);
	/* Same credentials, dumpable: what it could debug. */
	CHECK(&USER, ATTACH, self->t_user.pid, "to the same user's process", 0);
	/* Everything else it could not debug. */
	CHECK(&USER, ATTACH, self->t_nodump.pid,
	      "to the same user's non-dumpable process", EPERM);
	CHECK(&USER, ATTACH, self->t_gid.pid,
	      "to the same user's process in another group", EPERM);
	CHECK(&USER, ATTACH, self->t_other.pid, "to another user's process",
	      EPERM);
	CHECK(&USER, ATTACH, self->t_root.pid, "to root's process", EPERM);
	CHECK(&USER, ATTACH, 1, "to init", EPERM);
	CHECK(&USER_OTHER, ATTACH, self->t_user.pid, "to nobody's process",
	      EPERM);
}

/* unprivileged_proc_debug=0: only itself. */
TEST_F(sec, unprivileged_attach_without_proc_debug)
{
	set_sysctls(_metadata, 0, 0);
	CHECK(&USER, ATTACH, 0, "to itself (pid 0)", 0);
	CHECK(&USER, START_SELF, 0, "", 0);
	CHECK(&USER, ATTACH, self->t_user.pid, "to the same user's process",
	      EPERM);
	CHECK(&USER, ATTACH, self->t_other.pid, "to another user's process",
	      EPERM);
	CHECK(&USER, ATTACH, self->t_root.pid, "to root's process", EPERM);
	/* And back: the sysctl is read at each attach. */
	set_sysctls(_metadata, 0, 1);
	CHECK(&USER, ATTACH, self->t_user.pid, "to the same user's process", 0);
}

/*
 * PMC_F_DESCENDANTS attaches to the target's current descendants too: each
 * of them only if the caller could attach to it directly.  Otherwise a
 * user could count another user's process (a set-uid program running
 * under their shell, a child a daemon forked before dropping privileges)
 * just by attaching to its parent.
 */
#define NKIDS 3
static const struct ident *const kid_ids[NKIDS] = {
	&USER, &USER_OTHER, &USER_NODUMP,
};

/* Forks its children with their identities, then becomes nobody. */
static int family_main(struct hwpmc_child *me, void *arg)
{
	pid_t kid[NKIDS];
	int i, err, ready[2];
	__u64 v;
	char c;

	hwpmc_close_fds_except(me->tx, me->rx, -1);
	if (pipe(ready))
		return 1;
	for (i = 0; i < NKIDS; i++) {
		kid[i] = fork();
		if (kid[i] == 0) {
			if (become(kid_ids[i]))
				_exit(1);
			/* After become(): a credential change clears it. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			/* Only now is it the process the walk must judge. */
			if (write(ready[1], "r", 1) != 1)
				_exit(1);
			for (;;)
				pause();
		}
	}
	close(ready[1]);
	for (i = 0; i < NKIDS; i++)
		if (read(ready[0], &c, 1) != 1)
			return 1;
	close(ready[0]);
	err = become(&USER);
	if (err)
		return err;
	for (i = 0; i < NKIDS; i++)
		if (hwpmc_send_u64(me, kid[i]))
			return 1;
	hwpmc_recv_u64(me, &v);		/* end of file: exit (the kids die) */
	return 0;
}

struct desc_probe {
	pid_t parent;
	pid_t kid[NKIDS];
	int result[NKIDS];	/* detach from each, after the walk */
};

static int desc_probe_main(struct hwpmc_child *me, void *arg)
{
	struct desc_probe *dp = arg;
	int fd, err, i;
	__u32 id;

	err = become(&USER);
	if (err)
		return err;
	fd = hwpmc_open();
	if (fd < 0 ||
	    hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, PMC_F_DESCENDANTS, &id))
		return E_SETUP + 10;
	err = hwpmc_attach(fd, id, dp->parent);
	if (err)
		return err;
	/* Detaching needs no permission: 0 if the walk took the child,
	 * ESRCH if it left it alone. */
	for (i = 0; i < NKIDS; i++)
		dp->result[i] = hwpmc_detach(fd, id, dp->kid[i]);
	return hwpmc_xwrite(me->tx, dp->result, sizeof(dp->result));
}

TEST_F(sec, descendants_follow_the_attach_rule)
{
	static const int expect[NKIDS] = { 0, ESRCH, ESRCH };
	struct desc_probe dp;
	struct hwpmc_child fam, pr;
	__u64 pid;
	int i;

	set_sysctls(_metadata, 0, 1);
	/* The kids of other users come back to us when their parent goes. */
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	ASSERT_EQ(0, hwpmc_child_start(&fam, family_main, NULL));
	for (i = 0; i < NKIDS; i++) {
		ASSERT_EQ(0, hwpmc_recv_u64(&fam, &pid));
		dp.kid[i] = pid;
	}
	dp.parent = fam.pid;
	ASSERT_EQ(0, hwpmc_child_start(&pr, desc_probe_main, &dp));
	ASSERT_EQ(0, hwpmc_xread(pr.rx, dp.result, sizeof(dp.result)));
	EXPECT_EQ(0, hwpmc_child_wait(&pr));
	for (i = 0; i < NKIDS; i++) {
		int got = dp.result[i], want = expect[i];
		const char *who = kid_ids[i]->name;

		EXPECT_EQ(want, got)
			TH_LOG("nobody's child that is %s: detach after the "
			       "walk gave %d, expected %d", who, got, want);
	}
	for (i = 0; i < NKIDS; i++)
		kill(dp.kid[i], SIGKILL);
	EXPECT_EQ(0, hwpmc_child_wait(&fam));
	for (i = 0; i < NKIDS; i++)
		waitpid(dp.kid[i], NULL, 0);	/* ours since fam exited */
}

/* ------------------------------------------------- system PMCs, admin */

/*
 * PMCSTART of a PMC never attached attaches it to its owner, the process
 * that opened /dev/hwpmc.  Another process holding that open (inherited
 * across fork, as here, or passed over a socket) starts it only if it may
 * attach to the owner: otherwise root's descriptor, left open across a
 * set-id exec or handed out, would let anyone count a process it may not
 * debug.  Here the owner is this test, as root.
 */
TEST_F(sec, start_attaches_to_the_owner_only_if_allowed)
{
	struct probe p = { .op = START_OWNERS, .id = &USER };
	struct hwpmc_child c;
	__u64 v;
	int rc;

	p.fd = hwpmc_open();
	ASSERT_LE(0, p.fd);
	ASSERT_EQ(0, hwpmc_soft_tc(p.fd, PMC_SOFT_SYSCALL_ENTER, 0, &p.pmcid));
	ASSERT_EQ(0, hwpmc_child_start(&c, probe_main, &p));
	rc = hwpmc_child_wait(&c);
	EXPECT_EQ(EPERM, rc) TH_LOG("nobody started root's PMC: %s",
				    rc ? strerror(rc) : "success");
	/* Still never attached: not counting, and root may start it. */
	ASSERT_EQ(0, hwpmc_read(p.fd, p.pmcid, &v));
	EXPECT_EQ(0, v);
	p.id = &ROOT;
	ASSERT_EQ(0, hwpmc_child_start(&c, probe_main, &p));
	EXPECT_EQ(0, hwpmc_child_wait(&c));
	/* Attached to this process, the owner: its system calls count. */
	getppid();
	ASSERT_EQ(0, hwpmc_read(p.fd, p.pmcid, &v));
	EXPECT_LT(0, v);
	close(p.fd);
}

TEST_F(sec, unprivileged_system_pmcs)
{
	set_sysctls(_metadata, 0, 1);
	CHECK(&USER, SYS_COUNT, 0, "with unprivileged_syspmcs=0", EPERM);
	CHECK(&USER, SYS_SAMPLE, 0, "with unprivileged_syspmcs=0", EPERM);
	set_sysctls(_metadata, 1, 1);
	CHECK(&USER, SYS_COUNT, 0, "with unprivileged_syspmcs=1", 0);
	/* hwpmc(4): system-wide sampling needs super-user privileges. */
	CHECK(&USER, SYS_SAMPLE, 0, "with unprivileged_syspmcs=1", EPERM);
	set_sysctls(_metadata, 0, 1);
	CHECK(&USER, SYS_COUNT, 0, "with unprivileged_syspmcs=0 again", EPERM);
}

TEST_F(sec, unprivileged_pmcadmin)
{
	set_sysctls(_metadata, 0, 1);
	CHECK(&USER, ADMIN, 0, "", EPERM);
	set_sysctls(_metadata, 1, 1);
	CHECK(&USER, ADMIN, 0, "with unprivileged_syspmcs=1", EPERM);
}

/* ------------------------------------------------- the privileged side */

TEST_F(sec, root_may_do_everything)
{
	int pd;

	for (pd = 0; pd <= 1; pd++) {
		set_sysctls(_metadata, 0, pd);
		CHECK(&ROOT, ATTACH, self->t_user.pid, "to nobody's process", 0);
		CHECK(&ROOT, ATTACH, self->t_nodump.pid,
		      "to a non-dumpable process", 0);
		CHECK(&ROOT, ATTACH, self->t_other.pid,
		      "to another user's process", 0);
		CHECK(&ROOT, ATTACH, self->t_root.pid, "to root's process", 0);
		CHECK(&ROOT, SYS_COUNT, 0, "", 0);
		CHECK(&ROOT, SYS_SAMPLE, 0, "", 0);
		CHECK(&ROOT, ADMIN, 0, "", 0);
	}
}

/* CAP_PERFMON alone: privileged for PMCs, not for PMCADMIN. */
TEST_F(sec, cap_perfmon)
{
	const struct ident perfmon = { "nobody+CAP_PERFMON", NOBODY, NOBODY, 1,
				       1ull << CAP_PERFMON };

	set_sysctls(_metadata, 0, 0);
	CHECK(&perfmon, SYS_COUNT, 0, "", 0);
	CHECK(&perfmon, SYS_SAMPLE, 0, "", 0);
	CHECK(&perfmon, ATTACH, self->t_other.pid, "to another user's process",
	      0);
	CHECK(&perfmon, ATTACH, self->t_root.pid, "to root's process", 0);
	CHECK(&perfmon, ADMIN, 0, "", EPERM);
}

/* CAP_SYS_ADMIN: PMCADMIN (FreeBSD's PRIV_PMC_MANAGE), and everything. */
TEST_F(sec, cap_sys_admin)
{
	const struct ident admin = { "nobody+CAP_SYS_ADMIN", NOBODY, NOBODY, 1,
				     1ull << CAP_SYS_ADMIN };

	set_sysctls(_metadata, 0, 0);
	CHECK(&admin, ADMIN, 0, "", 0);
	CHECK(&admin, SYS_COUNT, 0, "", 0);
	CHECK(&admin, SYS_SAMPLE, 0, "", 0);
	CHECK(&admin, ATTACH, self->t_other.pid, "to another user's process",
	      0);
}

/* CAP_SYS_PTRACE: may attach anywhere (it may debug anything), but gets
 * no system PMCs and no PMCADMIN. */
TEST_F(sec, cap_sys_ptrace)
{
	const struct ident ptracer = { "nobody+CAP_SYS_PTRACE", NOBODY, NOBODY,
				       1, 1ull << CAP_SYS_PTRACE };

	set_sysctls(_metadata, 0, 0);
	CHECK(&ptracer, ATTACH, self->t_other.pid, "to another user's process",
	      0);
	CHECK(&ptracer, ATTACH, self->t_root.pid, "to root's process", 0);
	CHECK(&ptracer, ATTACH, self->t_nodump.pid,
	      "to a non-dumpable process", 0);
	CHECK(&ptracer, SYS_COUNT, 0, "", EPERM);
	CHECK(&ptracer, ADMIN, 0, "", EPERM);
}

/* ------------------------------------------------------- containers */

/*
 * Root inside a user namespace of its own (uid 0 mapped to 0, every
 * capability there): "jailed", so not privileged.  What it may still do is
 * what any process with its credentials may, within the ptrace policy.
 */
TEST_F(sec, container_root_is_jailed)
{
	const struct ident croot = { "container root (0 -> 0)", 0, 0, 1, 0, 1 };

	set_sysctls(_metadata, 0, 1);
	CHECK(&croot, SYS_COUNT, 0, "with unprivileged_syspmcs=0", EPERM);
	CHECK(&croot, SYS_SAMPLE, 0, "", EPERM);
	CHECK(&croot, ADMIN, 0, "", EPERM);
	CHECK(&croot, ATTACH, 0, "to itself", 0);
	/* Another user's process: real root could, a jailed one cannot. */
	CHECK(&croot, ATTACH, self->t_user.pid, "to nobody's process", EPERM);
	CHECK(&croot, ATTACH, self->t_nodump.pid, "to a non-dumpable process",
	      EPERM);
	/*
	 * A uid 0 process outside its namespace: its credentials match, but
	 * the ptrace policy (commoncap) lets a process read only processes
	 * of its own user namespace (or below) without CAP_SYS_PTRACE over
	 * theirs, and PMCATTACH follows it, as perf_event_open does.
	 */
	CHECK(&croot, ATTACH, self->t_root.pid, "to a uid 0 process", EPERM);
	perf_paranoid(_metadata, -1);
	CHECK(&croot, PERF, self->t_root.pid, "to a uid 0 process", EPERM);
	perf_paranoid(_metadata, self->paranoid);
	set_sysctls(_metadata, 0, 0);
	CHECK(&croot, ATTACH, self->t_root.pid,
	      "to a uid 0 process with unprivileged_proc_debug=0", EPERM);
	set_sysctls(_metadata, 1, 1);
	CHECK(&croot, SYS_COUNT, 0, "with unprivileged_syspmcs=1", 0);
	CHECK(&croot, SYS_SAMPLE, 0, "with unprivileged_syspmcs=1", EPERM);
	CHECK(&croot, ADMIN, 0, "with unprivileged_syspmcs=1", EPERM);
}

/* `unshare -Ur` by an ordinary user: root of a namespace mapped onto
 * nobody. */
TEST_F(sec, unprivileged_container_root_is_jailed)
{
	const struct ident croot = { "container root (0 -> nobody)", NOBODY,
				     NOBODY, 1, 0, 1 };
	int rc;

	set_sysctls(_metadata, 0, 1);
	rc = probe(&croot, ATTACH, 0);
	if (rc == E_SETUP + 4)
		SKIP(return, "unprivileged user namespaces are disabled");
	EXPECT_EQ(0, rc);
	CHECK(&croot, SYS_COUNT, 0, "", EPERM);
	CHECK(&croot, SYS_SAMPLE, 0, "", EPERM);
	CHECK(&croot, ADMIN, 0, "", EPERM);
	/* Its own uid, outside its namespace: as perf, no (see above). */
	CHECK(&croot, ATTACH, self->t_user.pid, "to nobody's process", EPERM);
	perf_paranoid(_metadata, -1);
	CHECK(&croot, PERF, self->t_user.pid, "to nobody's process", EPERM);
	perf_paranoid(_metadata, self->paranoid);
	CHECK(&croot, ATTACH, self->t_root.pid, "to root's process", EPERM);
	CHECK(&croot, ATTACH, self->t_other.pid, "to another user's process",
	      EPERM);
}

TEST_HARNESS_MAIN
