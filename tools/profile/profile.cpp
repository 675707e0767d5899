// SPDX-License-Identifier: GPL-2.0
#include "profile.hpp"

#include <algorithm>
#include <sstream>

namespace hwpmc_tools {

namespace {

const struct {
    const char *name;
    sort_key k;
    const char *title;
} key_names[] = {
    {"comm", sort_key::comm, "Command"}, {"pid", sort_key::pid, "Pid"},
    {"tid", sort_key::tid, "Tid"},       {"dso", sort_key::dso, "Shared Object"},
    {"sym", sort_key::sym, "Symbol"},    {"cpu", sort_key::cpu, "CPU"},
};

} // namespace

bool parse_sort_keys(const std::string &s, std::vector<sort_key> *keys, std::string *bad) {
    std::stringstream ss(s);
    std::string tok;
    keys->clear();
    while (std::getline(ss, tok, ',')) {
        bool found = false;
        for (const auto &kn : key_names)
            if (tok == kn.name) {
                if (std::find(keys->begin(), keys->end(), kn.k) == keys->end())
                    keys->push_back(kn.k);
                found = true;
            }
        if (!found) {
            *bad = tok;
            return false;
        }
    }
    if (keys->empty()) {
        *bad = s;
        return false;
    }
    return true;
}

const char *sort_key_title(sort_key k) {
    for (const auto &kn : key_names)
        if (kn.k == k)
            return kn.title;
    return "";
}

namespace {

// profile_memo::gen: a number no other profile, nor this one before its
// last clear(), had.
uint64_t next_gen() {
    static uint64_t gen = 0;
    return ++gen;
}

} // namespace

profile::profile(const resolver &res, std::vector<sort_key> keys)
    : res_(&res), keys_(std::move(keys)), gen_(next_gen()) {
    for (sort_key k : keys_) {
        by_pid_ |= k == sort_key::pid;
        by_tid_ |= k == sort_key::tid;
        by_cpu_ |= k == sort_key::cpu;
    }
}

profile::key profile::key_of(const chain &c, uint32_t frame) const {
    key k{};
    for (size_t i = 0; i < keys_.size(); i++) {
        switch (keys_[i]) {
        case sort_key::comm:
            k[i] = c.comm;
            break;
        case sort_key::pid:
            k[i] = c.pid;
            break;
        case sort_key::tid:
            k[i] = c.tid;
            break;
        case sort_key::cpu:
            k[i] = c.cpu;
            break;
        case sort_key::sym:
            k[i] = frame;
            break;
        case sort_key::dso: {
            // build() numbers the dsos of every chain before it asks
            uint32_t d = frame < frame_dso_.size() ? frame_dso_[frame] : 0;
            k[i] = d == 0 ? UINT64_MAX : d - 1;
            break;
        }
        }
    }
    return k;
}

namespace {

uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

} // namespace

uint64_t profile::hash_of(std::span<const uint32_t> frames, const chain &c) const {
    uint64_t h = mix(mix(mix(mix(0, c.comm), c.pid), c.tid), c.cpu);
    for (uint32_t f : frames)
        h = mix(h, f);
    return h;
}

bool profile::same(const chain &c, std::span<const uint32_t> frames, const chain &want) const {
    return c.hash == want.hash && c.comm == want.comm && c.pid == want.pid && c.tid == want.tid &&
           c.cpu == want.cpu && c.len == frames.size() &&
           std::equal(frames.begin(), frames.end(), pool_.begin() + c.first);
}

void profile::add(const sample &s) {
    add_chain(s.comm, s.pid, s.tid, s.cpu, s.frames);
}

void profile::add(const resolved_chain &c, uint32_t pid, uint32_t tid, uint32_t cpu) {
    // The memo holds for every sample of the cached chain when the chain
    // does not depend on the thread or CPU (the process is the cache's).
    if (c.memo && c.memo->gen == gen_ && !by_tid_ && !by_cpu_) {
        total_++;
        built_ = false;
        chains_[c.memo->chain].count++;
        return;
    }
    const uint32_t ci = add_chain(c.comm, pid, tid, cpu, c.frames);
    if (c.memo)
        *c.memo = {gen_, ci};
}

uint32_t profile::add_chain(uint32_t comm, uint32_t pid, uint32_t tid, uint32_t cpu,
                            std::span<const uint32_t> frames) {
    total_++;
    built_ = false; // the entries' counts change; the index, only with a new chain
    chain want;
    want.comm = comm;
    want.pid = by_pid_ ? pid : 0;
    want.tid = by_tid_ ? tid : 0;
    want.cpu = by_cpu_ ? cpu : 0;
    want.hash = hash_of(frames, want);
    const size_t at =
        slots_.find(want.hash, [&](uint32_t i) { return same(chains_[i], frames, want); });
    if (slots_.found(at)) {
        chains_[slots_.index(at)].count++;
        return slots_.index(at);
    }
    // A new chain: the index is made again when asked.
    indexed_ = false;
    want.first = static_cast<uint32_t>(pool_.size());
    want.len = static_cast<uint32_t>(frames.size());
    want.count = 1;
    pool_.insert(pool_.end(), frames.begin(), frames.end());
    chains_.push_back(want);
    slots_.put(at, chains_.size() - 1, chains_);
    return static_cast<uint32_t>(chains_.size() - 1);
}

void profile::build() const {
    if (built_)
        return;
    // Counts only: a chain seen again changes no entry's first sample.
    entries_.clear();
    dso_ids_.clear();
    frame_dso_.assign(res_->frame_count(), 0);
    std::vector<key> seen;
    for (const chain &c : chains_) {
        const auto fs = frames(c);
        for (uint32_t f : fs) {
            if (frame_dso_[f])
                continue;
            auto it =
                dso_ids_.try_emplace(res_->frame(f).dso, static_cast<uint32_t>(dso_ids_.size()))
                    .first;
            frame_dso_[f] = it->second + 1;
        }
        seen.clear();
        for (size_t i = 0; i < fs.size(); i++) {
            key k = key_of(c, fs[i]);
            if (std::find(seen.begin(), seen.end(), k) != seen.end())
                continue;
            seen.push_back(k);
            auto [it, fresh] = entries_.try_emplace(k);
            entry &e = it->second;
            if (fresh) {
                e.k = k;
                e.comm = c.comm;
                e.pid = c.pid;
                e.tid = c.tid;
                e.cpu = c.cpu;
                e.frame = fs[i];
            }
            e.children += c.count;
            if (i == 0)
                e.self += c.count;
        }
    }
    built_ = true;
}

void profile::clear() {
    gen_ = next_gen();
    built_ = indexed_ = false;
    self_idx_.clear();
    chain_idx_.clear();
    entries_.clear();
    chains_.clear();
    pool_.clear();
    slots_.reset();
    total_ = 0;
}

void profile::index() const {
    build();
    if (indexed_)
        return;
    self_idx_.clear();
    chain_idx_.clear();
    std::vector<key> seen;
    for (uint32_t ci = 0; ci < chains_.size(); ci++) {
        const auto fs = frames(chains_[ci]);
        seen.clear();
        for (size_t i = 0; i < fs.size(); i++) {
            key k = key_of(chains_[ci], fs[i]);
            if (i == 0)
                self_idx_[k].push_back(ci);
            if (std::find(seen.begin(), seen.end(), k) != seen.end())
                continue;
            seen.push_back(k);
            chain_idx_[k].push_back(ci);
        }
    }
    indexed_ = true;
}

const std::vector<uint32_t> &profile::self_chains(const entry &e) const {
    static const std::vector<uint32_t> none;
    index();
    auto it = self_idx_.find(e.k);
    return it == self_idx_.end() ? none : it->second;
}

const std::vector<uint32_t> &profile::chain_chains(const entry &e) const {
    static const std::vector<uint32_t> none;
    index();
    auto it = chain_idx_.find(e.k);
    return it == chain_idx_.end() ? none : it->second;
}

std::vector<const profile::entry *> profile::sorted(bool by_children) const {
    build();
    std::vector<const entry *> v;
    v.reserve(entries_.size());
    for (const auto &[k, e] : entries_)
        v.push_back(&e);
    std::stable_sort(v.begin(), v.end(), [by_children](const entry *a, const entry *b) {
        uint64_t x = by_children ? a->children : a->self, y = by_children ? b->children : b->self;
        if (x != y)
            return x > y;
        uint64_t x2 = by_children ? a->self : a->children, y2 = by_children ? b->self : b->children;
        return x2 > y2;
    });
    return v;
}

std::string profile::column(const entry &e, sort_key k) const {
    const frame_info &f = res_->frame(e.frame);
    switch (k) {
    case sort_key::comm:
        return res_->comm_name(e.comm);
    case sort_key::pid:
        return std::to_string(e.pid);
    case sort_key::tid:
        return std::to_string(e.tid);
    case sort_key::cpu:
        return std::to_string(e.cpu);
    case sort_key::dso:
        return f.dso;
    case sort_key::sym:
        return std::string(f.kernel ? "[k] " : "[.] ") + f.name;
    }
    return "";
}

uint32_t call_tree::child(uint32_t n, uint32_t frame, uint64_t count) {
    for (uint32_t k : nodes[n].kids)
        if (nodes[k].frame == frame) {
            nodes[k].count += count;
            return k;
        }
    uint32_t k = static_cast<uint32_t>(nodes.size());
    nodes.push_back({frame, count, {}});
    nodes[n].kids.push_back(k);
    return k;
}

std::vector<uint32_t> call_tree::sorted_kids(uint32_t n) const {
    std::vector<uint32_t> v = nodes[n].kids;
    std::stable_sort(v.begin(), v.end(),
                     [this](uint32_t a, uint32_t b) { return nodes[a].count > nodes[b].count; });
    return v;
}

// The chains in the order of their first samples: the trees' branches
// come in the order the samples would have made them, so branches of equal
// counts are drawn as they were drawn from the samples one by one.
call_tree callers_of(const profile &p, const profile::entry &e) {
    call_tree t(e.frame);
    for (uint32_t ci : p.self_chains(e)) {
        const profile::chain &c = p.chains()[ci];
        const auto fs = p.frames(c);
        t.add(fs.begin() + 1, fs.end(), c.count);
    }
    return t;
}

call_tree callees_of(const profile &p, const profile::entry &e) {
    call_tree t(e.frame);
    for (uint32_t ci : p.chain_chains(e)) {
        const profile::chain &c = p.chains()[ci];
        const auto fs = p.frames(c);
        // The outermost occurrence: recursion below it stays in the tree.
        for (size_t i = fs.size(); i-- > 0;) {
            if (p.key_of(c, fs[i]) != e.k)
                continue;
            t.add(fs.rbegin() + static_cast<long>(fs.size() - i), fs.rend(), c.count);
            break;
        }
    }
    return t;
}

} // namespace hwpmc_tools
