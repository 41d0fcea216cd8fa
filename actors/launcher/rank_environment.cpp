#include "actors/launcher/rank_environment.hpp"

#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <map>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "actors/launcher/personality.hpp"

namespace zpmix {

std::vector<std::string> rank_environment(const char *const *inherited,
                                          const std::vector<std::string> &job_env,
                                          const std::vector<std::string> &app_env,
                                          const std::vector<std::string> &client,
                                          const std::string &prefix,
                                          const std::string &ompi_lib_dir, bool oversubscribed) {
    std::map<std::string, std::string> env;
    auto put = [&](const std::string &kv) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) return;
        env[kv.substr(0, eq)] = kv;
    };
    for (const char *const *e = inherited; *e; ++e) {
        const std::string_view kv = *e;
        if (kv.starts_with("ZPMIX_URI=") || kv.starts_with("ZPMIX_SECRET=") ||
            kv.starts_with("PMIX_NAMESPACE=") || kv.starts_with("PMIX_RANK="))
            continue;
        put(std::string(kv));
    }
    for (const auto &kv : job_env) put(kv);
    for (const auto &kv : app_env) put(kv);
    for (const auto &kv : client) put(kv);
    auto prepend = [&](const std::string &name, const std::string &dir) {
        auto it = env.find(name);
        const std::string old = it == env.end() ? "" : it->second.substr(name.size() + 1);
        env[name] = name + "=" + dir + (old.empty() ? "" : ":" + old);
    };
    if (!prefix.empty()) {
        prepend("PATH", prefix + "/bin");
        prepend("LD_LIBRARY_PATH", prefix + "/lib");
    }
    if (!ompi_lib_dir.empty()) personality::apply_ompi(env, ompi_lib_dir, oversubscribed);
    std::vector<std::string> out;
    for (auto &[k, kv] : env) out.push_back(std::move(kv));
    return out;
}

std::vector<msg::App> launch_apps(msg::Launch &m, std::string &error) {
    std::vector<msg::App> apps;
    if (m.apps.empty()) {
        if (m.argv.empty() || m.argv[0].empty()) {
            error = "no program to launch";
            return {};
        }
        apps.push_back(msg::App{.cmd = m.argv[0],
                                .argv = std::move(m.argv),
                                .env = {},
                                .cwd = std::move(m.cwd),
                                .session_cwd = false,
                                .prefix = {},
                                .np = m.np});
        return apps;
    }
    std::uint64_t np = 0;
    for (auto &app : m.apps) {
        if (app.argv.empty() || app.argv[0].empty()) {
            error = fmt::format("app {} has no program", apps.size());
            return {};
        }
        if (app.np == 0) {
            error = fmt::format("app {} ({}) has 0 ranks", apps.size(), app.argv[0]);
            return {};
        }
        if (app.cmd.empty()) app.cmd = app.argv[0];
        if (app.cwd.empty()) app.cwd = m.cwd;
        np += app.np;
        apps.push_back(std::move(app));
    }
    if (np != m.np) {
        error = fmt::format("the apps' ranks add up to {}, not {}", np, m.np);
        return {};
    }
    return apps;
}

std::string program_of(const msg::App &app) {
    const std::string cmd = app.cmd.empty() ? app.argv.at(0) : app.cmd;
    if (app.prefix.empty() || cmd.find('/') != std::string::npos) return cmd;
    const std::string in_prefix = app.prefix + "/bin/" + cmd;
    return ::access(in_prefix.c_str(), X_OK) == 0 ? in_prefix : cmd;
}

std::string random_secret() {
    unsigned char bytes[16];
    if (::getrandom(bytes, sizeof bytes, 0) != sizeof bytes)
        throw std::system_error(errno, std::generic_category(), "getrandom");
    std::string hex;
    for (unsigned char b : bytes) hex += fmt::format("{:02x}", b);
    return hex;
}

std::vector<std::string> client_variables(const std::string &uri, const std::string &secret,
                                          int write_timeout_ms, int group_timeout_ms,
                                          const std::string &nspace) {
    return {"ZPMIX_URI=" + uri,
            "ZPMIX_SECRET=" + secret,
            "ZPMIX_WRITE_TIMEOUT_MS=" + std::to_string(write_timeout_ms),
            "ZPMIX_GROUP_TIMEOUT_MS=" + std::to_string(group_timeout_ms),
            "PMIX_NAMESPACE=" + nspace,
            "PMIX_RANK=0"};
}

AppPlan plan_app(msg::App &app, const char *const *inherited,
                 const std::vector<std::string> &job_env, const std::vector<std::string> &client,
                 const std::string &nsdir, std::optional<bool> personality_ompi,
                 std::size_t local_ranks) {
    AppPlan a;
    a.cmd = program_of(app);
    a.argv = app.argv.empty() ? std::vector<std::string>{a.cmd} : std::move(app.argv);
    a.cwd = app.session_cwd && app.cwd.empty() ? nsdir : std::move(app.cwd);
    a.links_mpi = personality::links_libmpi(a.cmd, a.cwd);
    const bool ompi = personality_ompi ? *personality_ompi : a.links_mpi;
    a.env = rank_environment(inherited, job_env, app.env, client, app.prefix,
                             ompi ? personality::library_dir() : "",
                             ompi && personality::oversubscribes(local_ranks));
    a.rank_var = static_cast<std::size_t>(
        std::find_if(a.env.begin(), a.env.end(),
                     [](const std::string &kv) { return kv.starts_with("PMIX_RANK="); }) -
        a.env.begin());
    return a;
}

void set_rank(AppPlan &app, std::size_t rank) {
    app.env[app.rank_var] = "PMIX_RANK=" + std::to_string(rank);
}

std::string new_namespace_name() {
    static std::atomic<unsigned> next{1};
    return fmt::format("zpmix.{}.{}", ::getpid(), next++);
}

}  // namespace zpmix
