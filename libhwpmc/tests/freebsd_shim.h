/* SPDX-License-Identifier: BSD-2-Clause */
/* freebsd_shim.c's functions: plain types only (no ABI structures). */
#ifndef FREEBSD_SHIM_H
#define FREEBSD_SHIM_H
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
/* Each returns 0 or the errno of the FreeBSD-layout operation. */
int fb_allocate(int cls, uint32_t ev, int mode, uint32_t flags, uint32_t cpu, uint64_t cfg,
                uint32_t sub, uint32_t *id);
int fb_attach(uint32_t id, int pid);
int fb_simple(int op, uint32_t id);
int fb_rw(uint32_t id, uint32_t flags, uint64_t *value);
int fb_rows(int cpu, uint32_t *nrows, uint32_t *events, uint32_t *classes, uint32_t max);
int fb_version(uint32_t *v);
int fb_stats(unsigned *syscalls);
const char *fb_name_of_event(uint32_t ev);
int fb_constants_ok(void);
#ifdef __cplusplus
}
#endif
#endif
