// `zpmix info [--attributes] [--json]`: what `pmix_info` and `pattrs` show, asked through the
// standard tool API (a tool that connects to no broker: the library answers these itself): the
// version, the PMIx level and ABI, the protocol, the configuration in effect, and with
// --attributes the attributes each function honours (PMIX_QUERY_ATTRIBUTE_SUPPORT).
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <pmix_tool.h>
#include <pmix_version.h>
#include <nlohmann/json.hpp>

#include "actors/runtime/envelope.hpp"
#include "broker/cmd/commands.hpp"
#include "broker/cmd/pmix_tool.hpp"
#include "broker/config.hpp"

namespace zpmix::cli {

namespace {

struct InfoOptions {
    bool attributes = false, json = false;
};

constexpr int kInfoQueryTimeoutS = 10;  // the library answers at once

int run_info(const InfoOptions &o) {
    std::optional<PmixTool> tool;  // connected to no broker: the library answers
    try {
        tool.emplace("info");
    } catch (const std::exception &e) {
        std::cerr << "zpmix info: " << e.what() << "\n";
        return 1;
    }
    nlohmann::json j;
    j["version"] = ZPMIX_VERSION_STRING;
    j["pmix_standard"] = fmt::format("{}.{}", PMIX_VERSION_MAJOR, PMIX_VERSION_MINOR);
    j["protocol"] = kProtocolVersion;
    (void)query(PMIX_QUERY_STABLE_ABI_VERSION, {}, kInfoQueryTimeoutS, [&](const pmix_value_t &v) {
        if (v.type == PMIX_STRING) j["stable_abi"] = v.data.string;
    });
    const char *config = std::getenv("ZPMIX_CONFIG");
    j["config_file"] = config && *config ? config : "";
    j["base_dir"] = default_base_dir();
    if (o.attributes) {
        nlohmann::json attrs = nlohmann::json::object();
        const std::pair<const char *, const char *> classes[] = {{PMIX_CLIENT_FUNCTIONS, "client"},
                                                                 {PMIX_TOOL_FUNCTIONS, "tool"},
                                                                 {PMIX_HOST_FUNCTIONS, "host"}};
        for (const auto &[qualifier, name] : classes) {
            (void)query(PMIX_QUERY_ATTRIBUTE_SUPPORT, {{qualifier, "all"}}, kInfoQueryTimeoutS,
                        [&, name = name](const pmix_value_t &v) {
                            auto [cls, ncls] = infos_of(v);
                            for (size_t c = 0; c < ncls; ++c) {
                                auto [fns, nfns] = infos_of(cls[c].value);
                                for (size_t f = 0; f < nfns; ++f) {
                                    const pmix_value_t &list = fns[f].value;
                                    if (list.type != PMIX_DATA_ARRAY ||
                                        list.data.darray->type != PMIX_REGATTR)
                                        continue;
                                    auto *regs =
                                        static_cast<pmix_regattr_t *>(list.data.darray->array);
                                    auto &out = attrs[name][fns[f].key];
                                    for (size_t i = 0; i < list.data.darray->size; ++i)
                                        out.push_back({{"name", regs[i].name ? regs[i].name : ""},
                                                       {"key", regs[i].string}});
                                }
                            }
                        });
        }
        j["attributes"] = attrs;
    }
    tool.reset();
    if (o.json) {
        std::cout << j.dump() << "\n";
        return 0;
    }
    std::cout << fmt::format("zpmix {} (the PMIx standard's API at {}, stable ABI {})\n",
                             j["version"].get<std::string>(), j["pmix_standard"].get<std::string>(),
                             j.value("stable_abi", std::string("?")))
              << fmt::format("protocol version {}\n", kProtocolVersion)
              << fmt::format("configuration: {}\n",
                             config && *config ? config : "built-in defaults (no ZPMIX_CONFIG)")
              << fmt::format("base directory: {}\n", j["base_dir"].get<std::string>());
    if (o.attributes)
        for (const auto &[role, fns] : j["attributes"].items())
            for (const auto &[fn, list] : fns.items()) {
                std::cout << fmt::format("{} {}:", role, fn);
                for (const auto &a : list) std::cout << " " << a["name"].get<std::string>();
                std::cout << "\n";
            }
    return 0;
}

}  // namespace

void add_info_command(CLI::App &app, int &status) {
    auto o = std::make_shared<InfoOptions>();
    auto *cmd =
        app.add_subcommand("info", "Version, protocol, configuration, supported attributes");
    cmd->add_flag("--attributes", o->attributes, "The attributes each API function honours");
    cmd->add_flag("--json", o->json, "One JSON object");
    cmd->callback([o, &status] { status = run_info(*o); });
}

}  // namespace zpmix::cli
