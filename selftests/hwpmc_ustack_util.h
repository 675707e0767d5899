/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user-stack tests' sampled work (ustack_test, ustack_area_test):
 * user-mode loops with a marker in their frame, which a sample's stack
 * copy then holds.
 */
#ifndef HWPMC_USTACK_UTIL_H
#define HWPMC_USTACK_UTIL_H

#include <linux/types.h>
#include <time.h>

#define MARKER		0x5ca1ab1e0ddba11ULL

/* This thread's CPU time, seconds. */
static inline double hwpmc_thread_cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Spin for @secs of CPU time with a marker in the frame, looking at the
 * clock (a system call) every @inner iterations.
 */
static __attribute__((noinline, unused)) void hwpmc_marker_spin(double secs,
								long inner)
{
	volatile __u64 marker[4] = { MARKER, MARKER, MARKER, MARKER };
	volatile __u64 x = 0;
	double t0 = hwpmc_thread_cpu_now();
	long i;

	while (hwpmc_thread_cpu_now() - t0 < secs)
		for (i = 0; i < inner; i++)
			x += i * marker[i & 3];
}

#endif
