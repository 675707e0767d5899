# SPDX-License-Identifier: GPL-2.0
# hwpmc for Linux: top-level build.
#
#   make                 module for every kernel of the matrix (and rt, if
#                        installed) + userland
#   make KDIR=/lib/modules/$(uname -r)/build   module for one kernel tree
#                        (no test flavor) + userland
#   make check           everything: deps, builds, checkpatch, unit tests,
#                        kselftests in the guest on both kernels
#   make check-debug     every kselftest on the debug kernel (KASAN, lockdep,
#                        kmemleak, UBSAN...; built once into ~/.cache/hwpmc)
#   make check-rt        the kselftests in the guest on Debian's PREEMPT_RT
#                        kernel (rt; not part of make check)
#   make check-icount    the profile-truth kselftests under QEMU -icount
#                        (bookworm-backports' QEMU, 6.12 and 6.1: issue
#                        19's 98% attribution, strict)
#   make demo            hwpmc at work inside a guest kernel
#   make bench           hwpmc against perf in one guest (-icount): the table
#   make sparse          the module through sparse (C=2), both kernels
#   make fuzz [FUZZ_OPS=N] [FUZZ_SEED=S] [FUZZ_KERNEL=6.1|6.12|all|debug]
#                        the ioctl fuzzer in a guest (default 10,000,000 ops)
#
# Kernel modules land in build/<kernel-release>/hwpmc.ko (the test flavor,
# never shipped, in build/<kernel-release>/test/hwpmc.ko); userland in
# build/userland/.

TOP := $(CURDIR)
BUILD := $(TOP)/build
JOBS ?= $(shell nproc)
PREFIX ?= /usr/local

.PHONY: all modules modules-test userland check demo bench checkpatch sparse \
	fuzz check-debug check-rt check-icount \
	install clean help

ifeq ($(KDIR),)
all: modules modules-test userland
else
# One kernel of the user's: what README's "Loading it on a real machine"
# needs (the test flavor is for the guest rig only: make modules-test).
all: modules userland
endif

ifeq ($(KDIR),)
# Every kernel of the matrix, and the optional ones (rt) whose headers are
# installed (scripts/kernels reads Debian's metapackages).
modules:
	@set -e; kernels=$$(scripts/kernels --headers installed); \
	echo "$$kernels" | while read -r short rel hdr; do \
		scripts/build-kmod "$$hdr" release; done
modules-test:
	@set -e; kernels=$$(scripts/kernels --headers installed); \
	echo "$$kernels" | while read -r short rel hdr; do \
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

check-debug:
	@scripts/check-debug

check-rt:
	@scripts/check --rt

# Guest time is instructions under -icount: no host load in the profiles,
# so clocksample_test's 98% attribution is a failure there, not a skip.
# With bookworm-backports' QEMU (scripts/qemu-backports): QEMU 7.2's
# round-robin under -icount starves one virtual CPU for whole sampling
# periods (README), and its 6.1 guest does not boot under -icount.
check-icount: all
	VMRUN_QEMU="$$(scripts/qemu-backports)" && export VMRUN_QEMU && \
	for k in 6.12 6.1; do \
		VMRUN_QEMU_ARGS="-icount shift=0" scripts/vm-run --kernel $$k -- \
			env HWPMC_ATTRIBUTION_STRICT=1 selftests/run build/userland/selftests \
			clocksample_test clockprof_test perfagree_test.sh || exit 1; \
	done

demo:
	@scripts/demo

# The benchmark suite (README "Benchmarks"); BENCH_ARGS e.g. "--tcg --rounds 3".
bench: all
	@scripts/bench $(BENCH_ARGS)

checkpatch:
	@scripts/linux-src-extract
	@# LINUX_VERSION_CODE: an out-of-tree module builds for several kernels
	@# (kmod/compat/compat.h is the one place that tests it).
	@perl $(BUILD)/linux-src/checkpatch.pl --no-tree --strict --terse \
		--ignore LINUX_VERSION_CODE \
		-f kmod/*.c kmod/*.h kmod/*/*.c kmod/*/*.h include/uapi/linux/*.h include/kernel/*.h

# Every sparse warning about our code fails (scripts/sparse says which
# kernel-header diagnostics are not ours).
sparse:
	@scripts/sparse

# The ioctl fuzzer (selftests/fuzz/) in a guest of FUZZ_KERNEL (default:
# both kernels of the matrix in turn), 2 vCPUs.  FUZZ_SEED reproduces a run;
# FUZZ_ARGS are fuzz_test's own (--model intel, --seconds N).
FUZZ_OPS ?= 10000000
FUZZ_KERNEL ?= all
fuzz:
	@scripts/fuzz "$(FUZZ_KERNEL)" "$(FUZZ_OPS)" "$(FUZZ_SEED)" $(FUZZ_ARGS)

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
	install -d $(DESTDIR)$(PREFIX)/share/man/man4
	install -m 0644 man/*.4 $(DESTDIR)$(PREFIX)/share/man/man4/
	install -d $(DESTDIR)$(PREFIX)/share/man/man8
	install -m 0644 man/*.8 $(DESTDIR)$(PREFIX)/share/man/man8/
	@cmake -S $(TOP) -B $(BUILD)/userland >/dev/null
	@cmake --build $(BUILD)/userland -j$(JOBS)
	DESTDIR=$(DESTDIR) cmake --install $(BUILD)/userland --prefix $(PREFIX)
	$(if $(DESTDIR),,ldconfig)

# DKMS from the checkout: the source tree in /usr/src/hwpmc-VERSION (as the
# hwpmc-dkms package installs it), built and installed for KVER (default:
# the running kernel) and rebuilt by DKMS at every kernel upgrade.
DKMS_VERSION = $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' dkms.conf)
.PHONY: dkms-install dkms-remove dkms-test
dkms-install:
	scripts/dkms-source /usr/src/hwpmc-$(DKMS_VERSION)
	dkms status -m hwpmc -v $(DKMS_VERSION) | grep -q . || \
		dkms add -m hwpmc -v $(DKMS_VERSION)
	dkms install -m hwpmc -v $(DKMS_VERSION) $(if $(KVER),-k $(KVER))
	install -D -m 0644 kmod/99-hwpmc.rules /etc/udev/rules.d/99-hwpmc.rules
dkms-remove:
	-dkms remove -m hwpmc -v $(DKMS_VERSION) --all
	rm -rf /usr/src/hwpmc-$(DKMS_VERSION)
	rm -f /etc/udev/rules.d/99-hwpmc.rules
# dkms build for every kernel of the matrix in a throwaway tree (also in
# ctest: dkms_build).
dkms-test:
	@scripts/dkms-test

# The Debian packages built in a copy of the checkout, lintian, their
# contents, dependencies and a consumer built against them (make check too).
.PHONY: deb-test
deb-test:
	@scripts/deb-test

clean:
	rm -rf $(BUILD)

help:
	@sed -n '2,/^$$/s/^# \{0,1\}//p' Makefile
