# SPDX-License-Identifier: GPL-2.0
# hwpmc for Linux: top-level build.
#
#   make                 module for every kernel of the matrix + userland
#   make KDIR=/lib/modules/$(uname -r)/build   module for one kernel tree
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

all: modules modules-test userland

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

userland:
	@scripts/linux-src-extract
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
INSTALL_KDIR = $(or $(KDIR),/lib/modules/$(shell uname -r)/build)
install:
	@scripts/build-kmod "$(INSTALL_KDIR)" release
	$(MAKE) -C "$(INSTALL_KDIR)" INSTALL_MOD_PATH=$(DESTDIR) \
		M=$(BUILD)/$$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$$/\1/p' \
		"$(INSTALL_KDIR)/include/generated/utsrelease.h") \
		modules_install
	install -D -m 0644 kmod/99-hwpmc.rules $(DESTDIR)/etc/udev/rules.d/99-hwpmc.rules
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	@cmake -S $(TOP) -B $(BUILD)/userland >/dev/null
	@cmake --build $(BUILD)/userland -j$(JOBS)
	DESTDIR=$(DESTDIR) cmake --install $(BUILD)/userland --prefix $(PREFIX)

clean:
	rm -rf $(BUILD)

help:
	@sed -n '2,16s/^# \{0,1\}//p' Makefile
