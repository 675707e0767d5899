// SPDX-License-Identifier: GPL-2.0
/*
 * PMCATTACH honours the LSM ptrace policy exactly as perf_event_open()
 * does: for every case here, PMCATTACH to a process succeeds exactly when
 * perf_event_open(pid = that process, a user-only software event) does,
 * in the same guest, with the same credentials.  perf asks
 * ptrace_may_access(PTRACE_MODE_READ_REALCREDS) (skipped with CAP_PERFMON),
 * which runs the credential and dumpability rules and every LSM.
 *
 * The cases: as root and as uid 65534, with and without a Landlock domain
 * (Landlock confines ptrace, READ mode included, to the caller's domain),
 * under Yama ptrace_scope 0, 1, 2 and 3 (Yama only restricts ptrace's
 * ATTACH mode, so it changes neither perf's nor hwpmc's answer: the test
 * proves they stay equal), the targets: the probe's child forked inside
 * its Landlock domain and one forked before it, a process of the same user
 * that is not its child, a non-dumpable one, one of another user.  And,
 * where AppArmor is enabled and apparmor_parser exists, profiles that
 * allow ptrace, deny it, and deny it and CAP_PERFMON, as root and 65534.
 * hwpmc's own rule (the FreeBSD credential rule, kernel.hwpmc.*) applies
 * too, so unprivileged_proc_debug stays 1 here.
 *
 * kernel.perf_event_paranoid is set to -1 so that perf's paranoia is not
 * what decides, and restored.  Yama's scope 3 cannot be lowered again: it
 * is tried last, and the guest stays at 3 (it restricts only ptrace
 * attaching, which no later test uses).
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <grp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/mount.h>
#include <linux/perf_event.h>
#include <linux/landlock.h>

#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"
#define YAMA		"/proc/sys/kernel/yama/ptrace_scope"
#define PROCDBG		"/proc/sys/kernel/hwpmc/unprivileged_proc_debug"
#define NOBODY		65534
#define OTHER		65533
#define E_SETUP		200

/* Targets, in the order of the result bits. */
enum {
	T_CHILD_IN,	/* forked by the probe in its Landlock domain */
	T_CHILD_OUT,	/* forked by the probe before its domain */
	T_SAME,		/* same user, not its child */
	T_NODUMP,	/* same user, not dumpable */
	T_OTHER,	/* another user */
	T_INIT,		/* pid 1 */
	NTARGETS,
};

static const char *const target_names[NTARGETS] = {
	"its child (same Landlock domain)", "its child (forked before the domain)",
	"a process of its user", "a non-dumpable process of its user",
	"another user's process", "init",
};

static int become(uid_t uid, int dumpable)
{
	if (uid && (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
		    setresuid(uid, uid, uid)))
		return E_SETUP + 1;
	return prctl(PR_SET_DUMPABLE, dumpable) ? E_SETUP + 2 : 0;
}

/* A process of @uid that waits until its pipe closes. */
static int target_main(struct hwpmc_child *me, void *arg)
{
	long spec = (long)arg;
	__u64 v;

	hwpmc_close_fds_except(me->tx, me->rx, -1);
	if (become(spec & 0xffffff, !(spec & (1l << 30))))
		return 1;
	if (hwpmc_send_u64(me, getpid()))
		return 1;
	hwpmc_recv_u64(me, &v);
	return 0;
}

static pid_t target_start(struct hwpmc_child *t, uid_t uid, int nodump)
{
	__u64 pid = 0;
	long spec = uid | (nodump ? 1l << 30 : 0);

	if (hwpmc_child_start(t, target_main, (void *)spec) ||
	    hwpmc_recv_u64(t, &pid))
		return -1;
	return pid;
}

static int perf_may(pid_t pid)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	int fd = syscall(SYS_perf_event_open, &attr, pid, -1, -1,
			 PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return errno == EACCES || errno == EPERM ? 0 : -errno;
	close(fd);
	return 1;
}

static int hwpmc_may(pid_t pid)
{
	int fd = hwpmc_open(), err;
	__u32 id;

	if (fd < 0)
		return -errno;
	err = hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, 0, &id);
	if (!err)
		err = hwpmc_attach(fd, id, pid);
	close(fd);
	if (err == EPERM)
		return 0;
	return err ? -err : 1;
}

static int landlock_enter(void)
{
	struct landlock_ruleset_attr attr = {
		.handled_access_fs = LANDLOCK_ACCESS_FS_MAKE_FIFO,
	};
	int fd = syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);

	if (fd < 0)
		return errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(__NR_landlock_restrict_self, fd, 0))
		return errno;
	close(fd);
	return 0;
}

struct probe {
	uid_t uid;
	int landlock;
	const char *profile;	/* AppArmor: change_onexec to it, then exec */
	pid_t pid[NTARGETS];	/* T_SAME, T_NODUMP, T_OTHER, T_INIT */
};

/* What a probe found, per target: hwpmc's and perf's answer. */
struct answers {
	int hwpmc[NTARGETS], perf[NTARGETS];
};

static pid_t fork_sleeper(void)
{
	pid_t pid = fork();

	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	return pid;
}

static int probe_main(struct hwpmc_child *me, void *arg)
{
	struct probe *p = arg;
	struct answers a;
	int i, err;

	err = become(p->uid, 1);
	if (err)
		return err;
	p->pid[T_CHILD_OUT] = fork_sleeper();
	if (p->landlock) {
		err = landlock_enter();
		if (err)
			return err == ENOSYS || err == EOPNOTSUPP ? E_SETUP + 9 :
			       E_SETUP + 3;
	}
	p->pid[T_CHILD_IN] = fork_sleeper();
	if (p->pid[T_CHILD_OUT] < 0 || p->pid[T_CHILD_IN] < 0)
		return E_SETUP + 4;
	for (i = 0; i < NTARGETS; i++) {
		a.hwpmc[i] = hwpmc_may(p->pid[i]);
		a.perf[i] = perf_may(p->pid[i]);
	}
	kill(p->pid[T_CHILD_IN], SIGKILL);
	kill(p->pid[T_CHILD_OUT], SIGKILL);
	return hwpmc_xwrite(me->tx, &a, sizeof(a)) ? E_SETUP + 5 : 0;
}

FIXTURE(lsm) {
	long paranoid, yama, procdbg;
	struct hwpmc_child t_root, t_root_nodump, t_user, t_user_nodump,
			   t_other;
	pid_t root, root_nodump, user, user_nodump, other;
};

FIXTURE_SETUP(lsm)
{
	if (geteuid() != 0)
		SKIP(return, "needs root");
	self->paranoid = hwpmc_sysctl_get(PARANOID);
	self->yama = hwpmc_sysctl_get(YAMA);
	self->procdbg = hwpmc_sysctl_get(PROCDBG);
	ASSERT_LE(-1, self->paranoid);
	ASSERT_EQ(0, hwpmc_sysctl_set(PARANOID, -1));
	ASSERT_EQ(0, hwpmc_sysctl_set(PROCDBG, 1));
	self->root = target_start(&self->t_root, 0, 0);
	self->root_nodump = target_start(&self->t_root_nodump, 0, 1);
	self->user = target_start(&self->t_user, NOBODY, 0);
	self->user_nodump = target_start(&self->t_user_nodump, NOBODY, 1);
	self->other = target_start(&self->t_other, OTHER, 0);
	ASSERT_LT(0, self->root);
	ASSERT_LT(0, self->root_nodump);
	ASSERT_LT(0, self->user);
	ASSERT_LT(0, self->user_nodump);
	ASSERT_LT(0, self->other);
}

FIXTURE_TEARDOWN(lsm)
{
	if (geteuid() != 0)
		return;
	hwpmc_child_wait(&self->t_root);
	hwpmc_child_wait(&self->t_root_nodump);
	hwpmc_child_wait(&self->t_user);
	hwpmc_child_wait(&self->t_user_nodump);
	hwpmc_child_wait(&self->t_other);
	EXPECT_EQ(0, hwpmc_sysctl_set(PARANOID, self->paranoid));
	EXPECT_EQ(0, hwpmc_sysctl_set(PROCDBG, self->procdbg));
	/* Yama's 3 is for good; below it the old scope comes back. */
	if (self->yama >= 0 && hwpmc_sysctl_get(YAMA) != 3)
		hwpmc_sysctl_set(YAMA, self->yama);
}

/*
 * One probe as @uid (0 or NOBODY), in a Landlock domain or not: every
 * target's answer from hwpmc and from perf must agree.  Returns how many
 * targets hwpmc allowed, or -1 when Landlock is missing.
 */
static int compare(struct __test_metadata *_metadata,
		   FIXTURE_DATA(lsm) *self, uid_t uid, int landlock,
		   const char *what)
{
	struct probe p = { .uid = uid, .landlock = landlock };
	struct hwpmc_child c;
	struct answers a;
	int i, rc, allowed = 0;

	p.pid[T_SAME] = uid ? self->user : self->root;
	p.pid[T_NODUMP] = uid ? self->user_nodump : self->root_nodump;
	p.pid[T_OTHER] = uid ? self->other : self->user;
	p.pid[T_INIT] = 1;
	if (hwpmc_child_start(&c, probe_main, &p))
		return -2;
	if (hwpmc_xread(c.rx, &a, sizeof(a))) {
		rc = hwpmc_child_wait(&c);
		if (rc == E_SETUP + 9)
			return -1;
		EXPECT_EQ(0, rc) TH_LOG("%s: probe failed (%d)", what, rc);
		return -2;
	}
	EXPECT_EQ(0, hwpmc_child_wait(&c));
	for (i = 0; i < NTARGETS; i++) {
		int h = a.hwpmc[i], pf = a.perf[i];
		const char *name = target_names[i];

		EXPECT_LE(0, h) TH_LOG("%s: %s: PMCATTACH: %s", what, name,
				       strerror(-h));
		EXPECT_LE(0, pf) TH_LOG("%s: %s: perf_event_open: %s", what,
					name, strerror(-pf));
		EXPECT_EQ(pf, h)
			TH_LOG("%s, %s, %s%s: perf_event_open %s, PMCATTACH %s",
			       what, uid ? "uid 65534" : "root",
			       landlock ? "in a Landlock domain, " : "", name,
			       pf ? "allowed" : "denied",
			       h ? "allowed" : "denied");
		allowed += h == 1;
	}
	return allowed;
}

static void compare_all(struct __test_metadata *_metadata,
			FIXTURE_DATA(lsm) *self, const char *what)
{
	static const uid_t uids[] = { 0, NOBODY };
	int u, ll;

	for (u = 0; u < 2; u++)
		for (ll = 0; ll < 2; ll++)
			if (compare(_metadata, self, uids[u], ll, what) == -1)
				TH_LOG("%s: no Landlock in this kernel", what);
}

TEST_F(lsm, attach_follows_perf_under_every_yama_scope)
{
	char what[32];
	int scope;

	if (self->yama < 0)
		SKIP(return, "no Yama in this kernel");
	for (scope = 0; scope <= 3; scope++) {
		if (hwpmc_sysctl_get(YAMA) == 3 && scope < 3)
			continue;	/* set by an earlier run: for good */
		ASSERT_EQ(0, hwpmc_sysctl_set(YAMA, scope));
		snprintf(what, sizeof(what), "ptrace_scope %d", scope);
		compare_all(_metadata, self, what);
	}
}

/*
 * The case where the LSM says no: a Landlock domain keeps ptrace (and so
 * perf_event_open, and PMCATTACH) to processes inside it.  Without the
 * LSM check, PMCATTACH let a sandboxed process count its user's other
 * processes.
 */
TEST_F(lsm, landlock_domain_confines_attach)
{
	int n = compare(_metadata, self, NOBODY, 1, "landlock");

	if (n == -1)
		SKIP(return, "no Landlock in this kernel");
	/* Only its child inside the domain, as perf. */
	EXPECT_EQ(1, n);
}

/*
 * AppArmor.  A probe changes to a profile (change_profile, at once), then
 * becomes its user and asks both interfaces about every target.  The
 * profiles allow everything else; the rules that differ:
 *   allow:     "ptrace," -- AppArmor says yes: as unconfined;
 *   noptrace:  "deny ptrace," -- ptrace read (so perf_event_open) denied
 *              to every target, unless the caller has CAP_PERFMON, which
 *              skips the check in perf and in hwpmc alike (root);
 *   nocap:     "deny ptrace," and no CAP_PERFMON, CAP_SYS_ADMIN or
 *              CAP_SYS_PTRACE: root too is denied everywhere.
 * The profiles are loaded with apparmor_parser from the host's (read-only)
 * root: -K, no cache; and removed at the end.
 */
#define AA_FILE		"/tmp/hwpmc-selftest-apparmor"
#define AA_PREFIX	"hwpmc_selftest_"

static const char *aa_parser(void)
{
	static const char *const parsers[] = {
		"/sbin/apparmor_parser", "/usr/sbin/apparmor_parser",
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(parsers); i++)
		if (!access(parsers[i], X_OK))
			return parsers[i];
	return NULL;
}

/* Load (@op "-r") or remove ("-R") the three profiles; system()'s status. */
static int aa_profiles(const char *parser, const char *op)
{
	static const char *const rules[] = {
		"allow", "  ptrace,\n",
		"noptrace", "  deny ptrace,\n",
		"nocap", "  deny ptrace,\n  deny capability perfmon,\n"
			 "  deny capability sys_admin,\n"
			 "  deny capability sys_ptrace,\n",
	};
	char cmd[256];
	unsigned int i;
	FILE *f;

	f = fopen(AA_FILE, "w");
	if (!f)
		return -1;
	for (i = 0; i < ARRAY_SIZE(rules); i += 2)
		fprintf(f, "profile " AA_PREFIX "%s flags=(attach_disconnected) {\n"
			"  file,\n  capability,\n  network,\n  signal,\n  unix,\n"
			"%s}\n",
			rules[i], rules[i + 1]);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s -K %s %s 2>&1", parser, op, AA_FILE);
	return system(cmd);
}

static int aa_probe_main(struct hwpmc_child *me, void *arg)
{
	struct probe *p = arg;
	char buf[64], cur[128] = "";
	int fd, n;

	fd = open("/proc/self/attr/apparmor/current", O_WRONLY);
	if (fd < 0)
		fd = open("/proc/self/attr/current", O_WRONLY);
	if (fd < 0)
		return E_SETUP + 6;
	n = snprintf(buf, sizeof(buf), "changeprofile " AA_PREFIX "%s",
		     p->profile);
	if (write(fd, buf, n) != n)
		return E_SETUP + 7;
	close(fd);
	/* Confined now?  (The label is "NAME (enforce)".) */
	fd = open("/proc/self/attr/current", O_RDONLY);
	if (fd < 0 || read(fd, cur, sizeof(cur) - 1) <= 0 ||
	    strncmp(cur, AA_PREFIX, strlen(AA_PREFIX)))
		return E_SETUP + 8;
	close(fd);
	return probe_main(me, arg);
}

/*
 * One probe as @uid under profile @profile: hwpmc's answer must be perf's
 * for every target.  Returns how many targets hwpmc allowed, -1 if the
 * probe failed.
 */
static int aa_compare(struct __test_metadata *_metadata,
		      FIXTURE_DATA(lsm) *self, uid_t uid, const char *profile)
{
	struct probe p = { .uid = uid, .profile = profile };
	struct hwpmc_child c;
	struct answers a;
	int i, rc, allowed = 0;

	p.pid[T_SAME] = uid ? self->user : self->root;
	p.pid[T_NODUMP] = uid ? self->user_nodump : self->root_nodump;
	p.pid[T_OTHER] = uid ? self->other : self->user;
	p.pid[T_INIT] = 1;
	if (hwpmc_child_start(&c, aa_probe_main, &p))
		return -1;
	if (hwpmc_xread(c.rx, &a, sizeof(a))) {
		rc = hwpmc_child_wait(&c);
		EXPECT_EQ(0, rc) TH_LOG("AppArmor %s, %s: probe failed (%d)",
					profile, uid ? "uid 65534" : "root", rc);
		return -1;
	}
	EXPECT_EQ(0, hwpmc_child_wait(&c));
	for (i = 0; i < NTARGETS; i++) {
		int h = a.hwpmc[i], pf = a.perf[i];

		EXPECT_LE(0, h) TH_LOG("AppArmor %s: %s: PMCATTACH: %s",
				       profile, target_names[i], strerror(-h));
		EXPECT_LE(0, pf) TH_LOG("AppArmor %s: %s: perf_event_open: %s",
					profile, target_names[i],
					strerror(-pf));
		EXPECT_EQ(pf, h)
			TH_LOG("AppArmor %s, %s, %s: perf_event_open %s, PMCATTACH %s",
			       profile, uid ? "uid 65534" : "root",
			       target_names[i], pf ? "allowed" : "denied",
			       h ? "allowed" : "denied");
		allowed += h == 1;
	}
	return allowed;
}

TEST_F(lsm, apparmor_profile_denying_ptrace)
{
	const char *parser = aa_parser();
	int n;

	if (!parser)
		SKIP(return, "apparmor_parser is not installed (package apparmor)");
	mount("none", "/sys/kernel/security", "securityfs", 0, NULL);
	if (access("/sys/kernel/security/apparmor/.load", W_OK))
		SKIP(return, "AppArmor is not enabled in this kernel (boot with lsm=...,apparmor)");
	ASSERT_EQ(0, aa_profiles(parser, "-r"));

	/* uid 65534: its own processes only where AppArmor allows ptrace. */
	n = aa_compare(_metadata, self, NOBODY, "allow");
	/* Its children (2), the same user's process. */
	EXPECT_EQ(3, n);
	EXPECT_EQ(0, aa_compare(_metadata, self, NOBODY, "noptrace"));
	/* root: CAP_PERFMON skips the check, unless the profile denies it. */
	EXPECT_EQ(NTARGETS, aa_compare(_metadata, self, 0, "noptrace"));
	EXPECT_EQ(0, aa_compare(_metadata, self, 0, "nocap"));

	aa_profiles(parser, "-R");
	unlink(AA_FILE);
}

TEST_HARNESS_MAIN
