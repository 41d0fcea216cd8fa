#include "broker/cmd/run/layout.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "actors/launcher/placement.hpp"
#include "actors/protocol/job.hpp"
#include "broker/cmd/run/output.hpp"

namespace zpmix::cli::run {

namespace {

std::string this_hostname() {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
    return name;
}

// The job's allocation, as mpirun would make it.
alloc::Result<alloc::Allocation> allocate_job(const RunOptions &o) {
    alloc::Request req;
    req.host_lists = o.hosts;
    req.hostfile = o.hostfile;
    if (o.np_given) req.np = o.np;
    if (o.npernode) req.npernode = o.npernode;
    req.map_by = o.map_by;
    if (o.oversubscribe || o.nooversubscribe) req.oversubscribe = o.oversubscribe;
    return alloc::allocate(req, [](const std::string &name) -> std::optional<std::string> {
        const char *v = std::getenv(name.c_str());
        return v ? std::optional<std::string>(v) : std::nullopt;
    });
}

// Where the ranks go, and the allocation's other nodes; empty brokers when the allocation is
// this host alone.
Spread spread_of(const alloc::Allocation &a, const std::string &hostname) {
    Spread s;
    std::string root = hostname;
    bool elsewhere = false;
    std::vector<std::uint32_t> node_of_host(a.hosts.size(), 0);
    for (std::size_t h = 0; h < a.hosts.size(); ++h) {
        if (alloc::is_this_host(a.hosts[h].name, hostname))
            root = a.hosts[h].name;
        else
            elsewhere = true;
        if (a.on_host[h].empty()) {
            s.spare_nodes.push_back(a.hosts[h].name);
            s.spare_slots.push_back(a.hosts[h].slots);
            continue;
        }
        node_of_host[h] = static_cast<std::uint32_t>(s.nodes.size());
        s.nodes.push_back(a.hosts[h].name);
        s.slots.push_back(a.hosts[h].slots);
    }
    if (!elsewhere) return {};
    for (const auto &r : a.ranks) s.node_of_rank.push_back(node_of_host[r.host]);
    s.brokers.push_back(root);
    for (const auto *names : {&s.nodes, &s.spare_nodes})
        for (const auto &n : *names)
            if (n != root) s.brokers.push_back(n);
    return s;
}

// A job whose ranks are all on one host, as a job across nodes names it.
Spread one_node(const alloc::Allocation &a) {
    Spread s;
    for (std::size_t h = 0; h < a.hosts.size(); ++h)
        if (!a.on_host[h].empty()) {
            s.nodes.push_back(a.hosts[h].name);
            s.slots.push_back(a.hosts[h].slots);
        }
    s.node_of_rank.assign(a.ranks.size(), 0);
    return s;
}

// Whether every node of the job is a host of the standing tree `b` is a member of; if so, the
// nodes are renamed as the tree names them, and the brokers are the tree's.
bool in_tree(const RendezvousInfo &b, Spread &s, const std::string &hostname) {
    if (b.tree_hosts.empty() || s.nodes.empty()) return false;
    std::vector<std::string> names;
    for (const auto &node : s.nodes) {
        // "localhost" is this node, not whichever host the tree names first.
        const std::string &name = alloc::is_this_host(node, hostname) ? hostname : node;
        const auto it =
            std::find_if(b.tree_hosts.begin(), b.tree_hosts.end(),
                         [&](const std::string &h) { return alloc::is_this_host(name, h); });
        if (it == b.tree_hosts.end()) return false;
        names.push_back(*it);
    }
    s.nodes = std::move(names);
    s.brokers = b.tree_hosts;
    // The allocation's other nodes: those of the tree, as it names them.
    std::vector<std::string> spare;
    std::vector<std::uint32_t> spare_slots;
    for (std::size_t n = 0; n < s.spare_nodes.size(); ++n) {
        const std::string &node = s.spare_nodes[n];
        const std::string &name = alloc::is_this_host(node, hostname) ? hostname : node;
        const auto it =
            std::find_if(b.tree_hosts.begin(), b.tree_hosts.end(),
                         [&](const std::string &h) { return alloc::is_this_host(name, h); });
        if (it == b.tree_hosts.end()) continue;
        spare.push_back(*it);
        spare_slots.push_back(s.spare_slots[n]);
    }
    s.spare_nodes = std::move(spare);
    s.spare_slots = std::move(spare_slots);
    return true;
}

}  // namespace

alloc::Result<Layout> lay_out(const RunOptions &o) {
    Layout layout;
    layout.hostname = this_hostname();
    auto allocation = allocate_job(o);
    if (!allocation) return {{}, std::move(allocation.error)};
    layout.allocation = std::move(allocation.value);
    layout.spread = spread_of(layout.allocation, layout.hostname);
    return {std::move(layout), {}};
}

bool Layout::on_standing_tree(const RendezvousInfo &b) {
    Spread s = across() ? spread : one_node(allocation);
    if (!in_tree(b, s, hostname)) return false;
    spread = std::move(s);
    return true;
}

std::vector<std::uint32_t> Layout::brokers_of(std::int64_t stdin_target) const {
    if (!across()) return {0};
    std::set<std::uint32_t> b;
    for (std::uint32_t r = 0; r < spread.node_of_rank.size(); ++r) {
        if (stdin_target != msg::kStdinAll && stdin_target != r) continue;
        const auto &node = spread.nodes[spread.node_of_rank[r]];
        b.insert(static_cast<std::uint32_t>(
            std::find(spread.brokers.begin(), spread.brokers.end(), node) -
            spread.brokers.begin()));
    }
    return {b.begin(), b.end()};
}

void warn_overloaded(const RunOptions &o, const Layout &layout) {
    if (o.bind_to == "none" || o.overload_allowed) return;
    const auto &a = layout.allocation;
    std::size_t busiest = 0;
    for (std::size_t h = 1; h < a.on_host.size(); ++h)
        if (a.on_host[h].size() > a.on_host[busiest].size()) busiest = h;
    if (a.on_host.empty() || a.on_host[busiest].empty()) return;
    const auto n = static_cast<std::uint32_t>(a.on_host[busiest].size());
    std::string why;
    try {
        Placement placement;
        why = placement.overloaded(o.bind_to, n);
    } catch (const std::exception &) {
        return;  // no topology: nothing is bound either
    }
    if (why.empty()) return;
    const std::string &host = a.hosts[busiest].name;
    std::cerr << fmt::format(
        "zpmix run: warning: --bind-to {}: {} ranks on {}'s {}{}: some share one (overloaded; "
        "--bind-to {}:overload-allowed says it is meant)\n",
        o.bind_to, n, host, why,
        alloc::is_this_host(host, layout.hostname) ? "" : " (as this node has)", o.bind_to);
}

void report_bindings(const RunOptions &o, const std::string &map_by, std::uint32_t n,
                     const std::string &hostname) {
    std::vector<Placement::Rank> ranks;
    Placement placement;
    try {
        if (auto err = placement.place(map_by, o.bind_to, n, ranks); !err.empty())
            return (void)fail("--report-bindings: " + err);
    } catch (const std::exception &e) {
        return (void)fail(std::string("--report-bindings: ") + e.what());
    }
    for (std::uint32_t r = 0; r < n; ++r)
        std::cerr << fmt::format(
            "[{}] rank {} {}\n", hostname, r,
            ranks[r].cpuset.empty()
                ? std::string("not bound")
                : fmt::format("bound to cpus {} ({})", ranks[r].cpuset, ranks[r].locality));
}

}  // namespace zpmix::cli::run
