/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers for tests that read hwpmc logs. */
#ifndef HWPMC_SELFTEST_LOG_UTIL_H
#define HWPMC_SELFTEST_LOG_UTIL_H

#include "hwpmc_util.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

/*
 * Does @pc lie inside function @fn?  Its size comes from the symbol table
 * (the test is linked with -rdynamic, so the symbols are in .dynsym).
 */
static inline int hwpmc_pc_in_fn(__u64 pc, void *fn)
{
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (!dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
	    info.dli_saddr != fn || !sym->st_size)
		return 0;
	return pc >= (__u64)(uintptr_t)fn &&
	       pc < (__u64)(uintptr_t)fn + sym->st_size;
}

/*
 * A log's reader thread (pthread_create(..., hwpmc_log_read_all, r)):
 * everything from r->fd until EOF, into a buffer that grows (r->buf,
 * r->len; free() it), r->err the errno of a failure.
 */
struct hwpmc_log_reader {
	int fd;
	char *buf;
	size_t len, cap;
	int err;
};

static inline void *hwpmc_log_read_all(void *arg)
{
	struct hwpmc_log_reader *r = arg;
	ssize_t n;

	for (;;) {
		if (r->cap - r->len < 65536) {
			char *b = realloc(r->buf, r->cap * 2 + 65536);

			if (!b) {
				r->err = ENOMEM;
				return NULL;
			}
			r->buf = b;
			r->cap = r->cap * 2 + 65536;
		}
		n = read(r->fd, r->buf + r->len, r->cap - r->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			r->err = errno;
		if (n <= 0)
			return NULL;
		r->len += n;
	}
}

static inline int hwpmc_configure_log(int fd, int logfd)
{
	struct pmc_op_configurelog c = { .pm_logfd = logfd };

	return hwpmc_ioctl_err(fd, HWPMC_IOC_CONFIGURELOG, &c);
}

static inline int hwpmc_flushlog(int fd)
{
	return hwpmc_ioctl_err(fd, HWPMC_IOC_FLUSHLOG, NULL);
}

static inline int hwpmc_closelog(int fd)
{
	return hwpmc_ioctl_err(fd, HWPMC_IOC_CLOSELOG, NULL);
}

/* A whole file in memory; free() it.  NULL on error. */
static inline char *hwpmc_slurp(const char *path, size_t *len)
{
	struct stat st;
	char *buf;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st)) {
		close(fd);
		return NULL;
	}
	buf = malloc(st.st_size + 8);
	n = buf ? read(fd, buf, st.st_size) : -1;
	close(fd);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

/*
 * A DROPNOTIFY record's samples added to *@dropped, and its throttled
 * count to *@throttled (where the record is long enough to have one);
 * false, nothing added, for any other record.
 */
static inline bool hwpmc_add_drops(const struct pmclog_header *h,
				   __u64 *dropped, __u64 *throttled)
{
	const struct pmclog_dropnotify *d = (const void *)h;

	if (h->pl_type != PMCLOG_TYPE_DROPNOTIFY)
		return false;
	*dropped += d->pl_samples;
	if (h->pl_len >= sizeof(*d))
		*throttled += d->pl_throttled;
	return true;
}

/*
 * What a log says of its samples (hwpmc_for_each_record(...,
 * hwpmc_tally_samples, &t)): CALLCHAIN and USERSTACK records, and the
 * drops its DROPNOTIFY records count.
 */
struct hwpmc_sample_tally {
	__u64 logged, userstacks, dropped, throttled;
};

static inline int hwpmc_tally_samples(const struct pmclog_header *h,
				      void *arg)
{
	struct hwpmc_sample_tally *t = arg;

	if (h->pl_type == PMCLOG_TYPE_CALLCHAIN)
		t->logged++;
	else if (h->pl_type == PMCLOG_TYPE_USERSTACK)
		t->userstacks++;
	else
		hwpmc_add_drops(h, &t->dropped, &t->throttled);
	return 0;
}

/*
 * Call @fn for each record of a log image; stops early if fn returns
 * non-zero.  Returns the number of records, or -1 if the image is not a
 * well-formed sequence of records.
 */
static inline int hwpmc_for_each_record(const char *buf, size_t len,
		int (*fn)(const struct pmclog_header *h, void *arg), void *arg)
{
	size_t off = 0;
	int n = 0;

	while (off < len) {
		const struct pmclog_header *h = (const void *)(buf + off);

		if (len - off < sizeof(*h) || h->pl_len < sizeof(*h) ||
		    h->pl_len % 8 || h->pl_len > len - off ||
		    h->pl_type < 1 || h->pl_type > PMCLOG_TYPE_MAX)
			return -1;
		if (fn && fn(h, arg))
			break;
		off += h->pl_len;
		n++;
	}
	return n;
}

#endif
