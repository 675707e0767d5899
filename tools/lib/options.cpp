// SPDX-License-Identifier: GPL-2.0
#include "options.hpp"

#include "common.hpp"

#include <cstdlib>

namespace hwpmc_tools {

option_reader::option_reader(const char *prog, int argc, char **argv, std::string optstring,
                             std::vector<struct option> longopts, void (*usage)(FILE *))
    : prog_(prog), argc_(argc), argv_(argv), optstring_(std::move(optstring)),
      longopts_(std::move(longopts)), usage_(usage) {
    longopts_.push_back({nullptr, 0, nullptr, 0});
    opterr = 0;
}

int option_reader::next() {
    int opt = getopt_long(argc_, argv_, optstring_.c_str(), longopts_.data(), nullptr);
    if (opt == 'h') {
        usage_(stdout);
        std::exit(0);
    }
    return opt;
}

void option_reader::bad(const char *with_arg) const {
    bad_option(prog_, argv_, with_arg);
}

std::vector<std::string> option_reader::operands() const {
    return std::vector<std::string>(argv_ + optind, argv_ + argc_);
}

} // namespace hwpmc_tools
