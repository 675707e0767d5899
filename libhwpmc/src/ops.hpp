// SPDX-License-Identifier: BSD-2-Clause
// One function per hwpmc operation on a given fd: fill the ABI structure
// (reserved fields zero), issue the ioctl, return 0 or -1 with errno.  The
// C API calls these with its session fd, the C++ API with its own.
#pragma once

#include "sys.hpp"

#include <hwpmc/pmc.h>

#include <vector>

namespace hwpmc::detail {

int op_allocate(int fd, pmc_op_pmcallocate *a); // pm_pmcid out
int op_attach(int fd, pmc_id_t id, pid_t pid);
int op_detach(int fd, pmc_id_t id, pid_t pid);
int op_release(int fd, pmc_id_t id);
int op_start(int fd, pmc_id_t id);
int op_stop(int fd, pmc_id_t id);
// PMCRW: flags PMC_F_NEWVALUE and/or PMC_F_OLDVALUE; *value in and out.
// Inline: a read is this and the ioctl.
inline int op_rw(int fd, pmc_id_t id, uint32_t flags, pmc_value_t *value) {
    pmc_op_pmcrw a{};
    a.pm_pmcid = id;
    a.pm_flags = flags;
    a.pm_value = (flags & PMC_F_NEWVALUE) ? *value : 0;
    if (xioctl(fd, HWPMC_IOC_PMCRW, &a) < 0)
        return -1;
    if (flags & PMC_F_OLDVALUE)
        *value = a.pm_value;
    return 0;
}
int op_setcount(int fd, pmc_id_t id, pmc_value_t count);
int op_getmsr(int fd, pmc_id_t id, uint32_t *msr);
int op_getcaps(int fd, pmc_id_t id, uint32_t *caps);
int op_configurelog(int fd, int logfd);
int op_flushlog(int fd);
int op_closelog(int fd);
int op_writelog(int fd, uint32_t userdata);
int op_driverstats(int fd, pmc_op_getdriverstats *out);
int op_admin(int fd, int cpu, int row, enum pmc_state state);
// GETPMCINFO with the count protocol (retried if the count grows).
int op_pmcinfo(int fd, int cpu, std::vector<pmc_info> *out);
// GETPMCINFO's pm_event as the global event number (HWPMC_EV_GLOBAL),
// whatever the module's version.
void normalize_pmcinfo_event(pmc_info *row);
// GETDYNEVENTINFO with the count protocol.
int op_dynevents(int fd, enum pmc_class cls, std::vector<pmc_dyn_event_descr> *out);

} // namespace hwpmc::detail
