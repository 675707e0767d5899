// SPDX-License-Identifier: GPL-2.0
// The kernel symbols saved with a log (tools/profile/saved_ksyms): the
// kernel addresses of a log's samples, the symbols they need (a table of
// those alone finds what the whole kallsyms finds, for each address and
// the one before it), their records (round trip, split at the size limit,
// malformed ones refused), and a log with them appended: libhwpmc's reader
// skips them, log_data::read_fast() finds them, and a resolver names
// kernel frames from them, before /proc/kallsyms and after --kallsyms.
#include "profile/saved_ksyms.hpp"
#include "tools_test.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace {

using namespace tools_test;
using hwpmc_tools::kernel_symbols;
using hwpmc_tools::saved_ksym;

constexpr uint64_t kb = 0xffffffff81000000ull;

// A kernel's sample: kernel pcs, then user ones.
bytes kernel_sample(uint64_t t, uint32_t pid, const std::vector<uint64_t> &kpcs,
                    const std::vector<uint64_t> &upcs = {0x401000}) {
    std::vector<uint64_t> pcs = kpcs;
    pcs.insert(pcs.end(), upcs.begin(), upcs.end());
    return hwpmc::test::callchain(t, pmcid, pid, pcs, static_cast<uint32_t>(kpcs.size()), 0, 0);
}

class SavedKsyms : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("hwpmc-saved-ksyms-" + std::to_string(getpid()));
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    std::string write(const std::string &name, const std::string &text) {
        const std::string p = (dir_ / name).string();
        std::ofstream f(p, std::ios::binary);
        f << text;
        return p;
    }
    std::string write(const std::string &name, const bytes &b) {
        return write(name, std::string(reinterpret_cast<const char *>(b.data()), b.size()));
    }
    std::filesystem::path dir_;
};

const char kallsyms[] = "ffffffff81000000 T _stext\n"
                        "ffffffff81000100 T entry\n"
                        "ffffffff81000100 t entry_alias\n"
                        "ffffffff81000200 T do_work\n"
                        "ffffffff81000300 D some_data\n"
                        "ffffffff81000400 t helper\n"
                        "ffffffffc0001000 t mod_fn\t[mymod]\n";

TEST_F(SavedKsyms, KernelPcsOfALog) {
    bytes body = kernel_sample(10, 5, {kb + 0x210, kb + 0x104});
    append(body, kernel_sample(11, 5, {kb + 0x210, kb + 0x104}));
    append(body, sample_rec(12, 5, {0x401000, 0x402000}));        // user only
    append(body, kernel_sample(13, 6, {0xffffffffc0001008}, {})); // a kernel thread
    const std::string log = write("log", log_of(body));
    const int fd = open(log.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    std::vector<uint64_t> pcs;
    uint64_t last = 0;
    EXPECT_TRUE(hwpmc_tools::kernel_pcs_of_log(fd, &pcs, &last));
    close(fd);
    EXPECT_EQ(pcs, (std::vector<uint64_t>{kb + 0x104, kb + 0x210, 0xffffffffc0001008}));
    EXPECT_EQ(last, UINT32_MAX); // CLOSELOG's time
}

TEST_F(SavedKsyms, NeededSymbolsFindWhatTheWholeTableFinds) {
    const kernel_symbols all(write("kallsyms", kallsyms));
    ASSERT_TRUE(all.available());
    // A return address at a function's first byte is named from the one
    // before it (pc - 1): both are kept.
    const std::vector<uint64_t> pcs = {kb + 0x200, kb + 0x104, 0xffffffffc0001004,
                                       0x1000 /* below every symbol */,
                                       kb + 0x400 + (2u << 20) /* too far past helper */};
    const auto need = hwpmc_tools::needed_kernel_symbols(all, pcs);
    EXPECT_EQ(need, (std::vector<saved_ksym>{{kb + 0x100, "entry_alias", ""},
                                             {kb + 0x200, "do_work", ""},
                                             {0xffffffffc0001000, "mod_fn", "mymod"}}));
    // Random addresses around the symbols: the table of those needed
    // finds the same name as the whole one, or none where it finds none.
    std::mt19937_64 rng(17);
    std::vector<uint64_t> many;
    for (int i = 0; i < 2000; i++)
        many.push_back((i % 2 ? kb : 0xffffffffc0000000ull) + rng() % 0x3000);
    const kernel_symbols few(hwpmc_tools::needed_kernel_symbols(all, many));
    EXPECT_LT(few.size(), all.size());
    for (uint64_t pc : many)
        for (uint64_t a : {pc, pc - 1}) {
            const auto *x = all.find(a), *y = few.find(a);
            ASSERT_EQ(x == nullptr, y == nullptr) << std::hex << a;
            if (x) {
                EXPECT_EQ(x->start, y->start);
                EXPECT_EQ(x->name, y->name);
                EXPECT_EQ(x->module, y->module);
            }
        }
}

TEST_F(SavedKsyms, RecordsRoundTripAndSplit) {
    std::vector<saved_ksym> syms;
    for (int i = 0; i < 20000; i++)
        syms.push_back({kb + 16u * static_cast<unsigned>(i),
                        "function_with_a_long_name_" + std::to_string(i), i % 7 ? "" : "mod"});
    const auto b = hwpmc_tools::encode_ksyms_records(syms, 1234);
    // Split into records of at most ksyms_record_max bytes, each well formed.
    std::vector<saved_ksym> back;
    size_t at = 0, records = 0;
    while (at < b.size()) {
        struct pmclog_header h;
        std::memcpy(&h, b.data() + at, sizeof(h));
        EXPECT_EQ(h.pl_type, hwpmc_tools::PMCLOG_TYPE_KSYMS);
        EXPECT_EQ(h.pl_time, 1234u);
        EXPECT_EQ(h.pl_len % 8, 0u);
        EXPECT_LE(h.pl_len, hwpmc_tools::ksyms_record_max);
        ASSERT_TRUE(hwpmc_tools::decode_ksyms_record(b.data() + at, h.pl_len, &back));
        at += h.pl_len;
        records++;
    }
    EXPECT_GT(records, 1u);
    EXPECT_EQ(at, b.size());
    EXPECT_EQ(back, syms);
}

TEST_F(SavedKsyms, MalformedRecordsAreRefused) {
    const auto good = hwpmc_tools::encode_ksyms_records({{kb, "a", ""}, {kb + 8, "bb", "m"}}, 1);
    std::vector<saved_ksym> out;
    ASSERT_TRUE(hwpmc_tools::decode_ksyms_record(good.data(), good.size(), &out));
    ASSERT_EQ(out.size(), 2u);
    auto bad = [&](auto change) {
        auto b = good;
        change(b);
        std::vector<saved_ksym> o;
        return !hwpmc_tools::decode_ksyms_record(b.data(), b.size(), &o) && o.empty();
    };
    ASSERT_EQ(good.size(), 56u);                     // 24 + (12 + 1) + (12 + 3), padded
    EXPECT_TRUE(bad([](auto &b) { b[16] ^= 1; }));   // magic
    EXPECT_TRUE(bad([](auto &b) { b[20] = 3; }));    // more symbols than bytes
    EXPECT_TRUE(bad([](auto &b) { b[20] = 1; }));    // fewer: bytes left over
    EXPECT_TRUE(bad([](auto &b) { b[4] = 48; }));    // pl_len is not its length
    EXPECT_TRUE(bad([](auto &b) { b[32] = 200; }));  // a name past the end
    EXPECT_TRUE(bad([](auto &b) { b[32] = 0; }));    // an empty name
    EXPECT_TRUE(bad([](auto &b) { b[55] = 1; }));    // padding not zero
    EXPECT_TRUE(bad([](auto &b) { b.resize(48); })); // cut
    EXPECT_TRUE(bad([](auto &b) { b[0] = 15; }));    // another type
}

// hwpmc-record's step: the symbols appended to a closed log.  The log
// reads as before (libhwpmc skips the records), read_fast() finds them,
// and the resolver names kernel frames from them: not from the kallsyms
// of this machine, which no longer has those names; --kallsyms still wins.
TEST_F(SavedKsyms, SavedWithTheLogAndUsedByTheResolver) {
    bytes body = kernel_sample(10, 5, {kb + 0x210, kb + 0x104});
    append(body, kernel_sample(11, 5, {0xffffffffc0001008}));
    append(body, kernel_sample(12, 5, {kb + 0x10000000})); // no symbol holds it
    const bytes plain = log_of(body);
    const std::string log = write("log", plain);
    const std::string ks = write("kallsyms", kallsyms);
    std::string why;
    EXPECT_EQ(hwpmc_tools::save_kernel_symbols(log, ks, &why), 3) << why;
    const auto grown = std::filesystem::file_size(log);
    EXPECT_GT(grown, plain.size());

    // libhwpmc's reader: the same records as before.
    {
        std::ifstream f(log, std::ios::binary);
        std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        bytes b(all.size());
        std::memcpy(b.data(), all.data(), all.size());
        hwpmc_tools::log_data a, c;
        read_log(b, &a);
        read_log(plain, &c);
        EXPECT_EQ(a.records, c.records);
        EXPECT_TRUE(a.closed);
        EXPECT_TRUE(a.saved_ksyms.empty()); // log_reader skips them
    }
    hwpmc_tools::log_data d;
    d.keep_samples = false;
    const int fd = open(log.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(d.read_fast(fd));
    close(fd);
    EXPECT_EQ(d.records, 6u); // INITIALIZE, PMCALLOCATE, 3 samples, CLOSELOG
    EXPECT_TRUE(d.closed);
    EXPECT_EQ(d.saved_ksyms, (std::vector<saved_ksym>{{kb + 0x100, "entry_alias", ""},
                                                      {kb + 0x200, "do_work", ""},
                                                      {0xffffffffc0001000, "mod_fn", "mymod"}}));
    auto names = [&](hwpmc_tools::symbolizer &sym) {
        hwpmc_tools::resolver res(d.procs, sym);
        std::string out;
        for (uint64_t pc :
             std::vector<uint64_t>{kb + 0x210, kb + 0x104, 0xffffffffc0001008, kb + 0x10000000}) {
            hwpmc_tools::raw_sample r{1, 5, 5, 0, pmcid, 0, 1, {pc}};
            const auto s = res.resolve(r);
            out += res.frame(s.frames.at(0)).name + " " + res.frame(s.frames.at(0)).dso + ";";
        }
        return out;
    };
    // (`ks` stands for this machine's /proc/kallsyms: addresses shown.)
    hwpmc_tools::symbolizer saved;
    saved.set_saved_kernel(d.saved_ksyms, ks);
    EXPECT_TRUE(saved.kernel_saved());
    EXPECT_EQ(names(saved), "do_work [kernel];entry_alias [kernel];mod_fn [mymod];"
                            "[unknown] [kernel]+0xffffffff91000000 [kernel];");
    // The same as the whole kallsyms gives.
    hwpmc_tools::symbolizer file;
    file.set_kallsyms(ks);
    EXPECT_EQ(names(file), names(saved));
    // --kallsyms: another kernel's names.
    hwpmc_tools::symbolizer other;
    other.set_saved_kernel(d.saved_ksyms, ks);
    other.set_kallsyms(write("other", "ffffffff81000000 T other_kernel\n"));
    EXPECT_FALSE(other.kernel_saved());
    EXPECT_EQ(names(other).substr(0, 28), "other_kernel [kernel];other_");
    // A user who may not see kernel addresses here (this machine's
    // kallsyms lists zeros) is not shown them: the kallsyms is read as
    // without saved symbols, and found restricted.
    const std::string zeros = write("zeros", "0000000000000000 A fixed_percpu_data\n"
                                             "0000000000000000 A cpu_debug_store\n"
                                             "0000000000000000 T _stext\n"
                                             "0000000000000000 T do_work\n");
    EXPECT_TRUE(hwpmc_tools::kallsyms_zeros(zeros));
    EXPECT_FALSE(hwpmc_tools::kallsyms_zeros(ks));
    EXPECT_FALSE(hwpmc_tools::kallsyms_zeros((dir_ / "none").string()));
    // As root on x86_64: per-CPU symbols first, the first of them at 0.
    EXPECT_FALSE(hwpmc_tools::kallsyms_zeros(write("root", "0000000000000000 A fixed_percpu_data\n"
                                                           "0000000000001000 A cpu_debug_store\n"
                                                           "ffffffff81000000 T _stext\n")));
    EXPECT_FALSE(hwpmc_tools::kallsyms_zeros(write("root2", "0000000000000000 A fixed_percpu_data\n"
                                                            "ffffffff81000000 T _stext\n")));
    // Only per-CPU symbols at 0 (no text symbol): zeros, as the whole
    // file's reading would say.
    EXPECT_TRUE(
        hwpmc_tools::kallsyms_zeros(write("pcpu", "0000000000000000 A fixed_percpu_data\n")));
    // This machine's, as kernel_symbols reads it whole.
    EXPECT_EQ(hwpmc_tools::kallsyms_zeros("/proc/kallsyms"),
              hwpmc_tools::kernel_symbols("/proc/kallsyms").restricted());
    hwpmc_tools::symbolizer hidden;
    hidden.set_saved_kernel(d.saved_ksyms, zeros);
    EXPECT_TRUE(hidden.kernel().restricted());
    EXPECT_FALSE(hidden.kernel().available());
}

// No kernel address in the log, or a kallsyms of zeros (not root): nothing
// is appended, and the report reads /proc/kallsyms (or nothing) as before.
TEST_F(SavedKsyms, NothingSavedWithoutKernelAddressesOrSymbols) {
    const bytes user_only = log_of(sample_rec(10, 5, {0x401000}));
    const std::string a = write("a", user_only);
    std::string why;
    EXPECT_EQ(hwpmc_tools::save_kernel_symbols(a, write("kallsyms", kallsyms), &why), 0);
    EXPECT_EQ(std::filesystem::file_size(a), user_only.size());
    const bytes with_kernel = log_of(kernel_sample(10, 5, {kb + 0x210}));
    const std::string b = write("b", with_kernel);
    EXPECT_EQ(
        hwpmc_tools::save_kernel_symbols(
            b, write("zeros", "0000000000000000 T _stext\n0000000000000000 T do_work\n"), &why),
        0);
    EXPECT_EQ(std::filesystem::file_size(b), with_kernel.size());
    EXPECT_EQ(hwpmc_tools::save_kernel_symbols((dir_ / "none").string(), "/proc/kallsyms", &why),
              -1);
    EXPECT_FALSE(why.empty());
}

} // namespace
