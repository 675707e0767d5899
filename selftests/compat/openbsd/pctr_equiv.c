// SPDX-License-Identifier: GPL-2.0
/*
 * A program written as for OpenBSD: BSD headers (<machine/cpu.h>,
 * <machine/pctr.h>), BSD types (u_int, pctrval), <err.h>, the header's
 * rdtsc() and rdpmc().  OpenBSD's own pctr(1) source (usr.sbin/pctr) was
 * not available to this project, so this stands in for it: it reads
 * /dev/pctr with PCIOCRD and prints what `pctr` prints (the TSC line, then
 * "  N  0xFUNCTION  COUNT" per counter), and with -r N reads counter N
 * with rdpmc() and prints "rdpmc N = VALUE".  Built against the compat
 * headers with the OS-level shims of selftests/compat/shim only.
 */
#include <sys/types.h>
#include <sys/ioctl.h>

#include <machine/cpu.h>
#include <machine/pctr.h>

#include <err.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static __dead void usage(void)
{
	fprintf(stderr, "usage: pctr_equiv [-r counter]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	struct pctrst st;
	u_int i;
	int fd, c, r = -1;

	while ((c = getopt(argc, argv, "r:")) != -1) {
		switch (c) {
		case 'r':
			r = atoi(optarg);
			if (r < 0 || r >= PCTR_NUM)
				usage();
			break;
		default:
			usage();
		}
	}
	if (r >= 0) {
		/* rdpmc() needs the grant of an open descriptor. */
		fd = open("/dev/pctr", O_RDONLY);
		if (fd < 0)
			err(1, "/dev/pctr");
		printf("rdpmc %d = %llu\n", r, (unsigned long long)rdpmc(r));
		close(fd);
		return 0;
	}
	fd = open("/dev/pctr", O_RDONLY);
	if (fd < 0)
		err(1, "/dev/pctr");
	if (ioctl(fd, PCIOCRD, &st) < 0)
		err(1, "PCIOCRD");
	printf("tsc = %llu\n", (unsigned long long)st.pctr_tsc);
	for (i = 0; i < PCTR_NUM; i++)
		printf("  %u  0x%08x  %20llu\n", i, st.pctr_fn[i],
		       (unsigned long long)(pctrval)st.pctr_hwc[i]);
	if (rdtsc() <= st.pctr_tsc)
		errx(1, "rdtsc() went backwards");
	close(fd);
	return 0;
}
