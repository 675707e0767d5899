// SPDX-License-Identifier: GPL-2.0
// bench_peak COMMAND [ARG]...: run COMMAND (its output discarded) and print
// "NS KB": its wall time in nanoseconds and its peak resident memory
// (getrusage's ru_maxrss, KiB).  Exit status: COMMAND's (1 if it did not
// exit normally, 127 if it could not run).
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	int status, fd;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: bench_peak COMMAND [ARG]...\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0) {
		perror("bench_peak: fork");
		return 127;
	}
	if (pid == 0) {
		fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid) {
		perror("bench_peak: wait4");
		return 127;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%lld %ld\n",
	       (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec),
	       ru.ru_maxrss);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
