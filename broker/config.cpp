#include "broker/config.hpp"

#include "actors/protocol/job.hpp"

#include <cstdlib>

#include <spdlog/spdlog.h>
#include <toml++/toml.h>

namespace zpmix {

namespace {

// [events]: the event broker's cache and publisher.
void load_events_section(const std::string &path, const toml::table &events, Config &into) {
    for (const auto &[key, node] : events) {
        const std::string k(key.str());
        const auto v = node.value<std::int64_t>();
        auto bad = [&](const char *what) {
            return ConfigError(path + ": events." + k + " must be " + what);
        };
        if (k == "cache_size") {
            if (!node.is_integer() || *v < 1 || *v > 1000000) throw bad("an integer in 1..1000000");
            into.event_cache_size = static_cast<std::size_t>(*v);
        } else if (k == "sndhwm") {
            if (!node.is_integer() || *v < 1 || *v > 100000000) throw bad("an integer >= 1");
            into.event_sndhwm = static_cast<int>(*v);
        } else if (k == "max_custom_range") {
            if (!node.is_integer() || *v < 1 || *v > 10000000)
                throw bad("an integer in 1..10000000");
            into.event_max_custom_range = static_cast<std::size_t>(*v);
        } else if (k == "replay_size") {
            if (!node.is_integer() || *v < 0 || *v > 10000000)
                throw bad("an integer in 0..10000000");
            into.event_replay_size = static_cast<std::size_t>(*v);
        } else if (k == "test_drop_every") {
            if (!node.is_integer() || *v < 0) throw bad("an integer >= 0");
            into.event_test_drop_every = static_cast<std::uint64_t>(*v);
        } else {
            throw ConfigError(path + ": unknown key events." + k);
        }
    }
}

// [monitor]: process monitors. [log]: PMIx_Log channels.
void load_monitor_log_section(const std::string &path, const std::string &section,
                              const toml::table &table, Config &into) {
    for (const auto &[key, node] : table) {
        const std::string k(key.str());
        auto bad = [&](const char *what) {
            return ConfigError(path + ": " + section + "." + k + " must be " + what);
        };
        const auto s = node.value<std::string>();
        const auto v = node.value<std::int64_t>();
        if (section == "monitor" && k == "response") {
            if (!node.is_string() || (*s != "report" && *s != "terminate"))
                throw bad("\"report\" or \"terminate\"");
            into.monitor_terminate = *s == "terminate";
        } else if (section == "monitor" && k == "time_unit_ms") {
            if (!node.is_integer() || *v < 1 || *v > 1000) throw bad("an integer in 1..1000");
            into.monitor_time_unit_ms = static_cast<int>(*v);
        } else if (section == "log" && k == "syslog_socket") {
            if (!node.is_string()) throw bad("a string");
            into.log_syslog_socket = *s;
        } else if (section == "log" && k == "format") {
            if (!node.is_string() || (*s != "text" && *s != "json"))
                throw bad("\"text\" or \"json\"");
            into.log_format = *s;
        } else if (section == "log" && k == "file") {
            if (!node.is_string()) throw bad("a string");
            into.log_file = *s;
        } else if (section == "log" && k == "syslog") {
            if (!node.is_boolean()) throw bad("true or false");
            into.log_syslog = *node.value<bool>();
        } else if (section == "log" && k == "peer_lines") {
            if (!node.is_integer() || *v < 1 || *v > 100000) throw bad("an integer in 1..100000");
            into.log_peer_lines = static_cast<unsigned>(*v);
        } else if (section == "log" && k == "peer_interval_ms") {
            if (!node.is_integer() || *v < 100 || *v > 3600000)
                throw bad("an integer in 100..3600000");
            into.log_peer_interval_ms = static_cast<int>(*v);
        } else {
            throw ConfigError(path + ": unknown key " + section + "." + k);
        }
    }
}

void load_tree_section(const std::string &path, const toml::table &t, Config &into) {
    for (const auto &[key, node] : t) {
        const std::string k(key.str());
        auto bad = [&](const char *what) {
            return ConfigError(path + ": tree." + k + " must be " + what);
        };
        const auto v = node.value<std::int64_t>();
        const auto s = node.value<std::string>();
        if (k == "radix") {
            if (!node.is_integer() || *v < 1 || *v > 1024) throw bad("an integer in 1..1024");
            into.tree_radix = static_cast<std::uint32_t>(*v);
        } else if (k == "heartbeat_ms" || k == "lost_after_ms" || k == "boot_timeout_ms") {
            if (!node.is_integer() || *v < 10 || *v > 3600000)
                throw bad("an integer in 10..3600000");
            (k == "heartbeat_ms"    ? into.tree_heartbeat_ms
             : k == "lost_after_ms" ? into.tree_lost_after_ms
                                    : into.tree_boot_timeout_ms) = static_cast<int>(*v);
        } else if (k == "launcher") {
            if (!node.is_string() || (*s != "auto" && *s != "rsh" && *s != "srun"))
                throw bad("\"auto\", \"rsh\" or \"srun\"");
            into.tree_launcher = *s;
        } else if (k == "tcp_if" || k == "rsh_agent" || k == "zpmix" || k == "munge_socket" ||
                   k == "key_file") {
            if (!node.is_string()) throw bad("a string");
            (k == "tcp_if"      ? into.tree_tcp_if
             : k == "rsh_agent" ? into.tree_rsh_agent
             : k == "zpmix"     ? into.tree_zpmix
             : k == "key_file"  ? into.tree_key_file
                                : into.tree_munge_socket) = *s;
        } else if (k == "hosts" || k == "addresses") {
            const toml::array *a = node.as_array();
            if (!a) throw bad("an array of host names");
            auto &list = k == "hosts" ? into.tree_hosts : into.tree_addresses;
            list.clear();
            for (const auto &h : *a) {
                const auto name = h.value<std::string>();
                if (!name || name->empty()) throw bad("an array of host names");
                list.push_back(*name);
            }
        } else if (k == "port") {
            if (!node.is_integer() || *v < 1 || *v > 65535) throw bad("an integer in 1..65535");
            into.tree_port = static_cast<int>(*v);
        } else {
            throw ConfigError(path + ": unknown key tree." + k);
        }
    }
}

}  // namespace

void load_config_file(const std::string &path, Config &into) {
    toml::table t;
    // It names programs to run ([tree] zpmix, rsh_agent): ours or root's, changed by no one else.
    std::optional<std::string> text;
    try {
        text = read_trusted_file(path, FileTrust{.root_ok = true, .follow_links = true});
    } catch (const UntrustedPath &e) {
        throw ConfigError(e.what());
    } catch (const std::exception &e) {
        throw ConfigError(path + ": " + e.what());
    }
    if (!text) throw ConfigError(path + ": no such file");
    try {
        t = toml::parse(*text, path);
    } catch (const toml::parse_error &e) {
        throw ConfigError(path + ": " + std::string(e.description()));
    }
    const toml::table *broker = t["broker"].as_table();
    for (const auto &[key, node] : t) {
        if (key.str() != "broker" && key.str() != "events" && key.str() != "monitor" &&
            key.str() != "log" && key.str() != "tree")
            throw ConfigError(path + ": unknown section or key '" + std::string(key.str()) + "'");
    }
    if (const toml::table *events = t["events"].as_table())
        load_events_section(path, *events, into);
    if (const toml::table *tree = t["tree"].as_table()) load_tree_section(path, *tree, into);
    for (const char *section : {"monitor", "log"})
        if (const toml::table *s = t[section].as_table())
            load_monitor_log_section(path, section, *s, into);
    if (!broker) return;
    for (const auto &[key, node] : *broker) {
        const std::string k(key.str());
        auto bad = [&](const char *what) {
            return ConfigError(path + ": broker." + k + " must be " + what);
        };
        if (k == "run_dir") {
            if (!node.is_string()) throw bad("a string");
            into.run_dir = *node.value<std::string>();
        } else if (k == "tcp") {
            if (!node.is_string()) throw bad("a string");
            into.tcp = *node.value<std::string>();
        } else if (k == "tcp_key_file") {
            if (!node.is_string()) throw bad("a string");
            into.tcp_key_file = *node.value<std::string>();
        } else if (k == "max_message_bytes") {
            auto v = node.value<std::int64_t>();
            if (!node.is_integer() || *v < 1024) throw bad("an integer >= 1024");
            into.max_message_bytes = static_cast<std::size_t>(*v);
        } else if (k == "max_peer_output_bytes") {
            auto v = node.value<std::int64_t>();
            if (!node.is_integer() || *v < 65536) throw bad("an integer >= 65536");
            into.max_peer_output_bytes = static_cast<std::size_t>(*v);
        } else if (k == "output_window_bytes") {
            auto v = node.value<std::int64_t>();
            if (!node.is_integer() || *v < 2 * static_cast<std::int64_t>(msg::kOutputAckBytes) ||
                *v > (std::int64_t{1} << 30))
                throw bad("an integer in 524288..1073741824");
            into.output_window_bytes = static_cast<std::size_t>(*v);
        } else if (k == "iof_cache_bytes") {
            auto v = node.value<std::int64_t>();
            if (!node.is_integer() || *v < 0 || *v > (std::int64_t{1} << 32))
                throw bad("an integer in 0..4294967296");
            into.iof_cache_bytes = static_cast<std::size_t>(*v);
        } else if (k == "max_connections") {
            auto v = node.value<std::int64_t>();
            if (!node.is_integer() || *v < 0) throw bad("an integer >= 0");
            into.max_connections = static_cast<std::size_t>(*v);
        } else if (k == "client_write_timeout_ms" || k == "tcp_heartbeat_ivl_ms" ||
                   k == "tcp_heartbeat_timeout_ms" || k == "tcp_handshake_timeout_ms") {
            auto v = node.value<std::int64_t>();
            const std::int64_t least = k == "tcp_heartbeat_ivl_ms" ? 0 : 1;
            if (!node.is_integer() || *v < least || *v > 3600000)
                throw bad(least == 0 ? "an integer in 0..3600000" : "an integer in 1..3600000");
            (k == "client_write_timeout_ms"    ? into.client_write_timeout_ms
             : k == "tcp_heartbeat_ivl_ms"     ? into.tcp_heartbeat_ivl_ms
             : k == "tcp_heartbeat_timeout_ms" ? into.tcp_heartbeat_timeout_ms
                                               : into.tcp_handshake_timeout_ms) =
                static_cast<int>(*v);
        } else if (k == "tcp_failed_handshakes_burst" || k == "tcp_failed_handshakes_per_minute") {
            auto v = node.value<std::int64_t>();
            if (!node.is_integer() || *v < 1 || *v > 1000000) throw bad("an integer in 1..1000000");
            (k == "tcp_failed_handshakes_burst" ? into.tcp_failed_handshakes_burst
                                                : into.tcp_failed_handshakes_per_minute) =
                static_cast<unsigned>(*v);
        } else if (k == "tcp_max_unauthenticated" || k == "tcp_max_unauthenticated_per_address") {
            auto v = node.value<std::int64_t>();
            if (!node.is_integer() || *v < 1 || *v > 1000000) throw bad("an integer in 1..1000000");
            (k == "tcp_max_unauthenticated" ? into.tcp_max_unauthenticated
                                            : into.tcp_max_unauthenticated_per_address) =
                static_cast<std::size_t>(*v);
        } else if (k == "log_level") {
            if (!node.is_string()) throw bad("a string");
            into.log_level = *node.value<std::string>();
            if (spdlog::level::from_str(into.log_level) == spdlog::level::off &&
                into.log_level != "off")
                throw bad("one of trace, debug, info, warn, error, off");
        } else if (k == "keep_finished_s") {
            auto v = node.value<std::int64_t>();
            if (!node.is_integer() || *v < 0 || *v > 604800) throw bad("an integer in 0..604800");
            into.keep_finished_s = static_cast<int>(*v);
        } else if (k == "kill_grace_ms" || k == "get_timeout_ms" || k == "group_timeout_ms") {
            auto v = node.value<std::int64_t>();
            if (!node.is_integer() || *v < 0 || *v > 86400000)
                throw bad("an integer in 0..86400000");
            (k == "kill_grace_ms"    ? into.kill_grace_ms
             : k == "get_timeout_ms" ? into.get_timeout_ms
                                     : into.group_timeout_ms) = static_cast<int>(*v);
        } else {
            throw ConfigError(path + ": unknown key broker." + k);
        }
    }
}

Config load_config(const std::optional<std::string> &explicit_path) {
    Config c;
    if (explicit_path) {
        load_config_file(*explicit_path, c);
    } else if (const char *env = std::getenv("ZPMIX_CONFIG"); env && *env) {
        load_config_file(env, c);
    }
    return c;
}

void apply_log_level(const std::string &level) {
    const auto l = spdlog::level::from_str(level);
    if (l == spdlog::level::off && level != "off")
        throw ConfigError("unknown log level '" + level + "'");
    spdlog::set_level(l);
}

}  // namespace zpmix
