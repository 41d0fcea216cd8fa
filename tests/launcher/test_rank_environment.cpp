#define BOOST_TEST_MODULE rank_environment
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <hwloc.h>

#include "actors/launcher/personality.hpp"
#include "actors/launcher/placement.hpp"
#include "actors/launcher/rank_environment.hpp"
#include "support/process.hpp"

using namespace zpmix;

namespace {

// The value of NAME in an environment, or nullopt.
std::optional<std::string> get(const std::vector<std::string> &env, const std::string &name) {
    for (const auto &kv : env)
        if (kv.starts_with(name + "=")) return kv.substr(name.size() + 1);
    return std::nullopt;
}

const char *const kInherited[] = {"HOME=/home/u",
                                  "PATH=/usr/bin",
                                  "FOO=inherited",
                                  "ZPMIX_URI=ipc:///other/broker.sock",
                                  "ZPMIX_SECRET=othersecret",
                                  "PMIX_NAMESPACE=other.1",
                                  "PMIX_RANK=7",
                                  "PMIX_SERVER_URI=kept",
                                  "NOEQUALS",
                                  "=nameless",
                                  nullptr};
msg::App app_of(std::string cmd, std::vector<std::string> argv, std::string prefix) {
    msg::App app;
    app.cmd = std::move(cmd);
    app.argv = std::move(argv);
    app.prefix = std::move(prefix);
    return app;
}

const std::vector<std::string> kClient =
    client_variables("ipc:///run/broker.sock", "s3cret", 1234, 5678, "zpmix.1.2");

}  // namespace

BOOST_AUTO_TEST_CASE(another_jobs_variables_are_stripped_and_the_clients_set) {
    const auto env = rank_environment(kInherited, {}, {}, kClient, "", "");
    BOOST_TEST(get(env, "ZPMIX_URI").value_or("") == "ipc:///run/broker.sock");
    BOOST_TEST(get(env, "ZPMIX_SECRET").value_or("") == "s3cret");
    BOOST_TEST(get(env, "ZPMIX_WRITE_TIMEOUT_MS").value_or("") == "1234");
    BOOST_TEST(get(env, "ZPMIX_GROUP_TIMEOUT_MS").value_or("") == "5678");
    BOOST_TEST(get(env, "PMIX_NAMESPACE").value_or("") == "zpmix.1.2");
    BOOST_TEST(get(env, "PMIX_RANK").value_or("") == "0");
    // The rest of the inherited environment is passed on as it is.
    BOOST_TEST(get(env, "HOME").value_or("") == "/home/u");
    BOOST_TEST(get(env, "PATH").value_or("") == "/usr/bin");
    BOOST_TEST(get(env, "PMIX_SERVER_URI").value_or("") == "kept");
    BOOST_TEST(!get(env, "LD_LIBRARY_PATH"));
    BOOST_TEST(!get(env, "OMPI_MCA_schizo"));
    // One entry per name, sorted, none without a name.
    BOOST_TEST(std::is_sorted(env.begin(), env.end()));
    BOOST_TEST(env.size() == 10u);
    for (const auto &kv : env) BOOST_TEST((kv.find('=') != std::string::npos && kv[0] != '='), kv);
}

BOOST_AUTO_TEST_CASE(a_stripped_variable_is_not_inherited_when_the_client_lacks_it) {
    const auto env = rank_environment(kInherited, {}, {}, {}, "", "");
    BOOST_TEST(!get(env, "ZPMIX_URI"));
    BOOST_TEST(!get(env, "ZPMIX_SECRET"));
    BOOST_TEST(!get(env, "PMIX_NAMESPACE"));
    BOOST_TEST(!get(env, "PMIX_RANK"));
}

// -x adds to the job's variables; an app's own (PMIx_Spawn's per-app env) override them, and the
// client variables override both.
BOOST_AUTO_TEST_CASE(job_then_app_then_client_variables_override) {
    const auto env = rank_environment(kInherited, {"FOO=job", "BAR=job", "PMIX_RANK=99"},
                                      {"BAR=app", "BAZ=app"}, kClient, "", "");
    BOOST_TEST(get(env, "FOO").value_or("") == "job");
    BOOST_TEST(get(env, "BAR").value_or("") == "app");
    BOOST_TEST(get(env, "BAZ").value_or("") == "app");
    BOOST_TEST(get(env, "PMIX_RANK").value_or("") == "0");
}

BOOST_AUTO_TEST_CASE(prefix_goes_first_on_path_and_ld_library_path) {
    const auto env = rank_environment(kInherited, {}, {}, kClient, "/opt/x", "");
    BOOST_TEST(get(env, "PATH").value_or("") == "/opt/x/bin:/usr/bin");
    BOOST_TEST(get(env, "LD_LIBRARY_PATH").value_or("") == "/opt/x/lib");
}

BOOST_AUTO_TEST_CASE(ompi_personality_keeps_the_users_settings) {
    const auto env = rank_environment(kInherited, {"LD_LIBRARY_PATH=/mine"},
                                      {"OMPI_MCA_schizo=user"}, kClient, "", "/zpmix/lib");
    BOOST_TEST(get(env, "LD_LIBRARY_PATH").value_or("") == "/zpmix/lib:/mine");
    BOOST_TEST(get(env, "OMPI_MCA_schizo").value_or("") == "user");
    const auto plain = rank_environment(kInherited, {}, {}, kClient, "", "/zpmix/lib");
    BOOST_TEST(get(plain, "OMPI_MCA_schizo").value_or("") == "^orte,slurm");
    BOOST_TEST(get(plain, "OMPI_MCA_ess").value_or("") == "pmi");
    BOOST_TEST(get(plain, "OMPI_MCA_mpi_oversubscribe").value_or("") == "0");
    const auto over = rank_environment(kInherited, {}, {}, kClient, "", "/zpmix/lib", true);
    BOOST_TEST(get(over, "OMPI_MCA_mpi_oversubscribe").value_or("") == "1");
    const auto mine = rank_environment(kInherited, {"OMPI_MCA_mpi_oversubscribe=0"}, {}, kClient,
                                       "", "/zpmix/lib", true);
    BOOST_TEST(get(mine, "OMPI_MCA_mpi_oversubscribe").value_or("") == "0");
}

// psm2 and psm join the installation's exclusions where their devices are absent; an include
// list, the user's own setting and an installation without a parameter file are left alone.
BOOST_AUTO_TEST_CASE(ompi_transports_without_their_device_are_excluded) {
    test::TempDir dir{"zpmix-mtl"};
    const std::string dev = dir.path + "/dev", conf = dir.path + "/site.conf",
                      mine = dir.path + "/mine.conf";
    std::filesystem::create_directories(dev);
    auto write = [](const std::string &file, const std::string &text) {
        std::ofstream(file) << text;
    };
    auto mtl = [&](const std::string &files) {
        std::map<std::string, std::string> env{
            {"OMPI_MCA_mca_base_param_files", "OMPI_MCA_mca_base_param_files=" + files}};
        return personality::mtl_without_absent_devices(env, dev).value_or("(none)");
    };
    write(conf, "# site\nbtl = ^openib\n  mtl =  ^ofi  # no libfabric\n");
    BOOST_TEST(mtl(conf) == "^ofi,psm2,psm");
    BOOST_TEST(mtl(dir.path + "/missing.conf") == "(none)");
    write(mine, "mtl = psm2\n");  // the user's file, first, wins: an include list
    BOOST_TEST(mtl(mine + ":" + conf) == "(none)");
    write(mine, "mtl = ^psm\n");
    BOOST_TEST(mtl(mine + ":" + conf) == "^psm,psm2");
    write(mine, "pml = ob1\n");  // the user's file does not set it: the site's does
    BOOST_TEST(mtl(mine + ":" + conf) == "^ofi,psm2,psm");
    write(conf, "btl = ^openib\n");
    BOOST_TEST(mtl(conf) == "^psm2,psm");
    write(dev + "/hfi1_0", "");
    BOOST_TEST(mtl(conf) == "^psm");
    write(dev + "/ipath", "");
    BOOST_TEST(mtl(conf) == "(none)");

    // In a rank's environment: the user's own setting is kept.
    const auto user =
        rank_environment(kInherited, {"OMPI_MCA_mtl=psm2"}, {}, kClient, "", "/zpmix/lib");
    BOOST_TEST(get(user, "OMPI_MCA_mtl").value_or("") == "psm2");
}

BOOST_AUTO_TEST_CASE(secrets_are_random_hex) {
    const std::string a = random_secret(), b = random_secret();
    BOOST_TEST(a.size() == 32u);
    BOOST_TEST(a.find_first_not_of("0123456789abcdef") == std::string::npos, a);
    BOOST_TEST(a != b);
}

BOOST_AUTO_TEST_CASE(program_is_looked_up_in_the_prefix_first) {
    test::TempDir dir{"zpmix-renv"};
    std::filesystem::create_directories(dir.path + "/bin");
    const std::string prog = dir.path + "/bin/prog";
    std::ofstream(prog) << "#!/bin/sh\n";
    BOOST_REQUIRE(::chmod(prog.c_str(), 0755) == 0);
    BOOST_TEST(program_of(app_of("prog", {}, dir.path)) == prog);
    BOOST_TEST(program_of(app_of("other", {}, dir.path)) == "other");
    BOOST_TEST(program_of(app_of("", {"prog", "-v"}, dir.path)) == prog);
    BOOST_TEST(program_of(app_of("./prog", {}, dir.path)) == "./prog");
    BOOST_TEST(program_of(app_of("prog", {}, "")) == "prog");
}

BOOST_AUTO_TEST_CASE(an_apps_plan_and_each_ranks_environment) {
    msg::App app = app_of("sh", {}, "");
    app.env = {"APPVAR=1"};
    app.session_cwd = true;
    AppPlan a = plan_app(app, kInherited, {"FOO=job"}, kClient, "/run/ns", false, 1);
    BOOST_TEST(a.cmd == "sh");
    BOOST_TEST(a.argv == std::vector<std::string>{"sh"});
    BOOST_TEST(a.cwd == "/run/ns");
    BOOST_TEST(get(a.env, "APPVAR").value_or("") == "1");
    BOOST_TEST(get(a.env, "FOO").value_or("") == "job");
    BOOST_TEST(!get(a.env, "OMPI_MCA_schizo"));
    BOOST_REQUIRE(a.rank_var < a.env.size());
    set_rank(a, 3);
    BOOST_TEST(a.env[a.rank_var] == "PMIX_RANK=3");
    BOOST_TEST(std::count_if(a.env.begin(), a.env.end(), [](const std::string &kv) {
                   return kv.starts_with("PMIX_RANK=");
               }) == 1);

    msg::App own = app_of("", {"prog", "arg"}, "");
    own.cwd = "/tmp";
    own.session_cwd = true;
    AppPlan b = plan_app(own, kInherited, {}, kClient, "/run/ns", true, 1);
    BOOST_TEST(b.cmd == "prog");
    BOOST_TEST(b.argv == (std::vector<std::string>{"prog", "arg"}));
    BOOST_TEST(b.cwd == "/tmp");
    BOOST_TEST(get(b.env, "OMPI_MCA_schizo").value_or("") == "^orte,slurm");
    BOOST_TEST(get(b.env, "OMPI_MCA_mpi_oversubscribe").value_or("") == "0");
    // More ranks on this node than any machine has CPUs: oversubscribed, as mpirun says.
    msg::App many = app_of("", {"prog"}, "");
    AppPlan c = plan_app(many, kInherited, {}, kClient, "/run/ns", true, 1u << 20);
    BOOST_TEST(get(c.env, "OMPI_MCA_mpi_oversubscribe").value_or("") == "1");
}

// Placement --------------------------------------------------------------------------------------

namespace {

int cores_of_this_machine() {
    hwloc_topology_t t = nullptr;
    BOOST_REQUIRE(hwloc_topology_init(&t) == 0);
    BOOST_REQUIRE(hwloc_topology_load(t) == 0);
    const int n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    hwloc_topology_destroy(t);
    return n;
}

}  // namespace

BOOST_AUTO_TEST_CASE(one_rank_per_core_gets_distinct_cpusets) {
    const int ncores = cores_of_this_machine();
    Placement p;
    std::vector<Placement::Rank> ranks;
    const auto n = static_cast<std::uint32_t>(std::max(ncores, 1));
    BOOST_TEST(p.place("core", "core", n, ranks).empty());
    BOOST_REQUIRE(ranks.size() == n);
    if (ncores <= 0) {  // hwloc sees no core: every rank runs unbound
        for (const auto &r : ranks) BOOST_TEST((!r.set && r.cpuset.empty() && r.locality.empty()));
        return;
    }
    std::set<std::string> cpusets;
    for (const auto &r : ranks) {
        BOOST_REQUIRE(r.set);
        BOOST_TEST(!hwloc_bitmap_iszero(r.set.get()));
        BOOST_TEST(!r.cpuset.empty());
        BOOST_TEST(r.locality.find("CRs") != std::string::npos, r.locality);
        cpusets.insert(r.cpuset);
    }
    BOOST_TEST(cpusets.size() == n);
    for (std::uint32_t i = 0; i < n; ++i)
        for (std::uint32_t j = i + 1; j < n; ++j)
            BOOST_TEST(!hwloc_bitmap_intersects(ranks[i].set.get(), ranks[j].set.get()));
}

// More ranks than cores: they wrap around (oversubscription), rank ncores where rank 0 is.
BOOST_AUTO_TEST_CASE(more_ranks_than_cores_share_cores) {
    const int ncores = cores_of_this_machine();
    if (ncores <= 0) return;
    Placement p;
    std::vector<Placement::Rank> ranks;
    const auto n = static_cast<std::uint32_t>(ncores) + 1;
    BOOST_TEST(p.place("slot", "core", n, ranks).empty());
    BOOST_REQUIRE(ranks.size() == n);
    BOOST_TEST(ranks[n - 1].cpuset == ranks[0].cpuset);
    BOOST_TEST(ranks[n - 1].locality == ranks[0].locality);
}

BOOST_AUTO_TEST_CASE(bind_to_package_covers_the_core) {
    Placement p;
    std::vector<Placement::Rank> core, package;
    BOOST_TEST(p.place("core", "core", 1, core).empty());
    BOOST_TEST(p.place("core", "package", 1, package).empty());
    if (!core[0].set) return;  // no core seen
    BOOST_REQUIRE(package[0].set);
    BOOST_TEST(hwloc_bitmap_isincluded(core[0].set.get(), package[0].set.get()));
}

BOOST_AUTO_TEST_CASE(bind_to_none_leaves_ranks_unbound) {
    Placement p;
    std::vector<Placement::Rank> ranks;
    BOOST_TEST(p.place("core", "none", 3, ranks).empty());
    BOOST_REQUIRE(ranks.size() == 3u);
    for (const auto &r : ranks) BOOST_TEST((!r.set && r.cpuset.empty() && r.locality.empty()));
}

BOOST_AUTO_TEST_CASE(unknown_map_by_or_bind_to_is_an_error) {
    Placement p;
    std::vector<Placement::Rank> ranks;
    BOOST_TEST(p.place("node", "core", 2, ranks) == "unknown --map-by 'node'");
    BOOST_TEST(p.place("core", "l3cache", 2, ranks) == "unknown --bind-to 'l3cache'");
}

// mpirun's other bindings: socket is package; numa and hwthread hold the rank's core (the NUMA
// node around it, one hardware thread inside it).
BOOST_AUTO_TEST_CASE(bind_to_socket_numa_and_hwthread) {
    Placement p;
    std::vector<Placement::Rank> core, socket, package, numa, thread;
    BOOST_TEST(p.place("core", "core", 1, core).empty());
    BOOST_TEST(p.place("core", "socket", 1, socket).empty());
    BOOST_TEST(p.place("core", "package", 1, package).empty());
    BOOST_TEST(p.place("core", "numa", 1, numa).empty());
    BOOST_TEST(p.place("core", "hwthread", 1, thread).empty());
    if (!core[0].set) return;  // no core seen
    BOOST_TEST(socket[0].cpuset == package[0].cpuset);
    BOOST_REQUIRE(numa[0].set);
    BOOST_TEST(hwloc_bitmap_isincluded(core[0].set.get(), numa[0].set.get()));
    BOOST_REQUIRE(thread[0].set);
    BOOST_TEST(hwloc_bitmap_weight(thread[0].set.get()) == 1);
    BOOST_TEST(hwloc_bitmap_isincluded(thread[0].set.get(), core[0].set.get()));
    BOOST_TEST(Placement::binds_to("socket"));
    BOOST_TEST(!Placement::binds_to("board"));
}

// Binding more ranks than the node has cores (hardware threads for hwthread) overloads it.
BOOST_AUTO_TEST_CASE(overloaded_counts_cores) {
    const int ncores = cores_of_this_machine();
    if (ncores <= 0) return;
    Placement p;
    const auto n = static_cast<std::uint32_t>(ncores);
    BOOST_TEST(p.overloaded("core", n).empty());
    BOOST_TEST(p.overloaded("core", n + 1) == std::to_string(ncores) + " cores");
    BOOST_TEST(p.overloaded("package", n + 1) == std::to_string(ncores) + " cores");
    BOOST_TEST(p.overloaded("none", 1000).empty());
    BOOST_TEST(!p.overloaded("hwthread", 1u << 20).empty());
}

// Each binding on a node of two packages (one NUMA node each) of two cores of two hardware
// threads: PUs 0-1 are core 0, 2-3 core 1 (package 0), 4-5 core 2, 6-7 core 3 (package 1).
BOOST_AUTO_TEST_CASE(bindings_on_a_node_of_two_packages) {
    Placement p("pack:2 numa:1 core:2 pu:2");
    auto sets = [&](const std::string &bind_to, std::uint32_t n) {
        std::vector<Placement::Rank> ranks;
        BOOST_TEST(p.place("core", bind_to, n, ranks).empty());
        std::vector<std::string> out;
        for (const auto &r : ranks) out.push_back(r.cpuset);
        return out;
    };
    using V = std::vector<std::string>;
    BOOST_TEST(sets("core", 5) == (V{"0-1", "2-3", "4-5", "6-7", "0-1"}));
    BOOST_TEST(sets("package", 4) == (V{"0-3", "0-3", "4-7", "4-7"}));
    BOOST_TEST(sets("socket", 4) == (V{"0-3", "0-3", "4-7", "4-7"}));
    BOOST_TEST(sets("numa", 4) == (V{"0-3", "0-3", "4-7", "4-7"}));
    // A core's first hardware thread for the first round of ranks, its second for the next.
    BOOST_TEST(sets("hwthread", 8) == (V{"0", "2", "4", "6", "1", "3", "5", "7"}));
    BOOST_TEST(sets("none", 2) == (V{"", ""}));
    BOOST_TEST(p.overloaded("core", 4).empty());
    BOOST_TEST(p.overloaded("core", 5) == "4 cores");
    BOOST_TEST(p.overloaded("socket", 5) == "4 cores");
    BOOST_TEST(p.overloaded("hwthread", 8).empty());
    BOOST_TEST(p.overloaded("hwthread", 9) == "8 hardware threads");
    BOOST_TEST(p.overloaded("none", 9).empty());

    // numa is not package where a package has two NUMA nodes (PUs 0-1 and 2-3).
    Placement two_numa("pack:1 numa:2 core:2 pu:1");
    std::vector<Placement::Rank> ranks;
    BOOST_TEST(two_numa.place("core", "numa", 4, ranks).empty());
    BOOST_TEST(ranks[1].cpuset == "0-1");
    BOOST_TEST(ranks[2].cpuset == "2-3");
    BOOST_TEST(two_numa.place("core", "package", 4, ranks).empty());
    BOOST_TEST(ranks[2].cpuset == "0-3");
}

// What a launch runs: one app of its argv, or its apps, each app's cwd the job's unless its own;
// apps that are no job are refused, saying why.
BOOST_AUTO_TEST_CASE(a_launchs_apps) {
    msg::Launch one;
    one.argv = {"prog", "x"};
    one.np = 3;
    one.cwd = "/w";
    std::string error;
    auto apps = launch_apps(one, error);
    BOOST_REQUIRE(apps.size() == 1u);
    BOOST_TEST(apps[0].cmd == "prog");
    BOOST_TEST(apps[0].argv == (std::vector<std::string>{"prog", "x"}));
    BOOST_TEST(apps[0].np == 3u);
    BOOST_TEST(apps[0].cwd == "/w");

    msg::Launch mpmd;
    mpmd.argv = {"a"};
    mpmd.np = 3;
    mpmd.cwd = "/w";
    mpmd.apps = {app_of("", {"a"}, ""), app_of("", {"b", "y"}, "")};
    mpmd.apps[0].np = 2;
    mpmd.apps[1].np = 1;
    mpmd.apps[1].cwd = "/own";
    apps = launch_apps(mpmd, error);
    BOOST_REQUIRE(apps.size() == 2u);
    BOOST_TEST(apps[0].cmd == "a");
    BOOST_TEST(apps[0].cwd == "/w");
    BOOST_TEST(apps[1].cmd == "b");
    BOOST_TEST(apps[1].cwd == "/own");

    msg::Launch short_of;
    short_of.np = 3;
    short_of.apps = {app_of("", {"a"}, "")};
    short_of.apps[0].np = 2;
    BOOST_TEST(launch_apps(short_of, error).empty());
    BOOST_TEST(error == "the apps' ranks add up to 2, not 3");
    msg::Launch none;
    BOOST_TEST(launch_apps(none, error).empty());
    BOOST_TEST(error == "no program to launch");
    msg::Launch empty_app;
    empty_app.np = 1;
    empty_app.apps = {app_of("", {"a"}, ""), app_of("", {"b"}, "")};
    empty_app.apps[0].np = 1;
    empty_app.apps[1].np = 0;
    BOOST_TEST(launch_apps(empty_app, error).empty());
    BOOST_TEST(error == "app 1 (b) has 0 ranks");
}
