/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <pmc.h> for FreeBSD programs (libhwpmc's compat include directory): the
 * pmc(3) API with FreeBSD's structures (struct pmc_cpuinfo, pmc_pmcinfo,
 * pmc_driverstats and struct pmc_op_pmcallocate as <sys/pmc.h> of this
 * directory defines them), served by libhwpmc.  The functions whose
 * structures differ from <hwpmc/pmc.h>'s are other entry points of the
 * same library (asm labels), so a program links with -lhwpmc either way.
 * Everything else: <hwpmc/pmc.h>, whose comments say what differs from
 * FreeBSD.
 */
#ifndef HWPMC_COMPAT_PMC_H
#define HWPMC_COMPAT_PMC_H

#include <sys/pmc.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pmc_driverstats {
    unsigned int pm_intr_ignored;
    unsigned int pm_intr_processed;
    unsigned int pm_intr_bufferfull;
    unsigned int pm_syscalls;
    unsigned int pm_syscall_errors;
    unsigned int pm_buffer_requests;
    unsigned int pm_buffer_requests_failed;
    unsigned int pm_log_sweeps;
};

struct pmc_cpuinfo {
    enum pmc_cputype pm_cputype;
    uint32_t pm_ncpu;
    uint32_t pm_npmc;
    uint32_t pm_nclass;
    struct pmc_classinfo pm_classes[PMC_CLASS_TABLE_SIZE_FREEBSD];
};

struct pmc_pmcinfo {
    int32_t pm_cpu;
    struct pmc_info pm_pmcs[];
};

#pragma GCC visibility push(default)

int pmc_init(void);
int pmc_allocate(const char *_ctrspec, enum pmc_mode _mode, uint32_t _flags, int _cpu,
                 pmc_id_t *_pmcid, uint64_t _count);
int pmc_attach(pmc_id_t _pmcid, pid_t _pid);
int pmc_capabilities(pmc_id_t _pmc, uint32_t *_caps);
int pmc_configure_logfile(int _fd);
int pmc_flush_logfile(void);
int pmc_close_logfile(void);
int pmc_detach(pmc_id_t _pmcid, pid_t _pid);
int pmc_disable(int _cpu, int _pmc);
int pmc_enable(int _cpu, int _pmc);
int pmc_get_driver_stats(struct pmc_driverstats *_gms) __asm__("pmc_freebsd_get_driver_stats");
int pmc_get_msr(pmc_id_t _pmc, uint32_t *_msr);
int pmc_read(pmc_id_t _pmc, pmc_value_t *_value);
int pmc_release(pmc_id_t _pmc);
int pmc_rw(pmc_id_t _pmc, pmc_value_t _newvalue, pmc_value_t *_oldvalue);
int pmc_set(pmc_id_t _pmc, pmc_value_t _value);
int pmc_start(pmc_id_t _pmc);
int pmc_stop(pmc_id_t _pmc);
int pmc_width(pmc_id_t _pmc, uint32_t *_width);
int pmc_write(pmc_id_t _pmc, pmc_value_t _value);
int pmc_writelog(uint32_t _udata);

int pmc_ncpu(void);
int pmc_npmc(int _cpu);
int pmc_cpuinfo(const struct pmc_cpuinfo **_cpu_info) __asm__("pmc_freebsd_cpuinfo");
int pmc_pmcinfo(int _cpu, struct pmc_pmcinfo **_pmc_info) __asm__("pmc_freebsd_pmcinfo");

const char *pmc_name_of_capability(enum pmc_caps _c);
const char *pmc_name_of_class(enum pmc_class _pc);
const char *pmc_name_of_cputype(enum pmc_cputype _cp);
const char *pmc_name_of_disposition(enum pmc_disp _pd);
const char *pmc_name_of_event(enum pmc_event _pe);
const char *pmc_name_of_mode(enum pmc_mode _pm);
const char *pmc_name_of_state(enum pmc_state _ps);
int pmc_event_names_of_class(enum pmc_class _cl, const char ***_eventnames, int *_nevents);

int pmc_pmu_enabled(void);
void pmc_pmu_print_counters(const char *_filter);
void pmc_pmu_print_counter_desc(const char *_event);
void pmc_pmu_print_counter_desc_long(const char *_event);
void pmc_pmu_print_counter_full(const char *_event);
uint64_t pmc_pmu_sample_rate_get(const char *_event);
int pmc_pmu_pmcallocate(const char *_event,
                        struct pmc_op_pmcallocate *_op) __asm__("pmc_freebsd_pmu_pmcallocate");
const char *pmc_pmu_event_get_by_idx(const char *_cpuid, int _idx);
int pmc_pmu_idx_get_by_event(const char *_cpuid, const char *_event);
int pmc_pmu_stat_mode(const char ***_names);

/* Extensions of libhwpmc (see <hwpmc/pmc.h>). */
const char *pmc_errmsg(void);
int pmc_owner_fd(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* HWPMC_COMPAT_PMC_H */
