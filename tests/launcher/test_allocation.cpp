#define BOOST_TEST_MODULE allocation
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "actors/launcher/allocation.hpp"

using namespace zpmix::alloc;

namespace {

// An environment of exactly these variables.
Env env_of(std::map<std::string, std::string> vars) {
    return [vars = std::move(vars)](const std::string &name) -> std::optional<std::string> {
        const auto it = vars.find(name);
        if (it == vars.end()) return std::nullopt;
        return it->second;
    };
}
const Env kNoEnv = env_of({});

// "name:slots" per host.
std::vector<std::string> names_slots(const std::vector<Host> &hosts) {
    std::vector<std::string> out;
    for (const auto &h : hosts) out.push_back(h.name + ":" + std::to_string(h.slots));
    return out;
}

// The host of each rank, by name.
std::vector<std::string> rank_hosts(const Allocation &a) {
    std::vector<std::string> out;
    for (const auto &r : a.ranks) out.push_back(a.hosts[r.host].name);
    return out;
}

Allocation ok(const Request &r, const Env &env = kNoEnv) {
    auto a = allocate(r, env);
    BOOST_TEST_REQUIRE(a.error == "");
    return a.value;
}

std::string error_of(const Request &r, const Env &env = kNoEnv) {
    auto a = allocate(r, env);
    BOOST_TEST_REQUIRE(!a);
    return a.error;
}

bool contains(const std::string &s, const std::string &part) {
    return s.find(part) != std::string::npos;
}

struct TempFile {
    std::string path;
    explicit TempFile(const std::string &text) {
        char tmpl[] = "/tmp/zpmix-hostfile-XXXXXX";
        const int fd = ::mkstemp(tmpl);
        BOOST_TEST_REQUIRE(fd >= 0);
        ::close(fd);
        path = tmpl;
        std::ofstream(path) << text;
    }
    ~TempFile() { std::remove(path.c_str()); }
};

}  // namespace

BOOST_AUTO_TEST_CASE(host_list_slots_default_to_one_and_repeats_add_up) {
    std::vector<Host> hosts;
    BOOST_TEST(parse_host_list("n1:4,n2,n1:2,10.0.0.5:3", hosts) == "");
    BOOST_TEST(names_slots(hosts) == (std::vector<std::string>{"n1:6", "n2:1", "10.0.0.5:3"}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(malformed_host_lists_are_refused) {
    for (const char *bad : {"", "n1,,n2", "n1:", "n1:0", "n1:x", ":4", "n1:4:2", "n 1", "n1;n2",
                            "n1:-1", "n1:99999999999"}) {
        std::vector<Host> hosts;
        BOOST_TEST(parse_host_list(bad, hosts) != "", bad);
    }
    std::vector<Host> hosts;
    BOOST_TEST(contains(parse_host_list("n1:x", hosts), "slot count"));
}

BOOST_AUTO_TEST_CASE(hostfile_format) {
    std::vector<Host> hosts;
    const auto err = parse_hostfile(
        "# the cluster\n"
        "n1 slots=4\n"
        "\n"
        "   n2 slots=2 max_slots=3   # comment after\n"
        "n3\n"
        "n1 slots=2\r\n"
        "#n4 slots=8\n",
        hosts);
    BOOST_TEST(err == "");
    BOOST_TEST(names_slots(hosts) == (std::vector<std::string>{"n1:6", "n2:2", "n3:1"}),
               boost::test_tools::per_element());
    BOOST_TEST_REQUIRE(hosts.size() == 3u);
    BOOST_TEST(hosts[1].max_slots.value_or(0) == 3u);
    BOOST_TEST(!hosts[0].max_slots.has_value());
}

BOOST_AUTO_TEST_CASE(malformed_hostfiles_name_the_line) {
    struct Case {
        const char *text, *part;
    };
    for (const auto &c :
         {Case{"n1 slots=4\nn2 cores=2\n", "line 2: unknown 'cores=2'"},
          Case{"n1 slots=0\n", "line 1"}, Case{"n1 slots=\n", "line 1"},
          Case{"n1 slots\n", "line 1"}, Case{"n1 slots=4 max_slots=2\n", "max_slots"},
          Case{"\n\nn1:4\n", "line 3"}}) {
        std::vector<Host> hosts;
        const auto err = parse_hostfile(c.text, hosts);
        BOOST_TEST(contains(err, c.part), c.text << " -> " << err);
    }
}

BOOST_AUTO_TEST_CASE(hostfile_is_read_from_its_path) {
    TempFile f("n1 slots=2\nn2 slots=2\n");
    Request r;
    r.hostfile = f.path;
    const auto a = ok(r);
    BOOST_TEST(rank_hosts(a) == (std::vector<std::string>{"n1", "n1", "n2", "n2"}),
               boost::test_tools::per_element());

    TempFile empty("# nothing\n\n");
    r.hostfile = empty.path;
    BOOST_TEST(contains(error_of(r), "names no host"));
    r.hostfile = "/nonexistent/hostfile";
    BOOST_TEST(contains(error_of(r), "cannot read hostfile /nonexistent/hostfile"));
    TempFile bad("n1 slots=two\n");
    r.hostfile = bad.path;
    BOOST_TEST(contains(error_of(r), bad.path + ": hostfile line 1"));
}

BOOST_AUTO_TEST_CASE(slurm_hostlists) {
    auto names = expand_hostlist("n[1-3,7],gpu05,rack[1-2]-n[08-10],login");
    BOOST_TEST_REQUIRE(names.error == "");
    BOOST_TEST(names.value == (std::vector<std::string>{
                                  "n1", "n2", "n3", "n7", "gpu05", "rack1-n08", "rack1-n09",
                                  "rack1-n10", "rack2-n08", "rack2-n09", "rack2-n10", "login"}),
               boost::test_tools::per_element());
    for (const char *bad : {"", "n[1-3", "n1-3]", "n[3-1]", "n[a-b]", "n[1-]", "n[]", "n1,,n2",
                            "n[1-2[3]]", "n[1-99999999]", "n[1 -2]"})
        BOOST_TEST(!expand_hostlist(bad), bad);
}

BOOST_AUTO_TEST_CASE(slurm_tasks_per_node) {
    auto t = expand_tasks_per_node("2(x3),1,4");
    BOOST_TEST_REQUIRE(t.error == "");
    BOOST_TEST(t.value == (std::vector<std::uint32_t>{2, 2, 2, 1, 4}),
               boost::test_tools::per_element());
    for (const char *bad : {"", "2(x3", "2(3)", "x3", "0", "2(x0)", "2,,1", "a"})
        BOOST_TEST(!expand_tasks_per_node(bad), bad);
}

BOOST_AUTO_TEST_CASE(slurm_allocation_is_the_default) {
    const auto slurm =
        env_of({{"SLURM_JOB_NODELIST", "n[1-2],gpu05"}, {"SLURM_TASKS_PER_NODE", "2(x2),1"}});
    const auto a = ok(Request{}, slurm);
    BOOST_TEST(names_slots(a.hosts) == (std::vector<std::string>{"n1:2", "n2:2", "gpu05:1"}),
               boost::test_tools::per_element());
    BOOST_TEST(a.ranks.size() == 5u);  // -n defaults to every slot

    // -H or --hostfile win over Slurm's environment.
    Request r;
    r.host_lists = {"a:1"};
    BOOST_TEST(names_slots(ok(r, slurm).hosts) == (std::vector<std::string>{"a:1"}),
               boost::test_tools::per_element());

    // SLURM_NODELIST (older Slurm) too; the slots given are not oversubscribed.
    r = Request{};
    r.np = 3;
    BOOST_TEST(
        contains(error_of(r, env_of({{"SLURM_NODELIST", "n1"}, {"SLURM_TASKS_PER_NODE", "2"}})),
                 "not enough slots: 3 rank(s) asked for, 2 slot(s) on 1 host(s) (n1:2)"));

    BOOST_TEST(contains(error_of(Request{}, env_of({{"SLURM_JOB_NODELIST", "n[1-3]"},
                                                    {"SLURM_TASKS_PER_NODE", "2(x2)"}})),
                        "names 3 node(s), SLURM_TASKS_PER_NODE counts 2"));
    BOOST_TEST(contains(error_of(Request{}, env_of({{"SLURM_JOB_NODELIST", "n1"}})),
                        "without SLURM_TASKS_PER_NODE"));
    BOOST_TEST(contains(error_of(Request{}, env_of({{"SLURM_JOB_NODELIST", "n[1-"},
                                                    {"SLURM_TASKS_PER_NODE", "1"}})),
                        "Slurm allocation: hostlist"));
}

BOOST_AUTO_TEST_CASE(without_hosts_every_rank_is_here) {
    Request r;
    auto a = ok(r);
    BOOST_TEST(a.ranks.size() == 1u);  // -n 1 by default, as zpmix run always did
    r.np = 5;
    a = ok(r);
    BOOST_TEST(rank_hosts(a) == std::vector<std::string>(5, "localhost"),
               boost::test_tools::per_element());
    BOOST_TEST(a.on_host.at(0) == (std::vector<std::uint32_t>{0, 1, 2, 3, 4}),
               boost::test_tools::per_element());
    BOOST_TEST(a.ranks[3].local_rank == 3u);
    r.npernode = 3;
    r.np.reset();
    BOOST_TEST(ok(r).ranks.size() == 3u);
}

BOOST_AUTO_TEST_CASE(map_by_slot_fills_each_host_in_turn) {
    Request r;
    r.host_lists = {"n1:2,n2:3"};
    auto a = ok(r);  // -n defaults to the slots: 5
    BOOST_TEST(rank_hosts(a) == (std::vector<std::string>{"n1", "n1", "n2", "n2", "n2"}),
               boost::test_tools::per_element());
    BOOST_TEST(a.on_host[1] == (std::vector<std::uint32_t>{2, 3, 4}),
               boost::test_tools::per_element());
    BOOST_TEST(a.ranks[4].local_rank == 2u);
    BOOST_TEST(a.ranks[2].local_rank == 0u);
    r.np = 3;
    BOOST_TEST(rank_hosts(ok(r)) == (std::vector<std::string>{"n1", "n1", "n2"}),
               boost::test_tools::per_element());
    r.map_by = "core";  // a slot per core: the same hosts
    BOOST_TEST(rank_hosts(ok(r)) == (std::vector<std::string>{"n1", "n1", "n2"}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(map_by_node_goes_round_robin) {
    Request r;
    r.host_lists = {"n1:3", "n2:1", "n3:2"};  // -H repeated: the lists add up
    r.map_by = "node";
    const auto a = ok(r);
    BOOST_TEST(rank_hosts(a) == (std::vector<std::string>{"n1", "n2", "n3", "n1", "n3", "n1"}),
               boost::test_tools::per_element());
    BOOST_TEST(a.on_host[0] == (std::vector<std::uint32_t>{0, 3, 5}),
               boost::test_tools::per_element());
    BOOST_TEST(a.ranks[5].local_rank == 2u);
}

BOOST_AUTO_TEST_CASE(ppr_and_npernode) {
    Request r;
    r.host_lists = {"n1:4,n2:4,n3:4"};
    r.map_by = "ppr:2:node";
    auto a = ok(r);  // -n defaults to 2 per host
    BOOST_TEST(rank_hosts(a) == (std::vector<std::string>{"n1", "n1", "n2", "n2", "n3", "n3"}),
               boost::test_tools::per_element());
    r.np = 3;
    BOOST_TEST(rank_hosts(ok(r)) == (std::vector<std::string>{"n1", "n1", "n2"}),
               boost::test_tools::per_element());
    r.np = 7;
    BOOST_TEST(contains(error_of(r), "places at most 6 rank(s) on 3 host(s); -n asks for 7"));

    r = Request{};
    r.host_lists = {"n1:4,n2:4"};
    r.npernode = 1;
    BOOST_TEST(rank_hosts(ok(r)) == (std::vector<std::string>{"n1", "n2"}),
               boost::test_tools::per_element());
    r.map_by = "ppr:1:node";  // the same request twice is fine
    BOOST_TEST(ok(r).ranks.size() == 2u);
    r.map_by = "ppr:2:node";
    BOOST_TEST(contains(error_of(r), "-N 1 conflicts with --map-by ppr:2:node"));
    r.map_by = "node";
    BOOST_TEST(contains(error_of(r), "conflicts"));
    r.map_by.clear();
    r.npernode = 0;
    BOOST_TEST(contains(error_of(r), "-N/--npernode"));

    r = Request{};
    r.host_lists = {"n1:1,n2:4"};
    r.npernode = 2;
    BOOST_TEST(contains(error_of(r),
                        "not enough slots on n1: ppr:2:node puts 2 rank(s) there, it "
                        "has 1 slot(s)"));
    r.oversubscribe = true;
    BOOST_TEST(rank_hosts(ok(r)) == (std::vector<std::string>{"n1", "n1", "n2", "n2"}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(unknown_map_by_is_refused) {
    for (const char *bad : {"socket", "ppr:2", "ppr:0:node", "ppr:x:node", "ppr:2:socket",
                            "ppr:2:node:extra", "SLOT", "slot,"}) {
        Request r;
        r.map_by = bad;
        BOOST_TEST(contains(error_of(r), "--map-by"), bad);
    }
    Request r;
    r.map_by = "ppr:2:socket";
    BOOST_TEST(contains(error_of(r), "only ppr:N:node is supported"));
}

BOOST_AUTO_TEST_CASE(too_few_slots_unless_oversubscribing) {
    Request r;
    r.host_lists = {"n1:2,n2:2"};
    r.np = 6;
    BOOST_TEST(error_of(r) ==
               "not enough slots: 6 rank(s) asked for, 4 slot(s) on 2 host(s) (n1:2 n2:2); give "
               "more slots or use --oversubscribe");
    r.oversubscribe = false;
    BOOST_TEST(contains(error_of(r), "not enough slots"));
    r.oversubscribe = true;
    auto a = ok(r);  // the slots first, then one more per host in turn
    BOOST_TEST(rank_hosts(a) == (std::vector<std::string>{"n1", "n1", "n2", "n2", "n1", "n2"}),
               boost::test_tools::per_element());
    BOOST_TEST(a.on_host[0] == (std::vector<std::uint32_t>{0, 1, 4}),
               boost::test_tools::per_element());
    r.map_by = "node";
    BOOST_TEST(rank_hosts(ok(r)) == (std::vector<std::string>{"n1", "n2", "n1", "n2", "n1", "n2"}),
               boost::test_tools::per_element());

    // Without hosts there are no slots to exceed; --nooversubscribe changes nothing.
    r = Request{};
    r.np = 64;
    r.oversubscribe = false;
    BOOST_TEST(ok(r).ranks.size() == 64u);
}

BOOST_AUTO_TEST_CASE(max_slots_hold_even_oversubscribed) {
    TempFile f("n1 slots=1 max_slots=2\nn2 slots=1\n");
    Request r;
    r.hostfile = f.path;
    r.np = 5;
    r.oversubscribe = true;
    auto a = ok(r);
    BOOST_TEST(rank_hosts(a) == (std::vector<std::string>{"n1", "n2", "n1", "n2", "n2"}),
               boost::test_tools::per_element());

    TempFile capped("n1 slots=1 max_slots=2\n");
    r.hostfile = capped.path;
    r.np = 3;
    BOOST_TEST(contains(error_of(r), "max_slots allow only 2"));
}

// As mpirun: -H with a hostfile picks hosts of it, with the hostfile's slots, in its order.
BOOST_AUTO_TEST_CASE(host_list_picks_hosts_of_the_hostfile) {
    TempFile f("n1 slots=2\nn2 slots=3\nn3 slots=1\n");
    Request r;
    r.hostfile = f.path;
    r.host_lists = {"n3,n1"};
    const auto a = ok(r);
    BOOST_TEST(rank_hosts(a) == (std::vector<std::string>{"n1", "n1", "n3"}),
               boost::test_tools::per_element());
    r.host_lists = {"n2,n9"};
    BOOST_TEST(contains(error_of(r), "host n9 given by -H is not in the hostfile"));
}

BOOST_AUTO_TEST_CASE(hosts_come_from_one_place) {
    Request r;
    r.host_lists = {"n1", "n1:x"};
    BOOST_TEST(contains(error_of(r), "'n1:x'"));
}

BOOST_AUTO_TEST_CASE(this_host) {
    BOOST_TEST(is_this_host("localhost", "vm"));
    BOOST_TEST(is_this_host("127.0.0.1", "vm"));
    BOOST_TEST(is_this_host("vm", "vm"));
    BOOST_TEST(is_this_host("vm.cluster", "vm"));
    BOOST_TEST(is_this_host("vm", "vm.cluster"));
    BOOST_TEST(!is_this_host("vm2", "vm"));
    BOOST_TEST(!is_this_host("n1", "vm"));
    BOOST_TEST(!is_this_host("10.0.0.2", "10.0.0.1"));
    BOOST_TEST(!is_this_host("", "vm"));
}

// What a spawned job gets: the hosts with what is left of their slots (0 where none is).
BOOST_AUTO_TEST_CASE(map_onto_what_is_left) {
    Request r;
    r.np = 3;
    auto a = map_onto({{"n1", 0, {}}, {"n2", 2, {}}, {"n3", 1, {}}}, r);
    BOOST_REQUIRE_MESSAGE(a, a.error);
    BOOST_TEST(rank_hosts(a.value) == (std::vector<std::string>{"n2", "n2", "n3"}),
               boost::test_tools::per_element());
    r.np = 4;
    a = map_onto({{"n1", 0, {}}, {"n2", 2, {}}, {"n3", 1, {}}}, r);
    BOOST_TEST(!a);
    BOOST_TEST(contains(a.error, "oversubscribe"), a.error);
    r.oversubscribe = true;
    r.map_by = "node";
    a = map_onto({{"n1", 0, {}}, {"n2", 1, {}}}, r);
    BOOST_REQUIRE_MESSAGE(a, a.error);
    BOOST_TEST(rank_hosts(a.value) == (std::vector<std::string>{"n2", "n1", "n2", "n1"}),
               boost::test_tools::per_element());
}
