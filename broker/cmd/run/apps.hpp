#pragma once
// The command line as mpirun reads it: its spellings of `zpmix run`'s options (single-dash long
// forms: -host, -npernode, -wdir; --n for -n), and the apps of an MPMD job: the program and its
// arguments, then more apps after each `:` (`zpmix run -n 2 a : -n 1 b`), or the lines of
// --app FILE, each `[-n N] [-x VAR[=val]] [--wdir DIR] prog [args]`.
//
// Invariants and limits:
// - An option zpmix run does not have is an error that names it and the nearest one, whatever its
//   spelling: never taken for a cluster of short options (-host is not -h -o -s -t, help).
// - An app after a `:` (or of the appfile) takes -n/-np/-c, -x and --wdir/--wd, in any spelling
//   mpirun has; an option of the whole job there (--tag-output, -H...) is an error saying to give
//   it before the first program. Per-app hosts (-H, --hostfile after a `:`) are not supported.
// - Every app of a job of several has its -n (the first app's is the command line's).
// - A `:` is always a separator, as for mpirun (quote no program argument as a lone `:`).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "actors/launcher/allocation.hpp"

namespace zpmix::cli::run {

// One app of the job, as given.
struct AppSpec {
    std::vector<std::string> argv;     // the program and its arguments
    std::optional<std::uint32_t> np;   // -n; the job's first app: the command line's
    std::vector<std::string> exports;  // its -x (VAR or VAR=val), after the job's
    std::string wdir;                  // --wdir; empty: the job's
};

// "unknown option NAME", the nearest of `names` when one is near, and where the options are listed.
std::string unknown_option(const std::string &arg, const std::vector<std::string> &names);

// Every spelling of cmd's options: --long, -s.
std::vector<std::string> option_names(const CLI::App &cmd);

// Rewrites `arg`, an option of cmd before the program, in the spelling CLI11 reads: mpirun's
// single-dash long form (-host, -npernode=2) as --host, --npernode=2; --n as --np. Empty, or why
// it is no option of cmd (unknown_option).
std::string mpirun_spelling(const CLI::App &cmd, std::string &arg);

// The apps of what follows the options (`rest`: the first app's program and arguments, then
// `:`-separated apps), the first with `first` (the command line's -n, if given); or an error.
alloc::Result<std::vector<AppSpec>> command_line_apps(const CLI::App &cmd,
                                                      const std::vector<std::string> &rest,
                                                      std::optional<std::uint32_t> first);

// The apps of an appfile (--app FILE: one app a line, `#` comments and blank lines skipped, words
// split as a shell splits them: quotes and backslashes, no expansion); or an error naming the line.
alloc::Result<std::vector<AppSpec>> appfile_apps(const CLI::App &cmd, const std::string &file);

}  // namespace zpmix::cli::run
