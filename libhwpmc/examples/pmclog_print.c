/* SPDX-License-Identifier: BSD-2-Clause */
/* FreeBSD style(9), as the programs it stands for: */
/* clang-format off */
/*
 * A program written only against FreeBSD's documented pmclog(3) API: print
 * the records of a hwpmc log file, one line each, as "pmcstat -R" does.  It
 * builds unchanged on FreeBSD and against libhwpmc on Linux.
 */
#include <sys/types.h>

#include <err.h>
#include <fcntl.h>
#include <pmc.h>
#include <pmclog.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sysexits.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct pmclog_ev ev;
	void *parser;
	uint32_t n;
	int fd;

	if (argc != 2)
		errx(EX_USAGE, "usage: pmclog-print LOGFILE");
	if ((fd = open(argv[1], O_RDONLY)) < 0)
		err(EX_NOINPUT, "%s", argv[1]);
	if ((parser = pmclog_open(fd)) == NULL)
		err(EX_SOFTWARE, "pmclog_open");
	while (pmclog_read(parser, &ev) == 0) {
		printf("%jd.%09ld ", (intmax_t)ev.pl_ts.tv_sec, ev.pl_ts.tv_nsec);
		switch (ev.pl_type) {
		case PMCLOG_TYPE_INITIALIZE:
			printf("initlog 0x%x \"%s\"\n", ev.pl_u.pl_i.pl_version,
			    pmc_name_of_cputype(ev.pl_u.pl_i.pl_arch));
			break;
		case PMCLOG_TYPE_CLOSELOG:
			printf("closelog\n");
			break;
		case PMCLOG_TYPE_DROPNOTIFY:
			printf("drop\n");
			break;
		case PMCLOG_TYPE_PMCALLOCATE:
			printf("allocate 0x%x \"%s\" 0x%x\n",
			    ev.pl_u.pl_a.pl_pmcid, ev.pl_u.pl_a.pl_evname,
			    ev.pl_u.pl_a.pl_flags);
			break;
		case PMCLOG_TYPE_PMCATTACH:
			printf("attach 0x%x %d \"%s\"\n", ev.pl_u.pl_t.pl_pmcid,
			    (int)ev.pl_u.pl_t.pl_pid, ev.pl_u.pl_t.pl_pathname);
			break;
		case PMCLOG_TYPE_PMCDETACH:
			printf("detach 0x%x %d\n", ev.pl_u.pl_d.pl_pmcid,
			    (int)ev.pl_u.pl_d.pl_pid);
			break;
		case PMCLOG_TYPE_PROCCSW:
			printf("cswval 0x%x %d %ju\n", ev.pl_u.pl_c.pl_pmcid,
			    (int)ev.pl_u.pl_c.pl_pid,
			    (uintmax_t)ev.pl_u.pl_c.pl_value);
			break;
		case PMCLOG_TYPE_PROCEXEC:
			printf("exec 0x%x %d \"%s\"\n", ev.pl_u.pl_x.pl_pmcid,
			    (int)ev.pl_u.pl_x.pl_pid, ev.pl_u.pl_x.pl_pathname);
			break;
		case PMCLOG_TYPE_PROCEXIT:
			printf("exitval 0x%x %d %ju\n", ev.pl_u.pl_e.pl_pmcid,
			    (int)ev.pl_u.pl_e.pl_pid,
			    (uintmax_t)ev.pl_u.pl_e.pl_value);
			break;
		case PMCLOG_TYPE_PROCFORK:
			printf("fork %d %d\n", (int)ev.pl_u.pl_f.pl_oldpid,
			    (int)ev.pl_u.pl_f.pl_newpid);
			break;
		case PMCLOG_TYPE_SYSEXIT:
			printf("exited %d\n", (int)ev.pl_u.pl_se.pl_pid);
			break;
		case PMCLOG_TYPE_USERDATA:
			printf("userdata 0x%x\n", ev.pl_u.pl_u.pl_userdata);
			break;
		case PMCLOG_TYPE_MAP_IN:
			printf("map-in %d %p \"%s\"\n", (int)ev.pl_u.pl_mi.pl_pid,
			    (void *)(uintptr_t)ev.pl_u.pl_mi.pl_start,
			    ev.pl_u.pl_mi.pl_pathname);
			break;
		case PMCLOG_TYPE_MAP_OUT:
			printf("map-out %d %p %p\n", (int)ev.pl_u.pl_mo.pl_pid,
			    (void *)(uintptr_t)ev.pl_u.pl_mo.pl_start,
			    (void *)(uintptr_t)ev.pl_u.pl_mo.pl_end);
			break;
		case PMCLOG_TYPE_CALLCHAIN:
			printf("callchain %d 0x%x %d %d %c", (int)ev.pl_u.pl_cc.pl_pid,
			    ev.pl_u.pl_cc.pl_pmcid,
			    (int)PMC_CALLCHAIN_CPUFLAGS_TO_CPU(ev.pl_u.pl_cc.pl_cpuflags),
			    (int)ev.pl_u.pl_cc.pl_npc,
			    PMC_CALLCHAIN_CPUFLAGS_TO_USERMODE(ev.pl_u.pl_cc.pl_cpuflags) ?
			    'u' : 's');
			for (n = 0; n < ev.pl_u.pl_cc.pl_npc; n++)
				printf(" %p", (void *)(uintptr_t)ev.pl_u.pl_cc.pl_pc[n]);
			printf("\n");
			break;
		default:
			printf("unknown record type %d\n", (int)ev.pl_type);
			break;
		}
	}
	if (ev.pl_state == PMCLOG_ERROR)
		err(EX_DATAERR, "%s: corrupt log", argv[1]);
	if (ev.pl_state != PMCLOG_EOF)
		errx(EX_DATAERR, "%s: unexpected end of the log", argv[1]);
	pmclog_close(parser);
	close(fd);
	return (EXIT_SUCCESS);
}
