# SPDX-License-Identifier: GPL-2.0
# hwpmc for Linux: top-level build.
#
#   make                 module for every kernel of the matrix + userland
#   make KDIR=/lib/modules/$(uname -r)/build   module for one kernel tree
#                        (no test flavor) + userland
#   make check           everything: deps, builds, checkpatch, unit tests,
#                        kselftests in the guest on both kernels
#   make demo            hwpmc at work inside a guest kernel
#
# Kernel modules land in build/<kernel-release>/hwpmc.ko (the test flavor,
# never shipped, in build/<kernel-release>/test/hwpmc.ko); userland in
# build/userland/.

TOP := $(CURDIR)
BUILD := $(TOP)/build
JOBS ?= $(shell nproc)
PREFIX ?= /usr/local

.PHONY: all modules modules-test userland check demo checkpatch install \
	clean help

ifeq ($(KDIR),)
all: modules modules-test userland
else
# One kernel of the user's: what README's "Loading it on a real machine"
# needs (the test flavor is for the guest rig only: make modules-test).
all: modules userland
endif

ifeq ($(KDIR),)
# Every kernel of the matrix (scripts/kernels reads Debian's metapackages).
modules:
	@set -e; scripts/kernels --headers all | while read -r short rel hdr; do \
		scripts/build-kmod "$$hdr" release; done
modules-test:
	@set -e; scripts/kernels --headers all | while read -r short rel hdr; do \
		scripts/build-kmod "$$hdr" test; done
else
modules:
	@scripts/build-kmod "$(KDIR)" release
modules-test:
	@scripts/build-kmod "$(KDIR)" test
endif

# Without Debian's linux-source-6.12 (the kselftest harness) the library
# and the tools still build; only the kselftests are left out.
userland:
	@scripts/linux-src-extract || \
		echo "userland: building without the kselftests" >&2
	@cmake -S $(TOP) -B $(BUILD)/userland -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD)/userland -j$(JOBS)

check:
	@scripts/check

demo:
	@scripts/demo

checkpatch:
	@scripts/linux-src-extract
	@# LINUX_VERSION_CODE: an out-of-tree module builds for several kernels
	@# (kmod/compat/compat.h is the one place that tests it).
	@perl $(BUILD)/linux-src/checkpatch.pl --no-tree --strict --terse \
		--ignore LINUX_VERSION_CODE \
		-f kmod/*.c kmod/*.h kmod/*/*.c kmod/*/*.h include/uapi/linux/*.h

# Install the module for KDIR (default: the running kernel), the udev rule,
# the library, headers, tools and man pages.  DESTDIR stages it all.
# Kbuild's modules_install runs depmod only where the tree has a System.map
# (Debian's header packages have none), so an install into the live system
# runs depmod itself (modprobe hwpmc then finds the module) and ldconfig
# (the tools then find libhwpmc.so).
INSTALL_KDIR = $(or $(KDIR),/lib/modules/$(shell uname -r)/build)
INSTALL_REL = $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"$$/\1/p' \
	"$(INSTALL_KDIR)/include/generated/utsrelease.h")
install:
	@scripts/build-kmod "$(INSTALL_KDIR)" release
	$(MAKE) -C "$(INSTALL_KDIR)" INSTALL_MOD_PATH=$(DESTDIR) \
		M=$(BUILD)/$(INSTALL_REL) modules_install
	$(if $(DESTDIR),,depmod -a $(INSTALL_REL))
	install -D -m 0644 kmod/99-hwpmc.rules $(DESTDIR)/etc/udev/rules.d/99-hwpmc.rules
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -d $(DESTDIR)$(PREFIX)/share/man/man8
	install -m 0644 man/*.8 $(DESTDIR)$(PREFIX)/share/man/man8/
	@cmake -S $(TOP) -B $(BUILD)/userland >/dev/null
	@cmake --build $(BUILD)/userland -j$(JOBS)
	DESTDIR=$(DESTDIR) cmake --install $(BUILD)/userland --prefix $(PREFIX)
	$(if $(DESTDIR),,ldconfig)

clean:
	rm -rf $(BUILD)

help:
	@sed -n '2,16s/^# \{0,1\}//p' Makefile
