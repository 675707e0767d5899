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

profile::profile(const resolver &res, std::vector<sort_key> keys)
    : res_(res), keys_(std::move(keys)) {}

profile::key profile::key_of(const sample &s, uint32_t frame) const {
    key k{};
    for (size_t i = 0; i < keys_.size(); i++) {
        switch (keys_[i]) {
        case sort_key::comm:
            k[i] = s.comm;
            break;
        case sort_key::pid:
            k[i] = s.pid;
            break;
        case sort_key::tid:
            k[i] = s.tid;
            break;
        case sort_key::cpu:
            k[i] = s.cpu;
            break;
        case sort_key::sym:
            k[i] = frame;
            break;
        case sort_key::dso: {
            // dso_ids_ only grows in add(); a dso never added is 0
            auto it = dso_ids_.find(res_.frame(frame).dso);
            k[i] = it == dso_ids_.end() ? UINT64_MAX : it->second;
            break;
        }
        }
    }
    return k;
}

void profile::add(const sample &s) {
    indexed_ = false;
    samples_.push_back(&s);
    total_++;
    for (uint32_t f : s.frames) {
        const std::string &d = res_.frame(f).dso;
        if (!dso_ids_.count(d))
            dso_ids_.emplace(d, static_cast<uint32_t>(dso_ids_.size()));
    }
    std::vector<key> seen;
    for (size_t i = 0; i < s.frames.size(); i++) {
        key k = key_of(s, s.frames[i]);
        if (std::find(seen.begin(), seen.end(), k) != seen.end())
            continue;
        seen.push_back(k);
        auto [it, fresh] = entries_.try_emplace(k);
        entry &e = it->second;
        if (fresh) {
            e.k = k;
            e.comm = s.comm;
            e.pid = s.pid;
            e.tid = s.tid;
            e.cpu = s.cpu;
            e.frame = s.frames[i];
        }
        e.children++;
        if (i == 0)
            e.self++;
    }
}

void profile::clear() {
    indexed_ = false;
    self_idx_.clear();
    chain_idx_.clear();
    entries_.clear();
    samples_.clear();
    total_ = 0;
}

void profile::index() const {
    if (indexed_)
        return;
    self_idx_.clear();
    chain_idx_.clear();
    for (const sample *s : samples_) {
        std::vector<key> seen;
        for (size_t i = 0; i < s->frames.size(); i++) {
            key k = key_of(*s, s->frames[i]);
            if (i == 0)
                self_idx_[k].push_back(s);
            if (std::find(seen.begin(), seen.end(), k) != seen.end())
                continue;
            seen.push_back(k);
            chain_idx_[k].push_back(s);
        }
    }
    indexed_ = true;
}

const std::vector<const sample *> &profile::self_samples(const entry &e) const {
    static const std::vector<const sample *> none;
    index();
    auto it = self_idx_.find(e.k);
    return it == self_idx_.end() ? none : it->second;
}

const std::vector<const sample *> &profile::chain_samples(const entry &e) const {
    static const std::vector<const sample *> none;
    index();
    auto it = chain_idx_.find(e.k);
    return it == chain_idx_.end() ? none : it->second;
}

std::vector<const profile::entry *> profile::sorted(bool by_children) const {
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
    const frame_info &f = res_.frame(e.frame);
    switch (k) {
    case sort_key::comm:
        return res_.comm_name(e.comm);
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

uint32_t call_tree::child(uint32_t n, uint32_t frame) {
    for (uint32_t k : nodes[n].kids)
        if (nodes[k].frame == frame) {
            nodes[k].count++;
            return k;
        }
    uint32_t k = static_cast<uint32_t>(nodes.size());
    nodes.push_back({frame, 1, {}});
    nodes[n].kids.push_back(k);
    return k;
}

std::vector<uint32_t> call_tree::sorted_kids(uint32_t n) const {
    std::vector<uint32_t> v = nodes[n].kids;
    std::stable_sort(v.begin(), v.end(),
                     [this](uint32_t a, uint32_t b) { return nodes[a].count > nodes[b].count; });
    return v;
}

call_tree callers_of(const profile &p, const profile::entry &e) {
    call_tree t(e.frame);
    for (const sample *s : p.self_samples(e))
        t.add(s->frames.begin() + 1, s->frames.end());
    return t;
}

call_tree callees_of(const profile &p, const profile::entry &e) {
    call_tree t(e.frame);
    for (const sample *s : p.chain_samples(e)) {
        // The outermost occurrence: recursion below it stays in the tree.
        for (size_t i = s->frames.size(); i-- > 0;) {
            if (p.key_of(*s, s->frames[i]) != e.k)
                continue;
            t.add(s->frames.rbegin() + static_cast<long>(s->frames.size() - i), s->frames.rend());
            break;
        }
    }
    return t;
}

} // namespace hwpmc_tools
