// SPDX-License-Identifier: GPL-2.0
// The pctr command (OpenBSD pctr(1) over /dev/pctr): the function word a
// command line asks for, and the status it prints.
#pragma once

#include <linux/pctr.h>

#include <cstdint>
#include <string>

namespace hwpmc_tools::pctr {

// What -e, -m, -c, -U, -K, -E, -I, -A, -M and -d ask counter -s for.
struct request {
    uint32_t event = 0;   // event select (low 8 bits)
    uint32_t umask = 0;   // unit mask (8 bits)
    uint32_t cmask = 0;   // counter mask (8 bits)
    bool user = false;    // -U
    bool kernel = false;  // -K
    bool edge = false;    // -E
    bool invert = false;  // -I
    bool any = false;     // -A: PCTR_UM_A
    bool mesi = false;    // -M: PCTR_UM_MESI
    bool disable = false; // -d: function 0
};

// The function word for PCIOCSx: event, unit mask (with -A, -M), flags,
// counter mask, PCTR_EN; neither -U nor -K counts both modes, as on
// OpenBSD.  -d: 0.  An event, unit mask or counter mask that does not fit
// its 8 bits: false, with `why` saying which.
bool function_word(const request &r, uint32_t *fn, std::string *why);

// "usr,os,edge,inv,en event=0xc0 umask=0x00 cmask=0" for a function word;
// "-" for 0.
std::string describe(uint32_t fn);

// What pctr prints: the TSC, then one line per counter ("  N  0xFUNCTION
// COUNT  description").
std::string format_status(const struct pctrst &st, unsigned ncounters = PCTR_NUM);

} // namespace hwpmc_tools::pctr
