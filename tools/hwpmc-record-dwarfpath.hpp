// SPDX-License-Identifier: GPL-2.0
// hwpmc-record-dwarfpath's library (libhwpmc-record-dwarflib.so).
#pragma once

extern "C" unsigned long dwarf_b(unsigned long n);
extern "C" unsigned long dwarf_leaf(unsigned long n);
