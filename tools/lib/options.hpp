// SPDX-License-Identifier: GPL-2.0
// A tool's command line: getopt_long() over its options, with -h/--help
// printing the usage (exit 0), an unknown option or a missing argument a
// usage error naming it (exit 2), and the operands (COMMAND...) after.
#pragma once

#include <getopt.h>

#include <cstdio>
#include <string>
#include <vector>

namespace hwpmc_tools {

class option_reader {
public:
    // `optstring` and `longopts` as getopt_long() takes them (the table
    // without its terminating entry); `usage` prints the tool's usage.
    option_reader(const char *prog, int argc, char **argv, std::string optstring,
                  std::vector<struct option> longopts, void (*usage)(FILE *));

    // The next option (its argument in optarg), or -1 after the last.
    // 'h' (-h, --help) never comes back: the usage is printed, exit 0.
    int next();
    // The option just read was not understood ('?'): a usage error naming
    // it; `with_arg` lists the letters that take an argument.
    [[noreturn]] void bad(const char *with_arg) const;
    // The arguments after the options.
    std::vector<std::string> operands() const;

private:
    const char *prog_;
    int argc_;
    char **argv_;
    std::string optstring_;
    std::vector<struct option> longopts_;
    void (*usage_)(FILE *);
};

} // namespace hwpmc_tools
