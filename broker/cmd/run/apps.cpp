#include "broker/cmd/run/apps.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "actors/protocol/job.hpp"

namespace zpmix::cli::run {

namespace {

// Edits between two strings (Levenshtein).
std::size_t distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
            diag = up;
        }
    }
    return row[b.size()];
}

// What an app after a `:` (or of an appfile) takes, by every name mpirun gives it.
enum class AppOption { np, export_var, wdir };
std::optional<AppOption> app_option(std::string_view name) {
    if (name == "n" || name == "np" || name == "c") return AppOption::np;
    if (name == "x") return AppOption::export_var;
    if (name == "wdir" || name == "wd") return AppOption::wdir;
    return std::nullopt;
}
const std::vector<std::string> kAppOptionNames = {"-n", "-np",    "--np", "-c",
                                                  "-x", "--wdir", "--wd"};

template <class T>
alloc::Result<T> app_error(std::string why) {
    return {{}, std::move(why)};
}

// One app: [options] prog [args] in tokens [begin, end); `where` names it in errors.
alloc::Result<AppSpec> parse_app(const CLI::App &cmd, const std::vector<std::string> &tokens,
                                 std::size_t begin, std::size_t end, const std::string &where) {
    AppSpec app;
    std::size_t i = begin;
    for (; i < end; ++i) {
        const std::string &a = tokens[i];
        if (a == "--") {
            ++i;
            break;
        }
        if (a.size() < 2 || a[0] != '-') break;  // the program
        const std::size_t dashes = a[1] == '-' ? 2 : 1;
        const std::size_t eq = a.find('=');
        const std::string name = a.substr(dashes, eq == std::string::npos ? eq : eq - dashes);
        const auto option = app_option(name);
        if (!option) {
            if (name == "H" || name == "host" || name == "hostfile" || name == "machinefile")
                return app_error<AppSpec>(fmt::format(
                    "{}: {}: hosts per app are not supported (-H and --hostfile are the whole "
                    "job's, before the first program)",
                    where, a));
            if (cmd.get_option_no_throw((name.size() == 1 ? "-" : "--") + name))
                return app_error<AppSpec>(
                    fmt::format("{}: {} is an option of the whole job: give it before the first "
                                "program (an app after ':' takes -n, -x and --wdir)",
                                where, a));
            return app_error<AppSpec>(where + ": " + unknown_option(a, kAppOptionNames));
        }
        std::string value;
        if (eq != std::string::npos) {
            value = a.substr(eq + 1);
        } else if (i + 1 < end) {
            value = tokens[++i];
        } else {
            return app_error<AppSpec>(fmt::format("{}: {} needs a value", where, a));
        }
        switch (*option) {
            case AppOption::np: {
                std::size_t used = 0;
                unsigned long n = 0;
                try {
                    n = std::stoul(value, &used);
                } catch (const std::exception &) {
                    used = 0;
                }
                if (used == 0 || used != value.size() || n < 1 || n > msg::kMaxRanks)
                    return app_error<AppSpec>(fmt::format("{}: {} {}: a number of ranks, 1..{}",
                                                          where, a, value, msg::kMaxRanks));
                app.np = static_cast<std::uint32_t>(n);
                break;
            }
            case AppOption::export_var:
                app.exports.push_back(value);
                break;
            case AppOption::wdir:
                app.wdir = value;
                break;
        }
    }
    if (i >= end) return app_error<AppSpec>(where + ": no program");
    app.argv.assign(tokens.begin() + static_cast<std::ptrdiff_t>(i),
                    tokens.begin() + static_cast<std::ptrdiff_t>(end));
    return {std::move(app), {}};
}

// An MPMD job's apps each say how many ranks they have.
std::string every_app_sized(const std::vector<AppSpec> &apps) {
    if (apps.size() < 2) return {};
    for (std::size_t k = 0; k < apps.size(); ++k)
        if (!apps[k].np)
            return fmt::format("app {} ({}) has no -n: every app of an MPMD job needs one", k,
                               apps[k].argv[0]);
    return {};
}

// The words of an appfile's line, as a shell splits them (no expansion); nullopt (and why) for an
// unclosed quote.
std::optional<std::vector<std::string>> shell_words(std::string_view line, std::string &why) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (c == '\\' && i + 1 < line.size()) {
            word += line[++i];
            in_word = true;
        } else if (c == '\'') {
            const auto close = line.find('\'', i + 1);
            if (close == std::string_view::npos) {
                why = "an unclosed '";
                return std::nullopt;
            }
            word += line.substr(i + 1, close - i - 1);
            i = close;
            in_word = true;
        } else if (c == '"') {
            std::size_t j = i + 1;
            for (; j < line.size() && line[j] != '"'; ++j) {
                if (line[j] == '\\' && j + 1 < line.size() &&
                    std::string_view("\"\\$`").find(line[j + 1]) != std::string_view::npos)
                    ++j;
                word += line[j];
            }
            if (j >= line.size()) {
                why = "an unclosed \"";
                return std::nullopt;
            }
            i = j;
            in_word = true;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            if (in_word) words.push_back(std::move(word));
            word.clear();
            in_word = false;
        } else if (c == '#' && !in_word) {
            break;  // a comment, to the end of the line
        } else {
            word += c;
            in_word = true;
        }
    }
    if (in_word) words.push_back(std::move(word));
    return words;
}

}  // namespace

std::string unknown_option(const std::string &arg, const std::vector<std::string> &names) {
    const std::string name = arg.substr(0, arg.find('='));
    std::string best;
    std::size_t best_d = std::string::npos;
    for (const auto &n : names)
        if (const auto d = distance(name, n); d < best_d) best_d = d, best = n;
    std::string message = "unknown option " + name;
    if (!best.empty() && best_d <= std::max<std::size_t>(2, name.size() / 3))
        message += "; did you mean " + best + "?";
    return message + " (zpmix run --help lists them; -- ends the options)";
}

std::vector<std::string> option_names(const CLI::App &cmd) {
    std::vector<std::string> names;
    for (const CLI::Option *opt : cmd.get_options()) {
        for (const auto &l : opt->get_lnames()) names.push_back("--" + l);
        for (const auto &s : opt->get_snames()) names.push_back("-" + s);
    }
    return names;
}

std::string mpirun_spelling(const CLI::App &cmd, std::string &arg) {
    // mpirun's -n is --n too (CLI11 has no one-letter long names).
    if (arg == "--n" || arg.starts_with("--n=")) {
        arg.insert(3, "p");
        return {};
    }
    if (arg.size() <= 2 || arg[0] != '-' || arg[1] == '-') return {};  // -x, --long: as they are
    const std::size_t eq = arg.find('=');
    const std::string name = arg.substr(1, eq == std::string::npos ? eq : eq - 1);
    if (cmd.get_option_no_throw("--" + name)) {
        arg.insert(0, "-");
        return {};
    }
    // A cluster of flags (-vv, -qv) is CLI11's; one with -h would print the help and exit 0.
    const bool flags =
        eq == std::string::npos && std::all_of(name.begin(), name.end(), [&](char c) {
            const CLI::Option *opt = cmd.get_option_no_throw(std::string("-") + c);
            return c != 'h' && opt && opt->get_expected_max() == 0;
        });
    return flags ? std::string() : unknown_option(arg, option_names(cmd));
}

alloc::Result<std::vector<AppSpec>> command_line_apps(const CLI::App &cmd,
                                                      const std::vector<std::string> &rest,
                                                      std::optional<std::uint32_t> first) {
    std::vector<AppSpec> apps;
    if (rest.empty()) return {};
    auto colon = std::find(rest.begin(), rest.end(), ":");
    if (colon == rest.begin()) return app_error<std::vector<AppSpec>>("no program before ':'");
    AppSpec app0;
    app0.argv.assign(rest.begin(), colon);
    app0.np = first;
    apps.push_back(std::move(app0));
    while (colon != rest.end()) {
        const auto begin = colon + 1;
        colon = std::find(begin, rest.end(), ":");
        auto app = parse_app(cmd, rest, static_cast<std::size_t>(begin - rest.begin()),
                             static_cast<std::size_t>(colon - rest.begin()),
                             fmt::format("app {} (after ':')", apps.size()));
        if (!app) return app_error<std::vector<AppSpec>>(std::move(app.error));
        apps.push_back(std::move(app.value));
    }
    if (auto why = every_app_sized(apps); !why.empty())
        return app_error<std::vector<AppSpec>>(std::move(why));
    return {std::move(apps), {}};
}

alloc::Result<std::vector<AppSpec>> appfile_apps(const CLI::App &cmd, const std::string &file) {
    std::ifstream in(file);
    if (!in)
        return app_error<std::vector<AppSpec>>(fmt::format("--app {}: {}", file, strerror(errno)));
    std::vector<AppSpec> apps;
    std::string line;
    for (std::size_t number = 1; std::getline(in, line); ++number) {
        const std::string where = fmt::format("--app {}, line {}", file, number);
        std::string why;
        const auto words = shell_words(line, why);
        if (!words) return app_error<std::vector<AppSpec>>(where + ": " + why);
        if (words->empty()) continue;
        auto app = parse_app(cmd, *words, 0, words->size(), where);
        if (!app) return app_error<std::vector<AppSpec>>(std::move(app.error));
        apps.push_back(std::move(app.value));
    }
    if (apps.empty()) return app_error<std::vector<AppSpec>>("--app " + file + ": no app in it");
    if (auto why = every_app_sized(apps); !why.empty())
        return app_error<std::vector<AppSpec>>("--app " + file + ": " + why);
    return {std::move(apps), {}};
}

}  // namespace zpmix::cli::run
