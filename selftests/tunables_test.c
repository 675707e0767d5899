// SPDX-License-Identifier: GPL-2.0
/*
 * Tunables: read-only module parameters with today's FreeBSD defaults, and
 * a bad value failing the load with hwpmc(4)'s DIAGNOSTICS message.  The
 * test unloads the module and loads it again (finit_module), so it must
 * run with nothing else holding /dev/hwpmc open.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <sys/stat.h>

/* Kernel log records written after @fd was opened and sought to the end. */
static int kmsg_contains(int fd, const char *needle)
{
	char rec[2048];
	ssize_t n;

	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		if (n <= 0)
			continue;
		rec[n] = 0;
		if (strstr(rec, needle))
			return 1;
	}
	return 0;
}

static long param(const char *name)
{
	char path[128], buf[64];
	FILE *f;
	long v = -1;

	snprintf(path, sizeof(path), "/sys/module/hwpmc/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = strtol(buf, NULL, 10);
	fclose(f);
	return v;
}

TEST(defaults_are_freebsd_today)
{
	struct stat st;

	EXPECT_EQ(128, param("callchaindepth"));
	EXPECT_EQ(256, param("logbuffersize"));
	EXPECT_EQ(32, param("nbuffers"));
	EXPECT_EQ(256, param("nsamples"));
	EXPECT_EQ(1024, param("hashsize"));
	EXPECT_EQ(2048, param("mtxpoolsize"));
	ASSERT_EQ(0, stat("/sys/module/hwpmc/parameters/nsamples", &st));
	EXPECT_EQ(0444, st.st_mode & 0777);
}

struct bad_case {
	const char *params;
	const char *message;
};

static const struct bad_case bad_cases[] = {
	{ "hashsize=0", "hwpmc: tunable hashsize=0 must be greater than zero." },
	{ "hashsize=-3", "hwpmc: tunable hashsize=-3 must be greater than zero." },
	{ "logbuffersize=-1", "hwpmc: tunable logbuffersize=-1 must be greater than zero." },
	{ "logbuffersize=16385", "hwpmc: tunable logbuffersize=16385 out of range." },
	{ "nbuffers=0", "hwpmc: tunable nlogbuffers=0 must be greater than zero." },
	{ "nbuffers=4097", "hwpmc: tunable nlogbuffers=4097 out of range." },
	{ "nsamples=-1", "hwpmc: tunable nsamples=-1 out of range." },
	{ "nsamples=65536", "hwpmc: tunable nsamples=65536 out of range." },
	{ "callchaindepth=0", "hwpmc: tunable callchaindepth=0 out of range." },
	{ "callchaindepth=513", "hwpmc: tunable callchaindepth=513 out of range." },
	{ "mtxpoolsize=0", "hwpmc: tunable mtxpoolsize=0 must be greater than zero." },
};

TEST(bad_values_fail_the_load_with_diagnostics)
{
	unsigned int i;
	int kmsg;

	ASSERT_EQ(0, hwpmc_module_unload()) TH_LOG("is /dev/hwpmc held open?");
	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
		ASSERT_LE(0, kmsg);
		lseek(kmsg, 0, SEEK_END);
		EXPECT_EQ(EINVAL, hwpmc_module_load("", bad_cases[i].params))
			TH_LOG("%s loaded", bad_cases[i].params);
		EXPECT_TRUE(kmsg_contains(kmsg, bad_cases[i].message))
			TH_LOG("no '%s' in the kernel log", bad_cases[i].message);
		close(kmsg);
		EXPECT_EQ(-1, param("nsamples"));	/* not loaded */
	}
	/* Good non-default values load and show. */
	ASSERT_EQ(0, hwpmc_module_load("", "nsamples=1024 callchaindepth=512 logbuffersize=4"));
	EXPECT_EQ(1024, param("nsamples"));
	EXPECT_EQ(512, param("callchaindepth"));
	EXPECT_EQ(4, param("logbuffersize"));
	ASSERT_EQ(0, hwpmc_module_unload());
	ASSERT_EQ(0, hwpmc_module_load("", ""));
	EXPECT_EQ(256, param("nsamples"));
}

TEST(unload_refused_while_open)
{
	int fd = hwpmc_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(EWOULDBLOCK, hwpmc_module_unload());
	close(fd);
}

TEST_HARNESS_MAIN
