/* SPDX-License-Identifier: GPL-2.0 */
/* The child processes of a bench program: killed, then reaped, together. */
#ifndef BENCH_KIDS_H
#define BENCH_KIDS_H

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>

static inline void bench_kill_kids(const pid_t *kids, long n)
{
	long i;

	for (i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	for (i = 0; i < n; i++)
		waitpid(kids[i], NULL, 0);
}

#endif
