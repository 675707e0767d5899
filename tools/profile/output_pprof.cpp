// SPDX-License-Identifier: GPL-2.0
#include "output_export.hpp"

#include "profile.pb.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <tuple>
#include <unistd.h>

namespace hwpmc_tools {

namespace pb = perftools::profiles;

struct pprof_builder::impl {
    debug_info &dbg;
    std::vector<event> events;
    pb::Profile prof;
    std::map<std::string, int64_t> strings;
    // (path, start, end, pgoff) -> mapping id
    std::map<std::tuple<std::string, uint64_t, uint64_t, uint64_t>, uint64_t> mappings;
    // (mapping id, address, kernel, symbol) -> location id
    std::map<std::tuple<uint64_t, uint64_t, bool, std::string>, uint64_t> locations;
    // (name, system name, file) -> function id
    std::map<std::tuple<std::string, std::string, std::string>, uint64_t> functions;

    impl(debug_info &d, std::vector<event> ev) : dbg(d), events(std::move(ev)) { str(""); }

    int64_t str(const std::string &s) {
        auto it = strings.find(s);
        if (it != strings.end())
            return it->second;
        int64_t id = prof.string_table_size();
        prof.add_string_table(s);
        strings.emplace(s, id);
        return id;
    }

    uint64_t mapping(const address_info &a) {
        auto key = std::make_tuple(a.path, a.map_start, a.map_end, a.pgoff);
        auto it = mappings.find(key);
        if (it != mappings.end())
            return it->second;
        pb::Mapping *m = prof.add_mapping();
        uint64_t id = prof.mapping_size();
        m->set_id(id);
        m->set_memory_start(a.map_start);
        m->set_memory_limit(a.map_end);
        m->set_file_offset(a.pgoff);
        m->set_filename(str(a.path));
        m->set_build_id(str(dbg.build_id(a.path)));
        m->set_has_functions(true);
        mappings.emplace(key, id);
        return id;
    }

    uint64_t function(const address_info &a) {
        const std::string &file = a.function_file.empty() ? a.file : a.function_file;
        auto key = std::make_tuple(a.symbol, a.raw_symbol, file);
        auto it = functions.find(key);
        if (it != functions.end())
            return it->second;
        pb::Function *f = prof.add_function();
        uint64_t id = prof.function_size();
        f->set_id(id);
        f->set_name(str(a.symbol));
        f->set_system_name(str(a.raw_symbol));
        f->set_filename(str(file));
        f->set_start_line(a.function_line);
        functions.emplace(key, id);
        return id;
    }

    uint64_t location(const address_info &a) {
        uint64_t mid = a.mapped ? mapping(a) : 0;
        auto key = std::make_tuple(mid, a.pc, a.kernel, a.has_symbol ? a.symbol : "");
        auto it = locations.find(key);
        if (it != locations.end())
            return it->second;
        pb::Location *l = prof.add_location();
        uint64_t id = prof.location_size();
        l->set_id(id);
        l->set_mapping_id(mid);
        l->set_address(a.pc);
        if (a.has_symbol) {
            pb::Line *ln = l->add_line();
            ln->set_function_id(function(a));
            ln->set_line(a.line);
            if (mid && !a.file.empty()) {
                pb::Mapping *m = prof.mutable_mapping(static_cast<int>(mid - 1));
                m->set_has_filenames(true);
                m->set_has_line_numbers(true);
            }
        }
        locations.emplace(key, id);
        return id;
    }
};

pprof_builder::pprof_builder(std::vector<event> events, debug_info &dbg)
    : p_(std::make_unique<impl>(dbg, std::move(events))) {
    pb::Profile &pr = p_->prof;
    for (const event &e : p_->events) {
        pb::ValueType *n = pr.add_sample_type();
        n->set_type(p_->str(e.name + "_samples"));
        n->set_unit(p_->str("count"));
        pb::ValueType *v = pr.add_sample_type();
        v->set_type(p_->str(e.name));
        v->set_unit(p_->str(e.nanoseconds ? "nanoseconds" : "count"));
    }
    if (!p_->events.empty()) {
        const event &e = p_->events.front();
        pr.mutable_period_type()->set_type(p_->str(e.name));
        pr.mutable_period_type()->set_unit(p_->str(e.nanoseconds ? "nanoseconds" : "count"));
        pr.set_period(static_cast<int64_t>(e.period));
        pr.set_default_sample_type(p_->str(e.name + "_samples"));
    }
    pr.add_comment(p_->str("hwpmc-report --pprof"));
}

pprof_builder::~pprof_builder() = default;

void pprof_builder::set_time(int64_t wallclock_ns, int64_t duration_ns) {
    p_->prof.set_time_nanos(wallclock_ns);
    p_->prof.set_duration_nanos(duration_ns);
}

void pprof_builder::add(size_t event_index, const std::string &comm, const raw_sample &r,
                        const std::vector<address_info> &frames) {
    pb::Sample *s = p_->prof.add_sample();
    for (const address_info &a : frames)
        s->add_location_id(p_->location(a));
    for (size_t i = 0; i < p_->events.size(); i++) {
        bool mine = i == event_index;
        s->add_value(mine ? 1 : 0);
        s->add_value(mine ? static_cast<int64_t>(p_->events[i].period) : 0);
    }
    auto num = [&](const char *key, int64_t v) {
        pb::Label *l = s->add_label();
        l->set_key(p_->str(key));
        l->set_num(v);
    };
    auto str = [&](const char *key, const std::string &v) {
        pb::Label *l = s->add_label();
        l->set_key(p_->str(key));
        l->set_str(p_->str(v));
    };
    // pprof reads a numeric label of 0 as no label (proto3 cannot tell
    // them apart): the CPU, often 0, is a string; pid and tid are 0 only
    // for the idle task.
    num("pid", r.pid);
    num("tid", r.tid);
    str("cpu", std::to_string(r.cpu));
    str("comm", comm);
    samples_++;
}

std::string pprof_builder::serialize() const {
    std::string out;
    p_->prof.SerializeToString(&out);
    return out;
}

bool pprof_builder::write(const std::string &path, std::string *err) const {
    std::string data = serialize();
    gzFile gz = path == "-" ? gzdopen(dup(STDOUT_FILENO), "wb") : gzopen(path.c_str(), "wb");
    if (!gz) {
        *err = std::strerror(errno ? errno : ENOMEM);
        return false;
    }
    size_t done = 0;
    while (done < data.size()) {
        unsigned chunk = static_cast<unsigned>(std::min<size_t>(data.size() - done, 1u << 20));
        int n = gzwrite(gz, data.data() + done, chunk);
        if (n <= 0) {
            int e = 0;
            const char *msg = gzerror(gz, &e);
            *err = e == Z_ERRNO ? std::strerror(errno) : msg;
            gzclose(gz);
            return false;
        }
        done += static_cast<size_t>(n);
    }
    int rc = gzclose(gz);
    if (rc != Z_OK) {
        *err = rc == Z_ERRNO ? std::strerror(errno) : "compression failed";
        return false;
    }
    return true;
}

bool write_pprof(const std::string &path, const log_data &data, const resolver &res,
                 address_describer &d, const std::vector<const raw_sample *> &raws,
                 const std::vector<sample> &samples, std::string *err) {
    // Events by name; a PMC per CPU of one event is one event.
    std::map<std::string, size_t> index;
    std::vector<pprof_builder::event> events;
    for (const raw_sample *r : raws) {
        auto it = data.pmcs.find(r->pmcid);
        std::string name = it == data.pmcs.end() ? "pmc" : it->second.event;
        if (index.count(name))
            continue;
        index.emplace(name, 0);
        pprof_builder::event e;
        e.name = name;
        if (it != data.pmcs.end()) {
            e.period = it->second.rate;
            e.nanoseconds = it->second.clock_prof;
        }
        events.push_back(e);
    }
    std::sort(events.begin(), events.end(),
              [](const auto &a, const auto &b) { return a.name < b.name; });
    for (size_t i = 0; i < events.size(); i++)
        index[events[i].name] = i;
    pprof_builder b(events, d.debug());
    int64_t duration =
        data.t_last > data.t_first ? static_cast<int64_t>(data.t_last - data.t_first) : 0;
    b.set_time(data.wallclock * 1000000000ll, duration);
    for (size_t i = 0; i < raws.size(); i++) {
        auto it = data.pmcs.find(raws[i]->pmcid);
        size_t ev = index[it == data.pmcs.end() ? "pmc" : it->second.event];
        b.add(ev, res.comm_name(samples[i].comm), *raws[i], d.describe(*raws[i]));
    }
    return b.write(path, err);
}

} // namespace hwpmc_tools
