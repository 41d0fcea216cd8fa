#pragma once
// The server-library tests' fixture (tests/server): the test host (server_host, host.c) run with
// its arguments, in a runtime directory of its own (XDG_RUNTIME_DIR: where tools find it and
// where nothing may be left behind), its output read by the test.
#include <string>
#include <utility>
#include <vector>

#include "support/process.hpp"

namespace zpmix::test {

inline const std::string kServerTests = std::string(ZPMIX_BIN_DIR) + "/../tests";
inline const std::string kServerHost = kServerTests + "/server_host";

struct HostRun {
    explicit HostRun(std::vector<std::string> args, std::vector<std::string> env = {})
        : child(with_host(std::move(args)), with_tmp(std::move(env))) {}
    static std::vector<std::string> with_host(std::vector<std::string> args) {
        args.insert(args.begin(), kServerHost);
        return args;
    }
    std::vector<std::string> with_tmp(std::vector<std::string> env) {
        env.push_back("XDG_RUNTIME_DIR=" + tmp.path);
        return env;
    }
    int exit_code() { return child.exit_code(60s); }
    std::size_t count(const std::string &what) const {
        return zpmix::test::count(child.out(), what);
    }
    TempDir tmp{"zpmix-server"};
    Child child;
};

}  // namespace zpmix::test
