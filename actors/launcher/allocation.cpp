#include "actors/launcher/allocation.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace zpmix::alloc {

namespace {

// More would be a typo (n[1-99999999]), not an allocation.
constexpr std::size_t kMaxHosts = 65536;
constexpr std::uint32_t kMaxCount = 1u << 20;

std::string_view trim(std::string_view s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string_view::npos) return {};
    return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    for (std::size_t start = 0;;) {
        const auto at = s.find(sep, start);
        out.push_back(s.substr(start, at == std::string_view::npos ? at : at - start));
        if (at == std::string_view::npos) return out;
        start = at + 1;
    }
}

// A count in [1, kMaxCount] written only with digits.
std::optional<std::uint32_t> count(std::string_view s) {
    std::uint32_t v = 0;
    if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size() || v == 0 || v > kMaxCount)
        return std::nullopt;
    return v;
}

bool valid_name(std::string_view name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '.' || c == '_';
    });
}

// A host named again adds its slots (and its max_slots, when both say one).
void add_host(std::vector<Host> &hosts, Host h) {
    for (auto &known : hosts) {
        if (known.name != h.name) continue;
        known.slots += h.slots;
        if (known.max_slots && h.max_slots)
            known.max_slots = *known.max_slots + *h.max_slots;
        else if (h.max_slots)
            known.max_slots = h.max_slots;
        return;
    }
    hosts.push_back(std::move(h));
}

std::string hosts_text(const std::vector<Host> &hosts) {
    std::string out;
    for (const auto &h : hosts)
        out += fmt::format("{}{}:{}", out.empty() ? "" : " ", h.name, h.slots);
    return out;
}

struct Mapping {
    enum class By { slot, node, ppr } by = By::slot;
    std::uint32_t ppr = 0;
};

Result<Mapping> mapping_of(const Request &r) {
    Mapping m;
    const std::string &s = r.map_by;
    if (s.empty() || s == "slot" || s == "core") {
        m.by = Mapping::By::slot;  // with a slot per core, core is slot (placement binds within)
    } else if (s == "node") {
        m.by = Mapping::By::node;
    } else if (s.starts_with("ppr:")) {
        const auto parts = split(s, ':');
        const auto n = parts.size() == 3 ? count(parts[1]) : std::nullopt;
        if (!n) return {{}, fmt::format("--map-by {}: expected ppr:N:node with N > 0", s)};
        if (parts[2] != "node")
            return {{}, fmt::format("--map-by {}: only ppr:N:node is supported", s)};
        m.by = Mapping::By::ppr;
        m.ppr = *n;
    } else {
        return {{}, fmt::format("unknown --map-by '{}' (slot, core, node or ppr:N:node)", s)};
    }
    if (r.npernode) {
        if (*r.npernode == 0) return {{}, "-N/--npernode: expected N > 0"};
        if (m.by == Mapping::By::node || (m.by == Mapping::By::ppr && m.ppr != *r.npernode))
            return {{}, fmt::format("-N {} conflicts with --map-by {}", *r.npernode, s)};
        m.by = Mapping::By::ppr;
        m.ppr = *r.npernode;
    }
    return {m, {}};
}

std::string not_enough_slots(std::uint32_t np, const std::vector<Host> &hosts) {
    std::uint64_t total = 0;
    for (const auto &h : hosts) total += h.slots;
    return fmt::format(
        "not enough slots: {} rank(s) asked for, {} slot(s) on {} host(s) ({}); give more slots "
        "or use --oversubscribe",
        np, total, hosts.size(), hosts_text(hosts));
}

}  // namespace

std::string parse_host_list(std::string_view list, std::vector<Host> &hosts) {
    if (trim(list).empty()) return "empty host list";
    for (auto item : split(list, ',')) {
        item = trim(item);
        Host h;
        std::string_view name = item;
        if (const auto colon = item.rfind(':'); colon != std::string_view::npos) {
            const auto n = count(item.substr(colon + 1));
            if (!n)
                return fmt::format(
                    "host list '{}': '{}': the slot count after ':' must be a number > 0", list,
                    item);
            h.slots = *n;
            name = item.substr(0, colon);
        }
        if (!valid_name(name))
            return fmt::format("host list '{}': '{}' is not a host name", list, item);
        h.name = std::string(name);
        add_host(hosts, std::move(h));
        if (hosts.size() > kMaxHosts) return "too many hosts";
    }
    return {};
}

std::string parse_hostfile(std::string_view text, std::vector<Host> &hosts) {
    std::size_t line_no = 0;
    for (auto line : split(text, '\n')) {
        ++line_no;
        line = trim(line.substr(0, line.find('#')));
        if (line.empty()) continue;
        std::istringstream words{std::string(line)};
        std::string word;
        words >> word;
        if (!valid_name(word))
            return fmt::format("hostfile line {}: '{}' is not a host name", line_no, word);
        Host h{word, 1, std::nullopt};
        while (words >> word) {
            const auto eq = word.find('=');
            const std::string key = word.substr(0, eq);
            if (key != "slots" && key != "max_slots" && key != "max-slots")
                return fmt::format("hostfile line {}: unknown '{}' (slots=N, max_slots=N)", line_no,
                                   word);
            const auto n =
                count(eq == std::string::npos ? "" : std::string_view(word).substr(eq + 1));
            if (!n)
                return fmt::format("hostfile line {}: '{}': expected a number > 0", line_no, word);
            if (key == "slots")
                h.slots = *n;
            else
                h.max_slots = *n;
        }
        if (h.max_slots && *h.max_slots < h.slots)
            return fmt::format("hostfile line {}: max_slots={} is below slots={}", line_no,
                               *h.max_slots, h.slots);
        add_host(hosts, std::move(h));
        if (hosts.size() > kMaxHosts) return "too many hosts";
    }
    return {};
}

Result<std::vector<std::string>> expand_hostlist(std::string_view list) {
    // Expands one item ("rack[1-2]-n[01-02]"): its first bracket, then the rest, multiplied.
    std::function<std::string(std::string_view, std::vector<std::string> &)> expand =
        [&](std::string_view item, std::vector<std::string> &out) -> std::string {
        const auto lb = item.find('[');
        if (lb == std::string_view::npos) {
            if (item.find(']') != std::string_view::npos) return "']' without '['";
            out.emplace_back(item);
            return {};
        }
        const auto rb = item.find(']', lb);
        if (rb == std::string_view::npos) return "'[' without ']'";
        const auto prefix = item.substr(0, lb), body = item.substr(lb + 1, rb - lb - 1);
        if (prefix.find(']') != std::string_view::npos || body.find('[') != std::string_view::npos)
            return "nested or unbalanced brackets";
        std::vector<std::string> rest;
        if (auto e = expand(item.substr(rb + 1), rest); !e.empty()) return e;
        for (auto range : split(body, ',')) {
            const auto dash = range.find('-');
            const auto lo_s = range.substr(0, dash);
            const auto hi_s = dash == std::string_view::npos ? lo_s : range.substr(dash + 1);
            std::uint64_t lo = 0, hi = 0;
            const auto r1 = std::from_chars(lo_s.data(), lo_s.data() + lo_s.size(), lo);
            const auto r2 = std::from_chars(hi_s.data(), hi_s.data() + hi_s.size(), hi);
            if (lo_s.empty() || hi_s.empty() || r1.ec != std::errc{} || r2.ec != std::errc{} ||
                r1.ptr != lo_s.data() + lo_s.size() || r2.ptr != hi_s.data() + hi_s.size() ||
                hi < lo)
                return fmt::format("bad range '{}'", range);
            if ((hi - lo + 1) * rest.size() + out.size() > kMaxHosts) return "too many hosts";
            for (auto i = lo; i <= hi; ++i)  // the low bound's width keeps leading zeros
                for (const auto &r : rest)
                    out.push_back(fmt::format("{}{:0{}}{}", prefix, i, lo_s.size(), r));
        }
        return {};
    };
    Result<std::vector<std::string>> result;
    std::size_t start = 0, depth = 0;
    for (std::size_t i = 0; i <= list.size(); ++i) {
        if (i < list.size() && list[i] == '[') ++depth;
        if (i < list.size() && list[i] == ']' && depth > 0) --depth;
        if (i < list.size() && (list[i] != ',' || depth > 0)) continue;
        const auto item = list.substr(start, i - start);
        start = i + 1;
        std::vector<std::string> names;
        std::string e = item.empty() ? "empty host" : expand(item, names);
        for (const auto &n : names)
            if (e.empty() && !valid_name(n)) e = fmt::format("'{}' is not a host name", n);
        if (e.empty() && result.value.size() + names.size() > kMaxHosts) e = "too many hosts";
        if (!e.empty()) {
            result.error = fmt::format("hostlist '{}': {}", list, e);
            return result;
        }
        result.value.insert(result.value.end(), names.begin(), names.end());
    }
    return result;
}

Result<std::vector<std::uint32_t>> expand_tasks_per_node(std::string_view counts) {
    Result<std::vector<std::uint32_t>> result;
    for (auto item : split(counts, ',')) {
        std::optional<std::uint32_t> n, times = 1;
        if (const auto paren = item.find("(x"); paren != std::string_view::npos) {
            n = count(item.substr(0, paren));
            times = item.ends_with(')') ? count(item.substr(paren + 2, item.size() - paren - 3))
                                        : std::nullopt;
        } else {
            n = count(item);
        }
        if (!n || !times || result.value.size() + *times > kMaxHosts) {
            result.error = fmt::format("tasks per node '{}': bad '{}' (N or N(xM))", counts, item);
            return result;
        }
        result.value.insert(result.value.end(), *times, *n);
    }
    return result;
}

Result<std::vector<Host>> requested_hosts(const Request &request, const Env &env) {
    Result<std::vector<Host>> r;
    std::vector<Host> named;  // by -H
    for (const auto &list : request.host_lists)
        if (r.error = parse_host_list(list, named); !r.error.empty()) return r;
    if (!request.hostfile.empty()) {
        std::ifstream in(request.hostfile);
        std::stringstream text;
        if (in.is_open()) text << in.rdbuf();
        if (!in.is_open() || in.bad()) {
            r.error =
                fmt::format("cannot read hostfile {}: {}", request.hostfile, std::strerror(errno));
            return r;
        }
        if (r.error = parse_hostfile(text.str(), r.value); !r.error.empty()) {
            r.error = request.hostfile + ": " + r.error;
            return r;
        }
        if (r.value.empty()) r.error = fmt::format("hostfile {} names no host", request.hostfile);
        if (named.empty() || !r) return r;
        // -H with a hostfile picks hosts of it, as mpirun does; their slots are the hostfile's.
        for (const auto &h : named)
            if (std::none_of(r.value.begin(), r.value.end(),
                             [&](const Host &f) { return f.name == h.name; })) {
                r.error = fmt::format("host {} given by -H is not in the hostfile {}", h.name,
                                      request.hostfile);
                return r;
            }
        std::erase_if(r.value, [&](const Host &f) {
            return std::none_of(named.begin(), named.end(),
                                [&](const Host &h) { return h.name == f.name; });
        });
        return r;
    }
    if (!named.empty()) {
        r.value = std::move(named);
        return r;
    }
    auto nodelist = env("SLURM_JOB_NODELIST");
    if (!nodelist) nodelist = env("SLURM_NODELIST");
    if (!nodelist) return r;  // not in a Slurm allocation
    const auto tasks = env("SLURM_TASKS_PER_NODE");
    if (!tasks) {
        r.error = "in a Slurm allocation (SLURM_JOB_NODELIST) without SLURM_TASKS_PER_NODE";
        return r;
    }
    auto names = expand_hostlist(*nodelist);
    auto slots = expand_tasks_per_node(*tasks);
    if (!names || !slots) {
        r.error = "Slurm allocation: " + (names ? slots.error : names.error);
        return r;
    }
    if (names.value.size() != slots.value.size()) {
        r.error = fmt::format(
            "Slurm allocation: SLURM_JOB_NODELIST names {} node(s), SLURM_TASKS_PER_NODE counts {}",
            names.value.size(), slots.value.size());
        return r;
    }
    for (std::size_t i = 0; i < names.value.size(); ++i)
        add_host(r.value, Host{names.value[i], slots.value[i], std::nullopt});
    return r;
}

Result<Allocation> allocate(const Request &request, const Env &env) {
    Result<Allocation> r;
    const auto mapping = mapping_of(request);
    if (!mapping) {
        r.error = mapping.error;
        return r;
    }
    auto hosts = requested_hosts(request, env);
    if (!hosts) {
        r.error = hosts.error;
        return r;
    }
    if (!hosts.value.empty()) return map_onto(std::move(hosts.value), request);
    // This host alone, with as many slots as ranks.
    const bool ppr = mapping.value.by == Mapping::By::ppr;
    Request alone = request;
    alone.oversubscribe = request.oversubscribe.value_or(true);
    return map_onto(
        {Host{"localhost", request.np.value_or(ppr ? mapping.value.ppr : 1), std::nullopt}}, alone);
}

Result<Allocation> map_onto(std::vector<Host> hosts, const Request &request) {
    Result<Allocation> r;
    const auto mapping = mapping_of(request);
    if (!mapping) {
        r.error = mapping.error;
        return r;
    }
    Allocation &a = r.value;
    a.hosts = std::move(hosts);
    const bool oversubscribe = request.oversubscribe.value_or(false);
    const bool ppr = mapping.value.by == Mapping::By::ppr;
    const std::uint32_t per_host = mapping.value.ppr;

    std::uint64_t default_np = 0;
    for (const auto &h : a.hosts) default_np += ppr ? per_host : h.slots;
    const std::uint64_t np = request.np ? *request.np : default_np;
    if (np == 0 || np > kMaxCount) {
        r.error = fmt::format("-n {}: expected 1 to {} ranks", np, kMaxCount);
        return r;
    }
    const auto n = static_cast<std::uint32_t>(np);

    a.on_host.assign(a.hosts.size(), {});
    auto load = [&](std::size_t h) { return a.on_host[h].size(); };
    a.ranks.reserve(n);
    auto put = [&](std::size_t h) {
        const auto rank = static_cast<std::uint32_t>(a.ranks.size());
        const auto local = static_cast<std::uint32_t>(a.on_host[h].size());
        a.ranks.push_back(RankPlace{static_cast<std::uint32_t>(h), local});
        a.on_host[h].push_back(rank);
    };
    auto below_max = [&](std::size_t h) {
        return !a.hosts[h].max_slots || load(h) < *a.hosts[h].max_slots;
    };

    if (ppr) {
        if (np > default_np) {
            r.error = fmt::format(
                "--map-by ppr:{}:node places at most {} rank(s) on {} host(s); -n asks for {}",
                per_host, default_np, a.hosts.size(), np);
            return r;
        }
        for (std::size_t h = 0; h < a.hosts.size() && a.ranks.size() < n; ++h) {
            const auto here =
                std::min<std::uint32_t>(per_host, n - static_cast<std::uint32_t>(a.ranks.size()));
            if (here > a.hosts[h].slots && !oversubscribe) {
                r.error = fmt::format(
                    "not enough slots on {}: ppr:{}:node puts {} rank(s) there, it has {} slot(s); "
                    "give more slots or use --oversubscribe",
                    a.hosts[h].name, per_host, here, a.hosts[h].slots);
                return r;
            }
            for (std::uint32_t i = 0; i < here; ++i) {
                if (!below_max(h)) {
                    r.error = fmt::format("{} has max_slots={}: cannot place {} rank(s) there",
                                          a.hosts[h].name, *a.hosts[h].max_slots, here);
                    return r;
                }
                put(h);
            }
        }
        return r;
    }

    // First every slot (by slot: each host filled in turn; by node: one rank per host in turn),
    // then, oversubscribing, one more rank per host in turn up to its max_slots.
    if (mapping.value.by == Mapping::By::slot) {
        for (std::size_t h = 0; h < a.hosts.size(); ++h)
            while (a.ranks.size() < n && load(h) < a.hosts[h].slots && below_max(h)) put(h);
    } else {
        for (bool placed = true; placed && a.ranks.size() < n;) {
            placed = false;
            for (std::size_t h = 0; h < a.hosts.size() && a.ranks.size() < n; ++h)
                if (load(h) < a.hosts[h].slots && below_max(h)) put(h), placed = true;
        }
    }
    if (a.ranks.size() < n && !oversubscribe) {
        r.error = not_enough_slots(n, a.hosts);
        return r;
    }
    for (bool placed = true; placed && a.ranks.size() < n;) {
        placed = false;
        for (std::size_t h = 0; h < a.hosts.size() && a.ranks.size() < n; ++h)
            if (below_max(h)) put(h), placed = true;
    }
    if (a.ranks.size() < n)
        r.error = fmt::format("{} rank(s) asked for, but the hosts' max_slots allow only {} ({})",
                              n, a.ranks.size(), hosts_text(a.hosts));
    return r;
}

bool is_this_host(std::string_view name, std::string_view hostname) {
    if (name == "localhost" || name == "127.0.0.1" || name == hostname) return true;
    // A name and its fully qualified form ("n1" and "n1.cluster") are one host; addresses aren't.
    auto short_name = [](std::string_view s) { return s.substr(0, s.find('.')); };
    auto is_address = [](std::string_view s) {
        return std::all_of(s.begin(), s.end(),
                           [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
    };
    return !name.empty() && !hostname.empty() && !is_address(name) && !is_address(hostname) &&
           short_name(name) == short_name(hostname);
}

}  // namespace zpmix::alloc
