/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <sys/pmc.h> for FreeBSD programs: libhwpmc's compat include directory
 * (-I<includedir>/hwpmc/compat once installed; libhwpmc/compat/include in
 * the source tree), with -lhwpmc.
 *
 * FreeBSD's names and layouts of the operations' argument structures
 * (struct pmc_op_pmcallocate with pm_ev and the pm_md union, struct
 * pmc_op_pmcattach with pm_pmc, ...), which the library translates to the
 * Linux ABI of <linux/hwpmc.h>: issue them with PMC_CALL(OP, &arg) (as
 * FreeBSD's libpmc does) or pmc_freebsd_op(PMC_OP_x, &arg), on the owner
 * that pmc_init() opened.  This header cannot be combined with
 * <linux/hwpmc.h> or <hwpmc/pmc.h> in one translation unit (the same
 * structure tags have other layouts there).
 *
 * What differs from FreeBSD:
 *  - enum pmc_event: one number per event, as FreeBSD's, but numbered as
 *    libhwpmc numbers them: class << 24 | the class's event code
 *    (PMC_EV_MAKE()); pmc_name_of_event() and GETPMCINFO's pm_event use
 *    the same numbers.
 *  - PMCALLOCATE of hardware events: IAP takes pm_md.pm_iap.pm_iap_config
 *    (an event select; pm_iap_rsp must be 0: no OFFCORE_RSP), IAF takes
 *    pm_ev and pm_md.pm_iaf.pm_iaf_flags; K8, as on FreeBSD, only with
 *    PMC_F_EV_PMU (else EINVAL) and pm_amd_sub_class
 *    PMC_AMD_SUB_CLASS_CORE (the L3 cache and data fabric counters are not
 *    supported: EINVAL), its event select in pm_amd_config.  Bits the
 *    kernel sets itself (interrupt, enable) are dropped.  PMC_F_EV_PMU and
 *    PMC_F_USERCALLCHAIN are accepted and dropped (callchains always hold
 *    the user frames).  Classes this port lacks (IBS, UCF, UCP, K7, P4 ...)
 *    exist for the names only: EINVAL.
 *  - There is no system call: `syscall(pmc_syscall, op, arg)` becomes
 *    PMC_CALL(op, arg) or pmc_freebsd_op(op, arg); pmc_syscall is -1.
 *    Ops with the Linux layouts: pmc_raw_op() of <hwpmc/pmc.h>.
 */
#ifndef HWPMC_COMPAT_SYS_PMC_H
#define HWPMC_COMPAT_SYS_PMC_H

#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PMC_MODULE_NAME "hwpmc"
#undef PMC_NAME_MAX
#define PMC_NAME_MAX 64
#define PMC_CLASS_TABLE_SIZE_FREEBSD 16

/* The module's ABI version (<linux/hwpmc.h>'s), FreeBSD's encoding. */
#define PMC_VERSION_MAJOR 0x01
#define PMC_VERSION_MINOR 0x04
#define PMC_VERSION_PATCH 0x0000
#define PMC_VERSION (PMC_VERSION_MAJOR << 24 | PMC_VERSION_MINOR << 16 | PMC_VERSION_PATCH)

/* The enumerations: libhwpmc's values (those of <hwpmc/pmc.h>). */
#undef PMC_CPU_GENERIC
#undef PMC_CPU_INTEL_ARCH
#undef PMC_CPU_AMD_K8
#undef PMC_CPU_AMD_EXT
#undef PMC_CPU_AMD_V2
enum pmc_cputype {
    PMC_CPU_GENERIC = 0x00,
    PMC_CPU_INTEL_ARCH = 0x01,
    PMC_CPU_AMD_K8 = 0x02,
    PMC_CPU_AMD_EXT = 0x03,
    PMC_CPU_AMD_V2 = 0x04,
    PMC_CPU_AMD_K7 = 0x05,
    PMC_CPU_INTEL_P5 = 0x80,
    PMC_CPU_INTEL_P6 = 0x81,
    PMC_CPU_INTEL_CL = 0x82,
    PMC_CPU_INTEL_PII = 0x83,
    PMC_CPU_INTEL_PIII = 0x84,
    PMC_CPU_INTEL_PM = 0x85,
    PMC_CPU_INTEL_PIV = 0x86,
    PMC_CPU_INTEL_CORE = 0x87,
    PMC_CPU_INTEL_CORE2 = 0x88,
    PMC_CPU_INTEL_CORE2EXTREME = 0x89,
    PMC_CPU_INTEL_ATOM = 0x8A,
    PMC_CPU_INTEL_COREI7 = 0x8B,
    PMC_CPU_INTEL_WESTMERE = 0x8C,
    PMC_CPU_INTEL_SANDYBRIDGE = 0x8D,
    PMC_CPU_INTEL_XSCALE = 0x100,
    PMC_CPU_MIPS_24K = 0x200,
    PMC_CPU_MIPS_OCTEON = 0x201,
    PMC_CPU_PPC_7450 = 0x300,
};
#define PMC_CPU_FIRST PMC_CPU_GENERIC
#define PMC_CPU_LAST PMC_CPU_AMD_V2

/* Classes: this port's five, then FreeBSD's others (names only). */
#undef PMC_CLASS_TSC
#undef PMC_CLASS_K8
#undef PMC_CLASS_IAF
#undef PMC_CLASS_IAP
#undef PMC_CLASS_SOFT
#undef PMC_CLASS_MAX
enum pmc_class {
    PMC_CLASS_TSC = 0x00,
    PMC_CLASS_K7 = 0x01,
    PMC_CLASS_K8 = 0x02,
    PMC_CLASS_P5 = 0x03,
    PMC_CLASS_P6 = 0x04,
    PMC_CLASS_P4 = 0x05,
    PMC_CLASS_IAF = 0x06,
    PMC_CLASS_IAP = 0x07,
    PMC_CLASS_UCF = 0x08,
    PMC_CLASS_UCP = 0x09,
    PMC_CLASS_SOFT = 0x13,
    PMC_CLASS_IBS = 0x20,
};
#define PMC_CLASS_FIRST PMC_CLASS_TSC
#define PMC_CLASS_LAST PMC_CLASS_SOFT
#define PMC_CLASS_MAX 0x13

/* AMD K8 sub-classes (pm_md.pm_amd.pm_amd_sub_class). */
enum sub_class {
    PMC_AMD_SUB_CLASS_CORE,
    PMC_AMD_SUB_CLASS_L3_CACHE,
    PMC_AMD_SUB_CLASS_DATA_FABRIC,
};

#undef PMC_MODE_SS
#undef PMC_MODE_SC
#undef PMC_MODE_TS
#undef PMC_MODE_TC
#undef PMC_MODE_MAX
#undef PMC_MODE_INVALID
enum pmc_mode {
    PMC_MODE_SS = 0,
    PMC_MODE_SC = 1,
    PMC_MODE_TS = 2,
    PMC_MODE_TC = 3
};
#define PMC_MODE_FIRST PMC_MODE_SS
#define PMC_MODE_LAST PMC_MODE_TC
#define PMC_MODE_INVALID 4
#define PMC_IS_COUNTING_MODE(mode) ((mode) == PMC_MODE_SC || (mode) == PMC_MODE_TC)
#define PMC_IS_SYSTEM_MODE(mode) ((mode) == PMC_MODE_SS || (mode) == PMC_MODE_SC)
#define PMC_IS_SAMPLING_MODE(mode) ((mode) == PMC_MODE_SS || (mode) == PMC_MODE_TS)
#define PMC_IS_VIRTUAL_MODE(mode) ((mode) == PMC_MODE_TS || (mode) == PMC_MODE_TC)

#undef PMC_STATE_DISABLED
#undef PMC_STATE_FREE
#undef PMC_STATE_ALLOCATED
#undef PMC_STATE_STOPPED
#undef PMC_STATE_RUNNING
#undef PMC_STATE_DELETED
#undef PMC_STATE_MAX
enum pmc_state {
    PMC_STATE_DISABLED,
    PMC_STATE_FREE,
    PMC_STATE_ALLOCATED,
    PMC_STATE_STOPPED,
    PMC_STATE_RUNNING,
    PMC_STATE_DELETED,
    PMC_STATE_MAX,
};
#define PMC_STATE_FIRST PMC_STATE_DISABLED
#define PMC_STATE_LAST PMC_STATE_DELETED

#undef PMC_DISP_STANDALONE
#undef PMC_DISP_FREE
#undef PMC_DISP_THREAD
#undef PMC_DISP_UNKNOWN
enum pmc_disp {
    PMC_DISP_STANDALONE,
    PMC_DISP_FREE,
    PMC_DISP_THREAD,
    PMC_DISP_UNKNOWN
};
#define PMC_DISP_FIRST PMC_DISP_STANDALONE
#define PMC_DISP_LAST PMC_DISP_THREAD

#undef PMC_CAP_INTERRUPT
#undef PMC_CAP_USER
#undef PMC_CAP_SYSTEM
#undef PMC_CAP_EDGE
#undef PMC_CAP_THRESHOLD
#undef PMC_CAP_READ
#undef PMC_CAP_WRITE
#undef PMC_CAP_INVERT
#undef PMC_CAP_QUALIFIER
#undef PMC_CAP_PRECISE
#undef PMC_CAP_TAGGING
#undef PMC_CAP_CASCADE
#undef PMC_CAP_SYSWIDE
#undef PMC_CAP_DOMWIDE
#undef PMC_CAP_ANYTHREAD
#undef PMC_CAP_MASK
enum pmc_caps {
    PMC_CAP_INTERRUPT = 0x0001,
    PMC_CAP_USER = 0x0002,
    PMC_CAP_SYSTEM = 0x0004,
    PMC_CAP_EDGE = 0x0008,
    PMC_CAP_THRESHOLD = 0x0010,
    PMC_CAP_READ = 0x0020,
    PMC_CAP_WRITE = 0x0040,
    PMC_CAP_INVERT = 0x0080,
    PMC_CAP_QUALIFIER = 0x0100,
    PMC_CAP_PRECISE = 0x0200,
    PMC_CAP_TAGGING = 0x0400,
    PMC_CAP_CASCADE = 0x0800,
    PMC_CAP_SYSWIDE = 0x1000,
    PMC_CAP_DOMWIDE = 0x2000,
    PMC_CAP_ANYTHREAD = 0x4000,
};
#define PMC_CAP_FIRST PMC_CAP_INTERRUPT
#define PMC_CAP_LAST PMC_CAP_ANYTHREAD

/* Events: class << 24 | code (see above). */
enum pmc_event {
    PMC_EV_TSC_TSC = 0x00000000,
    PMC_EV_IAF_INSTR_RETIRED_ANY = 0x06000000,
    PMC_EV_IAF_CPU_CLK_UNHALTED_CORE,
    PMC_EV_IAF_CPU_CLK_UNHALTED_REF,
    PMC_EV_IAF_TOPDOWN_SLOTS,
    PMC_EV_SOFT_CLOCK_HARD = 0x13000000,
    PMC_EV_SOFT_CLOCK_PROF,
    PMC_EV_SOFT_PAGE_FAULT_ALL,
    PMC_EV_SOFT_PAGE_FAULT_READ,
    PMC_EV_SOFT_PAGE_FAULT_WRITE,
    PMC_EV_SOFT_SCHED_SWITCH,
    PMC_EV_SOFT_SCHED_MIGRATE,
    PMC_EV_SOFT_SYSCALL_ENTER,
};
#define PMC_EV_TSC_FIRST PMC_EV_TSC_TSC
#define PMC_EV_TSC_LAST PMC_EV_TSC_TSC
#define PMC_EV_SOFT_FIRST PMC_EV_SOFT_CLOCK_HARD
#define PMC_EV_SOFT_LAST 0x13ffffff
#ifndef PMC_EV_MAKE
#define PMC_EV_MAKE(cls, code)                                                                     \
    ((enum pmc_event)((((uint32_t)(cls)&0xffu) << 24) | ((uint32_t)(code)&0xffffffu)))
#define PMC_EV_CLASS(ev) ((uint32_t)(ev) >> 24)
#define PMC_EV_CODE(ev) ((uint32_t)(ev)&0xffffffu)
#endif
#define PMC_EV_DYN_COUNT 0x1000

/* Operations: FreeBSD's numbers (the ioctl numbers' nr). */
#undef PMC_OP_CONFIGURELOG
#undef PMC_OP_FLUSHLOG
#undef PMC_OP_GETCPUINFO
#undef PMC_OP_GETDRIVERSTATS
#undef PMC_OP_GETMODULEVERSION
#undef PMC_OP_GETPMCINFO
#undef PMC_OP_PMCADMIN
#undef PMC_OP_PMCALLOCATE
#undef PMC_OP_PMCATTACH
#undef PMC_OP_PMCDETACH
#undef PMC_OP_PMCGETMSR
#undef PMC_OP_PMCRELEASE
#undef PMC_OP_PMCRW
#undef PMC_OP_PMCSETCOUNT
#undef PMC_OP_PMCSTART
#undef PMC_OP_PMCSTOP
#undef PMC_OP_WRITELOG
#undef PMC_OP_CLOSELOG
#undef PMC_OP_GETDYNEVENTINFO
#undef PMC_OP_GETCAPS
#undef PMC_OP_MAX
enum pmc_ops {
    PMC_OP_CONFIGURELOG,
    PMC_OP_FLUSHLOG,
    PMC_OP_GETCPUINFO,
    PMC_OP_GETDRIVERSTATS,
    PMC_OP_GETMODULEVERSION,
    PMC_OP_GETPMCINFO,
    PMC_OP_PMCADMIN,
    PMC_OP_PMCALLOCATE,
    PMC_OP_PMCATTACH,
    PMC_OP_PMCDETACH,
    PMC_OP_PMCGETMSR,
    PMC_OP_PMCRELEASE,
    PMC_OP_PMCRW,
    PMC_OP_PMCSETCOUNT,
    PMC_OP_PMCSTART,
    PMC_OP_PMCSTOP,
    PMC_OP_WRITELOG,
    PMC_OP_CLOSELOG,
    PMC_OP_GETDYNEVENTINFO,
    PMC_OP_GETCAPS,
};
#define PMC_OP_PMCX86GETMSR PMC_OP_PMCGETMSR

/* Flags. */
#undef PMC_F_DESCENDANTS
#undef PMC_F_LOG_PROCCSW
#undef PMC_F_LOG_PROCEXIT
#undef PMC_F_KGMON
#undef PMC_F_CALLCHAIN
#undef PMC_F_ALLOCATE_MASK
#undef PMC_F_NEWVALUE
#undef PMC_F_OLDVALUE
#undef PMC_F_RW_MASK
#define PMC_F_DESCENDANTS 0x00000004   /* ALLOCATE: follow descendants */
#define PMC_F_LOG_PROCCSW 0x00000008   /* ALLOCATE: log context switches */
#define PMC_F_LOG_PROCEXIT 0x00000010  /* ALLOCATE: log process exits */
#define PMC_F_NEWVALUE 0x00000010      /* RW: write a new value */
#define PMC_F_OLDVALUE 0x00000020      /* RW: get the old value */
#define PMC_F_KGMON 0x00000040         /* ALLOCATE: EOPNOTSUPP here */
#define PMC_F_CALLCHAIN 0x00000080     /* ALLOCATE: capture callchains */
#define PMC_F_USERCALLCHAIN 0x00000100 /* ALLOCATE: accepted, dropped */
#define PMC_F_EV_PMU 0x00000200        /* ALLOCATE: event from the PMU tables */

#undef PMC_CPU_ANY
#undef PMC_ID_INVALID
typedef uint32_t pmc_id_t;
typedef uint64_t pmc_value_t;
#define PMC_CPU_ANY (~0)
#define PMC_ID_INVALID (~(pmc_id_t)0)

/* Machine-dependent PMCALLOCATE parts (x86). */
#define IAF_OS 0x1
#define IAF_USR 0x2
#define IAF_ANY 0x4
#define IAF_PMI 0x8
struct pmc_md_iaf_op_pmcallocate {
    uint64_t pm_iaf_flags; /* IAF_* */
};
struct pmc_md_iap_op_pmcallocate {
    uint64_t pm_iap_config; /* the event select */
    uint64_t pm_iap_rsp;    /* OFFCORE_RSP: must be 0 here */
};
struct pmc_md_amd_op_pmcallocate {
    uint64_t pm_amd_config; /* the event select (event bits 8-11 at 32-35) */
    uint32_t pm_amd_sub_class;
};
struct pmc_md_ibs_op_pmcallocate {
    uint64_t ibs_ctl;
    int ibs_type;
};
union pmc_md_op_pmcallocate {
    struct pmc_md_amd_op_pmcallocate pm_amd;
    struct pmc_md_iaf_op_pmcallocate pm_iaf;
    struct pmc_md_iap_op_pmcallocate pm_iap;
    struct pmc_md_ibs_op_pmcallocate pm_ibs;
    uint64_t __pad[4];
};

/* The operations' arguments, FreeBSD's layouts. */
struct pmc_op_pmcallocate {
    uint32_t pm_caps;
    uint32_t pm_cpu;
    enum pmc_class pm_class;
    enum pmc_event pm_ev;
    uint32_t pm_flags;
    enum pmc_mode pm_mode;
    pmc_id_t pm_pmcid; /* out */
    pmc_value_t pm_count;
    union pmc_md_op_pmcallocate pm_md;
};

struct pmc_op_pmcadmin {
    int pm_cpu;
    uint32_t pm_flags;
    int pm_pmc;
    enum pmc_state pm_state;
};

struct pmc_op_pmcattach {
    pmc_id_t pm_pmc;
    pid_t pm_pid;
};

struct pmc_op_pmcsetcount {
    pmc_value_t pm_count;
    pmc_id_t pm_pmcid;
};

struct pmc_op_pmcrw {
    uint32_t pm_flags;
    pmc_id_t pm_pmcid;
    pmc_value_t pm_value;
};

struct pmc_info {
    char pm_name[PMC_NAME_MAX];
    enum pmc_class pm_class;
    int pm_enabled;
    enum pmc_disp pm_rowdisp;
    pid_t pm_ownerpid;
    enum pmc_mode pm_mode;
    enum pmc_event pm_event;
    uint32_t pm_flags;
    pmc_value_t pm_reloadcount;
};

struct pmc_op_getpmcinfo {
    int32_t pm_cpu;
    struct pmc_info pm_pmcs[]; /* GETCPUINFO's pm_npmc entries */
};

struct pmc_classinfo {
    enum pmc_class pm_class;
    uint32_t pm_caps;
    uint32_t pm_width;
    uint32_t pm_num;
};

struct pmc_op_getcpuinfo {
    enum pmc_cputype pm_cputype;
    uint32_t pm_ncpu;
    uint32_t pm_npmc;
    uint32_t pm_nclass;
    struct pmc_classinfo pm_classes[PMC_CLASS_TABLE_SIZE_FREEBSD];
};

struct pmc_op_configurelog {
    int pm_flags;
    int pm_logfd;
};

struct pmc_op_getdriverstats {
    unsigned int pm_intr_ignored;
    unsigned int pm_intr_processed;
    unsigned int pm_intr_bufferfull;
    unsigned int pm_syscalls;
    unsigned int pm_syscall_errors;
    unsigned int pm_buffer_requests;
    unsigned int pm_buffer_requests_failed;
    unsigned int pm_log_sweeps;
};

struct pmc_op_simple {
    pmc_id_t pm_pmcid;
};

struct pmc_op_writelog {
    uint32_t pm_userdata;
};

struct pmc_op_x86_getmsr {
    uint32_t pm_msr;
    pmc_id_t pm_pmcid;
};

struct pmc_op_caps {
    pmc_id_t pm_pmcid;
    uint32_t pm_caps;
};

struct pmc_dyn_event_descr {
    char pm_ev_name[PMC_NAME_MAX];
    enum pmc_event pm_ev_code;
};

struct pmc_op_getdyneventinfo {
    enum pmc_class pm_class;
    unsigned int pm_nevent;
    struct pmc_dyn_event_descr pm_events[PMC_EV_DYN_COUNT];
};

#pragma GCC visibility push(default)
/*
 * A FreeBSD operation (GETMODULEVERSION takes a uint32_t *, FLUSHLOG and
 * CLOSELOG nothing) on the library's owner: 0, or -1 with errno.
 */
int pmc_freebsd_op(int _op, void *_arg);
extern int pmc_syscall; /* -1: there is no hwpmc system call */
#pragma GCC visibility pop

/* FreeBSD libpmc's PMC_CALL(cmd, params). */
#define PMC_CALL(cmd, params) pmc_freebsd_op(PMC_OP_##cmd, (params))

#ifdef __cplusplus
}
#endif

#endif /* HWPMC_COMPAT_SYS_PMC_H */
