#define BOOST_TEST_MODULE fence_modex
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <set>

#include <pmix_common.h>

#include "actors/fence/segment_store.hpp"
#include "actors/protocol/fence.hpp"
#include "actors/protocol/job.hpp"
#include "actors/protocol/modex.hpp"
#include "actors/protocol/session.hpp"
#include "actors/protocol/shm/fence_board.hpp"
#include "actors/protocol/shm/fence_segment.hpp"
#include "actors/protocol/shm/segment_arena.hpp"
#include "actors/registry/launched_ranks.hpp"
#include "broker/broker.hpp"
#include "support/log_capture.hpp"
#include "support/process.hpp"

// The broker's ModexStore and FenceReducer, driven by raw client sessions over the real ROUTER.
using namespace zpmix;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

constexpr std::uint32_t W = msg::kWildcardRank;

using test::TempDir;  // support/process.hpp

// Registers namespaces with the broker's actors as the launcher would, and tells when every actor
// has handled the registry's word that a namespace or a rank ended (ns.ended, ns.proc_ended, which
// the registry broadcasts on a deregistration or a ProcExit: a second hop).
class Registrar : public Actor {
  public:
    Registrar(Reactor &r, Bus &b, std::vector<msg::JobInfo> jobs) : Actor("registrar", r, b) {
        on(&Registrar::namespace_ended, Access::internal);
        on(&Registrar::proc_ended, Access::internal);
        for (auto &job : jobs) broadcast(msg::RegisterNamespace{std::move(job), "secret"});
    }
    // On the reactor's thread: `then` runs once every actor has handled the end of `nspace`
    // (message type msg::NamespaceEnded::type), or of a rank of it (msg::ProcEnded::type).
    void when(std::string type, std::string nspace, std::function<void()> then) {
        waiting_.emplace(std::pair{std::move(type), std::move(nspace)}, std::move(then));
    }

  private:
    std::multimap<std::pair<std::string, std::string>, std::function<void()>> waiting_;

    // The broadcast queued every actor's delivery at once: what this posts runs after them all.
    void handled(std::string type, const std::string &nspace) {
        auto [from, to] = waiting_.equal_range({std::move(type), nspace});
        for (auto it = from; it != to; ++it) reactor().post(std::move(it->second));
        waiting_.erase(from, to);
    }
    void namespace_ended(const Envelope &env, msg::NamespaceEnded &m) {
        handled(env.type, m.nspace);
    }
    void proc_ended(const Envelope &env, msg::ProcEnded &m) { handled(env.type, m.nspace); }
};

msg::JobInfo job(const std::string &ns, std::uint32_t size, const std::string &session_dir = "") {
    msg::JobInfo j;
    j.nspace = ns;
    j.size = size;
    j.session_tmpdir = session_dir;
    j.procs.resize(size);
    for (std::uint32_t r = 0; r < size; ++r) j.procs[r].rank = r;
    return j;
}

// A client session: a DEALER that said Hello as proc (nspace, rank).
struct Session {
    zmq::context_t ctx;
    zmq::socket_t s{ctx, zmq::socket_type::dealer};
    msg::Proc proc;
    std::uint64_t next_id = 1;
    Session(const std::string &uri, msg::Proc p) : proc(std::move(p)) {
        s.set(zmq::sockopt::linger, 0);
        s.connect(uri);
        msg::Hello h{"client", proc.nspace, proc.rank, ::getpid(), "secret"};
        send(h);
        auto env = recv();
        BOOST_REQUIRE(env);
        BOOST_REQUIRE_EQUAL(env->type, msg::Welcome::type);
    }
    template <class M>
    std::uint64_t send(const M &m) {
        const std::uint64_t id = next_id++;
        s.send(encode(M::type, id, m), zmq::send_flags::none);
        return id;
    }
    std::optional<zmq::message_t> recv_raw(std::chrono::milliseconds timeout = 5000ms) {
        zmq::pollitem_t item{s.handle(), 0, ZMQ_POLLIN, 0};
        if (zmq::poll(&item, 1, timeout) == 0) return std::nullopt;
        zmq::message_t m;
        (void)s.recv(m);
        return m;
    }
    std::optional<Envelope> recv(std::chrono::milliseconds timeout = 5000ms) {
        auto m = recv_raw(timeout);
        if (!m) return std::nullopt;
        return decode(*m);
    }
    template <class M>
    M expect(std::chrono::milliseconds timeout = 5000ms) {
        auto env = recv(timeout);
        BOOST_REQUIRE_MESSAGE(env, "no " << M::type << " in time");
        if (env->type == msg::ErrorReply::type)
            BOOST_FAIL("error " << env->as<msg::ErrorReply>().status << ": "
                                << env->as<msg::ErrorReply>().message);
        BOOST_REQUIRE_EQUAL(env->type, M::type);
        return env->as<M>();
    }
    std::int32_t expect_error(std::chrono::milliseconds timeout = 5000ms) {
        auto env = recv(timeout);
        BOOST_REQUIRE(env);
        BOOST_REQUIRE_EQUAL(env->type, msg::ErrorReply::type);
        return env->as<msg::ErrorReply>().status;
    }
    // Something to await, proving the broker handled everything this session sent before.
    void sync() {
        send(msg::Unpublish{proc, 0, {"sync.no.such.key"}});
        BOOST_REQUIRE_EQUAL(expect_error(), PMIX_ERR_NOT_FOUND);
    }
};

// A blob with one uint32 value per key, as the C binding packs it.
msg::Blob blob(const std::map<std::string, std::uint32_t> &values) {
    msgpack::sbuffer buf;
    msgpack::packer<msgpack::sbuffer> pk(buf);
    pk.pack_map(static_cast<std::uint32_t>(values.size()));
    for (const auto &[k, v] : values) {
        pk.pack(k);
        pk.pack_array(2);
        pk.pack(static_cast<std::uint16_t>(PMIX_UINT32));
        pk.pack(v);
    }
    return msg::Blob(buf.data(), buf.data() + buf.size());
}

msg::FenceContribute contribution(std::vector<msg::Proc> participants, const msg::Proc &me,
                                  bool collect = false, std::uint64_t id = 0,
                                  std::uint32_t timeout_ms = 0) {
    msg::FenceContribute c;
    c.participants = msg::canonical_participants(std::move(participants));
    c.fence_id = id;
    c.collect = collect;
    c.timeout_ms = timeout_ms;
    c.proc = me;
    c.sizes = {{me.nspace, 3}};
    c.done_through = id;  // as a client whose earlier fences over the set are all done
    return c;
}

// Data big enough to go into a fence segment: "card" is `value`, padded to `size` bytes.
msg::Blob big_card(std::uint32_t value, std::size_t size = SegmentStore::kInlineMax + 1) {
    return blob({{"card", value}, {std::string(size, 'k'), value}});
}

bool exists(const std::string &path) {
    return ::access(path.c_str(), F_OK) == 0;
}

// A process's data in a segment: each blob's scope and keys.
std::vector<std::pair<int, std::set<std::string>>> blobs_in(std::string_view data) {
    std::vector<std::pair<int, std::set<std::string>>> out;
    auto h = unpack_bounded(data.data(), data.size());
    for (const auto &b : h.get().via.array) {
        std::set<std::string> keys;
        for (const auto &kv : b.via.array.ptr[1].via.map) keys.insert(kv.key.as<std::string>());
        out.emplace_back(b.via.array.ptr[0].as<int>(), std::move(keys));
    }
    return out;
}

// The segment a FenceDone hands over, wherever it is.
std::shared_ptr<const FenceSegment> open_segment(const msg::FenceDone &done) {
    if (!done.arena.empty())
        return FenceSegment::in_arena(ArenaMapping::open(done.arena), done.arena_offset,
                                      done.arena_length);
    if (!done.segment.empty()) return FenceSegment::open(done.segment);
    return FenceSegment::parse({done.segment_bytes.data(), done.segment_bytes.size()});
}

// The keys of each process in the segment of `done`, by rank.
std::map<std::uint32_t, std::set<std::string>> keys_in(const msg::FenceDone &done) {
    std::map<std::uint32_t, std::set<std::string>> out;
    const auto seg = open_segment(done);
    for (const auto &e : seg->entries())
        for (auto &[scope, keys] : blobs_in(e.data)) out[e.rank].merge(keys);
    return out;
}

// The "card" value of each process in a segment, by rank.
std::map<std::uint32_t, std::uint32_t> cards_in(const FenceSegment &segment) {
    std::map<std::uint32_t, std::uint32_t> out;
    for (const auto &e : segment.entries()) {
        auto h = unpack_bounded(e.data.data(), e.data.size());
        for (const auto &b : h.get().via.array)
            for (const auto &kv : b.via.array.ptr[1].via.map)
                if (kv.key.as<std::string>() == "card")
                    out[e.rank] = kv.val.via.array.ptr[1].as<std::uint32_t>();
    }
    return out;
}

std::size_t files_in(const std::string &dir) {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), {}));
}

// Every session of "ns" contributes to collecting fence 0; each gets the same bytes, returned.
std::string collect_same_answer(std::vector<std::unique_ptr<Session>> &s) {
    for (std::uint32_t r = 0; r < s.size(); ++r)
        s[r]->send(contribution({{"ns", W}}, {"ns", r}, true));
    std::vector<std::string> raw;
    for (auto &p : s) {
        auto m = p->recv_raw();
        BOOST_REQUIRE(m);
        raw.emplace_back(static_cast<const char *>(m->data()), m->size());
    }
    for (const auto &r : raw) BOOST_TEST(r == raw.front());
    return raw.front();
}

struct Fixture {
    TempDir tmp;
    std::string session_dir = tmp.path + "/session";
    Registrar *registrar = nullptr;
    Broker broker{[this] {
        Config c;
        c.run_dir = tmp.path + "/run";
        c.get_timeout_ms = 1500;  // a Get without PMIX_TIMEOUT of data that never comes
        return c;
    }()};
    Fixture() {
        fs::create_directories(session_dir);
        registrar = &broker.add_actor<Registrar>(
            std::vector<msg::JobInfo>{job("ns", 3, session_dir), job("ns2", 3, session_dir),
                                      job("nodir", 3, tmp.path + "/no/such/dir")});
        broker.start();
    }
    void deregister(const std::string &ns) {
        broker.bus().broadcast(
            msg::DeregisterNamespace::type,
            encode(msg::DeregisterNamespace::type, 0, msg::DeregisterNamespace{ns}));
    }
    // Deregisters a namespace as the launcher does, and waits until every actor has handled its
    // end.
    void deregister_everywhere(const std::string &ns) {
        std::promise<void> ended;
        broker.reactor().post([&] {
            registrar->when(msg::NamespaceEnded::type, ns, [&] { ended.set_value(); });
            deregister(ns);
        });
        BOOST_REQUIRE(ended.get_future().wait_for(5s) == std::future_status::ready);
    }
    // Reports a rank's exit as the launcher does, and waits until every actor has handled its end.
    void proc_exit_everywhere(const std::string &ns, std::uint32_t rank) {
        std::promise<void> ended;
        broker.reactor().post([&] {
            registrar->when(msg::ProcEnded::type, ns, [&] { ended.set_value(); });
            proc_exit(ns, rank);
        });
        BOOST_REQUIRE(ended.get_future().wait_for(5s) == std::future_status::ready);
    }
    // Cards of this size make segments of which a set's first arena (kArenaMin) holds five.
    static constexpr std::size_t kFillingCard = 64 * 1024;
    // Three sessions of `ns` whose collecting fences filled their set's arena, rank 2 holding
    // fence 0's region, until fence `id`'s segment found no room there: it is in a file of its
    // own, named `segment`. Every later fence's segment goes to a file while rank 2 holds fence 0.
    std::vector<std::unique_ptr<Session>> fenced(const std::string &ns, std::string &segment,
                                                 std::uint64_t &id) {
        auto s = sessions(ns);
        BOOST_REQUIRE(!arena_fence(s, 0, {0, 0, 0}, 1, kFillingCard).arena.empty());
        for (id = 1; id < 16; ++id) {
            const auto d = arena_fence(s, id, {id, id, 0}, 1, kFillingCard);
            if (d.arena.empty()) {
                BOOST_REQUIRE(d.segment.starts_with(session_dir + "/"));
                segment = d.segment;
                return s;
            }
        }
        BOOST_FAIL("the arena never filled");
        return s;
    }
    // Three sessions of `ns`, each of which committed a big card.
    std::vector<std::unique_ptr<Session>> committed(const std::string &ns) {
        auto s = sessions(ns);
        for (std::uint32_t r = 0; r < 3; ++r) {
            s[r]->send(msg::Commit{{ns, r}, {}, {}, big_card(r)});
            s[r]->expect<msg::Ok>();
        }
        return s;
    }
    // Three sessions of `ns` that committed nothing yet.
    std::vector<std::unique_ptr<Session>> sessions(const std::string &ns = "ns") {
        std::vector<std::unique_ptr<Session>> s;
        for (std::uint32_t r = 0; r < 3; ++r)
            s.push_back(std::make_unique<Session>(broker.uri(), msg::Proc{ns, r}));
        return s;
    }
    // Collecting fence `id` over the sessions' namespace: rank r commits a card of `value` + r
    // (`size` bytes) and contributes saying done_through[r]. Everyone gets the same FenceDone,
    // returned.
    msg::FenceDone arena_fence(std::vector<std::unique_ptr<Session>> &s, std::uint64_t id,
                               std::vector<std::uint64_t> done_through, std::uint32_t value,
                               std::size_t size = SegmentStore::kInlineMax + 1) {
        const std::string ns = s[0]->proc.nspace;
        for (std::uint32_t r = 0; r < 3; ++r) {
            s[r]->send(msg::Commit{{ns, r}, {}, {}, big_card(value + r, size)});
            s[r]->expect<msg::Ok>();
        }
        for (std::uint32_t r = 0; r < 3; ++r) {
            auto c = contribution({{ns, W}}, {ns, r}, true, id);
            c.done_through = done_through[r];
            s[r]->send(c);
        }
        std::vector<msg::FenceDone> done;
        for (auto &p : s) done.push_back(p->expect<msg::FenceDone>());
        for (const auto &d : done) {
            BOOST_REQUIRE(d.status == PMIX_SUCCESS);
            BOOST_REQUIRE(d.arena == done[0].arena && d.segment == done[0].segment);
            BOOST_REQUIRE(d.arena_offset == done[0].arena_offset);
        }
        return done[0];
    }
    ~Fixture() { broker.stop(); }
    void proc_exit(const std::string &ns, std::uint32_t rank) {
        broker.bus().broadcast(msg::ProcExit::type,
                               encode(msg::ProcExit::type, 0, msg::ProcExit{ns, rank, 1, 0, 9}));
    }
    // Registers a namespace with every actor, as the launcher does, and waits until the broker's
    // queue has run past the delivery.
    void register_everywhere(msg::JobInfo j) {
        std::promise<void> settled;
        broker.reactor().post([&] {
            broker.bus().broadcast(msg::RegisterNamespace::type,
                                   encode(msg::RegisterNamespace::type, 0,
                                          msg::RegisterNamespace{std::move(j), "secret"}));
            broker.reactor().post([&] { settled.set_value(); });
        });
        BOOST_REQUIRE(settled.get_future().wait_for(5s) == std::future_status::ready);
    }
};

// A process that is neither this one nor one of its ancestors, until destroyed.
struct Stranger {
    pid_t pid = -1;
    Stranger() {
        char sleep[] = "sleep", forever[] = "600";
        char *argv[] = {sleep, forever, nullptr};
        BOOST_REQUIRE(::posix_spawnp(&pid, "sleep", nullptr, nullptr, argv, environ) == 0);
    }
    ~Stranger() {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
};

}  // namespace

BOOST_AUTO_TEST_CASE(canonical_participants_and_keys) {
    auto a = msg::canonical_participants({{"b", 2}, {"a", 1}, {"b", 2}, {"c", 5}, {"c", W}});
    BOOST_TEST(msg::fence_key(a, 3) == "a:1;b:2;c:*#3");
    BOOST_TEST(msg::fence_key(msg::canonical_participants({{"c", W}, {"b", 2}, {"a", 1}}), 3) ==
               "a:1;b:2;c:*#3");
}

BOOST_FIXTURE_TEST_SUITE(broker_actors, Fixture)

BOOST_AUTO_TEST_CASE(collecting_fence_sends_the_same_bytes_to_everyone) {
    std::vector<std::unique_ptr<Session>> s;
    for (std::uint32_t r = 0; r < 3; ++r)
        s.push_back(std::make_unique<Session>(broker.uri(), msg::Proc{"ns", r}));
    for (std::uint32_t r = 0; r < 3; ++r) {
        msg::Commit c{
            {"ns", r}, blob({{"local", r}}), blob({{"remote", r}}), blob({{"card", 10 + r}})};
        s[r]->send(c);
        s[r]->expect<msg::Ok>();  // a commit with a request id is acknowledged
    }
    const std::string raw = collect_same_answer(s);
    auto done = decode(raw.data(), raw.size()).as<msg::FenceDone>();
    BOOST_TEST(done.status == PMIX_SUCCESS);
    BOOST_TEST(done.key == "ns:*#0");
    // Small: the segment travels in the message.
    BOOST_TEST(done.segment.empty());
    auto seg = FenceSegment::parse({done.segment_bytes.data(), done.segment_bytes.size()});
    BOOST_REQUIRE(seg->entries().size() == 3u);
    for (const auto &e : seg->entries()) {
        // local + global, not remote: every reader is on this node
        auto blobs = blobs_in(e.data);
        BOOST_REQUIRE(blobs.size() == 2u);
        BOOST_TEST(blobs[0].first == PMIX_LOCAL);
        BOOST_TEST(blobs[0].second == std::set<std::string>{"local"});
        BOOST_TEST(blobs[1].first == PMIX_GLOBAL);
        BOOST_TEST(blobs[1].second == std::set<std::string>{"card"});
    }
}

// What a reader gets of a process's data depends on whether it is on the owner's node: LOCAL
// data stays on the node, REMOTE data leaves it, GLOBAL data goes everywhere.
BOOST_AUTO_TEST_CASE(readers_get_the_scopes_meant_for_their_node) {
    msg::JobInfo far = job("far", 2);
    for (auto &p : far.procs) p.hostname = "another-node";
    register_everywhere(far);
    Session here(broker.uri(), {"ns", 0}), owner(broker.uri(), {"far", 0});
    owner.send(
        msg::Commit{{"far", 0}, blob({{"l", 1}}), blob({{"r", 2}}), blob({{"g", 3}, {"g2", 4}})});
    owner.expect<msg::Ok>();
    // A reader on this node, the owner on another.
    here.send(msg::ModexGet{{"far", 0}, "r", 0, {"ns", 0}});
    auto remote = here.expect<msg::ModexData>().data;
    BOOST_TEST((remote.scopes == std::vector<std::uint8_t>{PMIX_REMOTE, PMIX_GLOBAL}));
    BOOST_TEST(
        (remote.blobs == std::vector<msg::Blob>{blob({{"r", 2}}), blob({{"g", 3}, {"g2", 4}})}));
    here.send(msg::ModexGet{{"far", 0}, "l", 0, {"ns", 0}});
    BOOST_TEST(here.expect_error() == PMIX_ERR_NOT_FOUND);
    // A reader on the owner's node.
    here.send(msg::ModexGet{{"far", 0}, "l", 0, {"far", 1}});
    auto local = here.expect<msg::ModexData>().data;
    BOOST_TEST((local.scopes == std::vector<std::uint8_t>{PMIX_LOCAL, PMIX_GLOBAL}));
    here.send(msg::ModexGet{{"far", 0}, "r", 0, {"far", 1}});
    BOOST_TEST(here.expect_error() == PMIX_ERR_NOT_FOUND);
    // A waiting Get is answered by the same rule once the owner commits.
    here.send(msg::ModexGet{{"far", 1}, "l", 0, {"ns", 0}});
    here.sync();
    Session owner1(broker.uri(), {"far", 1});
    owner1.send(msg::Commit{{"far", 1}, blob({{"l", 5}}), {}, {}});
    owner1.expect<msg::Ok>();
    BOOST_TEST(here.expect_error() == PMIX_ERR_NOT_FOUND);
}

// A Get or a fence that names a process that cannot exist fails at once (issue: no call hangs):
// a rank its job does not have, a namespace the broker does not know.
BOOST_AUTO_TEST_CASE(gets_and_fences_of_processes_that_cannot_exist_fail_at_once) {
    Session s(broker.uri(), {"ns", 0});
    s.send(msg::ModexGet{{"nosuch", 0}, "k", 0, {"ns", 0}});
    BOOST_TEST(s.expect_error() == PMIX_ERR_NOT_FOUND);
    s.send(msg::ModexGet{{"ns", 1000}, "k", 0, {"ns", 0}});
    BOOST_TEST(s.expect_error() == PMIX_ERR_BAD_PARAM);
    s.send(contribution({{"nosuch", W}, {"ns", 0}}, {"ns", 0}));
    BOOST_TEST(s.expect_error() == PMIX_ERR_NOT_FOUND);
    s.send(contribution({{"ns", 0}, {"ns", 1000}}, {"ns", 0}));
    BOOST_TEST(s.expect_error() == PMIX_ERR_BAD_PARAM);
    // A rank that exists but has not committed yet is still waited for: until the Get's timeout,
    // or without one, the broker's get_timeout_ms.
    s.send(msg::ModexGet{{"ns", 2}, "k", 200, {"ns", 0}});
    BOOST_TEST(s.expect_error() == PMIX_ERR_TIMEOUT);
    const auto asked = std::chrono::steady_clock::now();
    s.send(msg::ModexGet{{"ns", 2}, "k", 0, {"ns", 0}});
    BOOST_TEST(s.expect_error() == PMIX_ERR_TIMEOUT);
    BOOST_TEST((std::chrono::steady_clock::now() - asked >= 1500ms));
}

// A process may connect only as a rank it is (or descends from): a Hello claiming another
// launched rank opens no session; a session commits and fences only as its own rank.
BOOST_AUTO_TEST_CASE(a_process_may_not_connect_commit_or_fence_as_another_rank) {
    Stranger stranger;
    msg::JobInfo launched = job("pids", 4);
    launched.procs[0].pid = ::getpid();  // us
    launched.procs[1].pid = stranger.pid;
    launched.procs[2].pid = ::getppid();  // we descend from it
    register_everywhere(launched);
    auto refused_hello = [&](std::uint32_t rank) {
        zmq::context_t ctx;
        zmq::socket_t d(ctx, zmq::socket_type::dealer);
        d.set(zmq::sockopt::linger, 0);
        d.connect(broker.uri());
        d.send(encode(msg::Hello::type, 1, msg::Hello{"client", "pids", rank, ::getpid(), ""}),
               zmq::send_flags::none);
        zmq::pollitem_t item{d.handle(), 0, ZMQ_POLLIN, 0};
        BOOST_REQUIRE(zmq::poll(&item, 1, 5000ms) == 1);
        zmq::message_t m;
        (void)d.recv(m);
        const Envelope env = decode(m);
        return env.type == msg::ErrorReply::type &&
               env.as<msg::ErrorReply>().status == PMIX_ERR_NO_PERMISSIONS;
    };
    BOOST_TEST(refused_hello(1));  // the stranger's rank
    // Rank 3 is not spawned yet: another rank of its job (we are rank 0) still may not be it.
    BOOST_TEST(refused_hello(3));
    Session ancestor(broker.uri(), {"pids", 2});  // allowed: we descend from its process
    Session s(broker.uri(), {"pids", 0});
    s.send(msg::Commit{{"pids", 0}, {}, {}, blob({{"card", 0}})});
    s.expect<msg::Ok>();
    s.send(msg::Commit{{"pids", 1}, {}, {}, blob({{"card", 1}})});
    BOOST_TEST(s.expect_error() == PMIX_ERR_NO_PERMISSIONS);
    // The refused commit left nothing behind.
    s.send(msg::ModexGet{{"pids", 1}, "card", 100, {}});
    BOOST_TEST(s.expect_error() == PMIX_ERR_TIMEOUT);
    // Fence contributions: the same rule.
    s.send(contribution({{"pids", 0}, {"pids", 1}}, {"pids", 1}));
    BOOST_TEST(s.expect_error() == PMIX_ERR_NO_PERMISSIONS);
    s.send(contribution({{"pids", 0}, {"pids", 2}}, {"pids", 0}));
    ancestor.send(contribution({{"pids", 0}, {"pids", 2}}, {"pids", 2}));
    BOOST_TEST(s.expect<msg::FenceDone>().status == PMIX_SUCCESS);
    BOOST_TEST(ancestor.expect<msg::FenceDone>().status == PMIX_SUCCESS);
    // The walk up the process tree.
    BOOST_TEST(descends_from(::getpid(), ::getppid()));
    BOOST_TEST(!descends_from(::getpid(), stranger.pid));
}

// A rank can commit before the launcher's report of its pid arrives. A process this broker
// launched that is no reported rank yet is neither allowed nor refused until the next report:
// then a forger is refused and the real rank allowed.
BOOST_AUTO_TEST_CASE(an_unreported_rank_is_judged_once_the_launcher_reports_it) {
    Stranger child;        // spawned by this process, as a rank by the broker's launcher
    NamespaceTable table;  // as the registry keeps it
    table.add(job("early", 3), "", {});
    auto early = [&] { return table.find("early"); };
    LaunchedRanks ranks;
    PeerCredentials sender;
    sender.pid = child.pid;
    using V = LaunchedRanks::Verdict;
    BOOST_TEST((ranks.may_act_as(sender, early().get(), 1) == V::later));
    std::vector<V> retried;
    ranks.after_next_spawn("early",
                           [&] { retried.push_back(ranks.may_act_as(sender, early().get(), 1)); });
    ranks.after_next_spawn("other", [&] { retried.push_back(V::allowed); });
    table.spawned("early", 0, child.pid);  // the child is rank 0: it was forging rank 1
    ranks.spawned("early");
    BOOST_TEST((retried == std::vector<V>{V::refused}));
    BOOST_TEST((ranks.may_act_as(sender, early().get(), 0) == V::allowed));
    // A process this broker did not launch cannot be checked, as before; nor can the broker, nor
    // a namespace it does not know.
    PeerCredentials parent;
    parent.pid = ::getppid();
    BOOST_TEST((ranks.may_act_as(parent, early().get(), 2) == V::allowed));
    PeerCredentials self;
    self.pid = ::getpid();
    BOOST_TEST((ranks.may_act_as(self, early().get(), 2) == V::allowed));
    BOOST_TEST((ranks.may_act_as(sender, nullptr, 2) == V::allowed));
    // A process outside the broker's pid namespace, whose pid the kernel does not give the ipc
    // listener, is refused whatever it claims: nothing about it can be checked. Over tcp the
    // job's secret vouched for it.
    PeerCredentials outside;
    outside.ipc = true;
    BOOST_TEST((ranks.may_act_as(outside, early().get(), 2) == V::refused));
    BOOST_TEST((ranks.may_act_as(outside, early().get(), 0) == V::refused));
    BOOST_TEST((ranks.may_act_as(outside, nullptr, 2) == V::refused));
    PeerCredentials over_tcp;
    over_tcp.tcp = true;
    BOOST_TEST((ranks.may_act_as(over_tcp, early().get(), 2) == V::allowed));
    // What waits is bounded, and goes with its namespace.
    table.add(job("flood", 2), "", {});
    LaunchedRanks flood;
    std::size_t later = 0;
    while (flood.may_act_as(sender, table.find("flood").get(), 1) == V::later && later < 5000) {
        flood.after_next_spawn("flood", [] {});
        ++later;
    }
    BOOST_TEST(later == 1024u);
    BOOST_TEST((flood.may_act_as(sender, table.find("flood").get(), 1) == V::refused));
    bool ran = false;
    flood.after_next_spawn("flood", [&] { ran = true; });
    flood.gone("flood");
    table.remove("flood");
    table.add(job("flood", 2), "", {});
    table.spawned("flood", 0, child.pid);
    flood.spawned("flood");
    BOOST_TEST(!ran);
}

BOOST_AUTO_TEST_CASE(big_collected_data_is_written_once_into_a_segment) {
    std::vector<std::unique_ptr<Session>> s;
    for (std::uint32_t r = 0; r < 3; ++r) {
        s.push_back(std::make_unique<Session>(broker.uri(), msg::Proc{"ns", r}));
        s[r]->send(
            msg::Commit{{"ns", r}, blob({{"local", r}}), blob({{"remote", r}}), big_card(r)});
        s[r]->expect<msg::Ok>();
    }
    const std::string raw = collect_same_answer(s);
    BOOST_TEST(raw.size() < 512u);  // the data is not in the message
    auto done = decode(raw.data(), raw.size()).as<msg::FenceDone>();
    BOOST_TEST(done.status == PMIX_SUCCESS);
    BOOST_TEST(done.segment_bytes.empty());
    BOOST_TEST(done.segment.empty());
    BOOST_REQUIRE(done.arena.starts_with(session_dir + "/"));
    BOOST_TEST(done.arena_offset == 0u);
    // Every participant's local and global data, none of its remote data.
    auto keys = keys_in(done);
    BOOST_REQUIRE(keys.size() == 3u);
    for (std::uint32_t r = 0; r < 3; ++r) {
        BOOST_TEST(keys[r].size() == 3u);
        BOOST_TEST(keys[r].contains("local"));
        BOOST_TEST(keys[r].contains("card"));
        BOOST_TEST(!keys[r].contains("remote"));
    }
}

// A segment the arena had no room for gets a file, removed like a region.
BOOST_AUTO_TEST_CASE(a_segment_goes_once_every_participant_is_done_with_it) {
    std::string first;
    std::uint64_t k;
    auto s = fenced("ns", first, k);
    BOOST_REQUIRE(exists(first));
    // Fence k+1 over the same set, but rank 2 still has fence 0 open (a non-blocking fence whose
    // FenceDone it has not handled): fence k's segment stays.
    const std::string second = arena_fence(s, k + 1, {k + 1, k + 1, 0}, 2, kFillingCard).segment;
    BOOST_REQUIRE(!second.empty());
    BOOST_TEST(second != first);
    s[0]->sync();
    BOOST_TEST(exists(first));
    // A fence over another set does not touch this set's segments.
    for (std::uint32_t r = 0; r < 2; ++r)
        s[r]->send(contribution({{"ns", 0}, {"ns", 1}}, {"ns", r}, false, 7));
    for (std::uint32_t r = 0; r < 2; ++r) s[r]->expect<msg::FenceDone>();
    s[0]->sync();
    BOOST_TEST(exists(first));
    // Fence k+2, everyone done with the fences before it: both go.
    for (std::uint32_t r = 0; r < 3; ++r)
        s[r]->send(contribution({{"ns", W}}, {"ns", r}, false, k + 2));
    for (auto &p : s) BOOST_TEST(p->expect<msg::FenceDone>().segment.empty());
    BOOST_TEST(test::eventually([&] { return !exists(first) && !exists(second); }));
}

BOOST_AUTO_TEST_CASE(a_failed_fence_removes_nothing) {
    std::string first;
    std::uint64_t k;
    auto s = fenced("ns", first, k);
    // Rank 2 never comes to fence k+1, which times out: rank 2 may still be mapping segment k.
    for (std::uint32_t r = 0; r < 2; ++r)
        s[r]->send(contribution({{"ns", W}}, {"ns", r}, false, k + 1, 100));
    for (std::uint32_t r = 0; r < 2; ++r)
        BOOST_TEST(s[r]->expect<msg::FenceDone>().status == PMIX_ERR_TIMEOUT);
    s[0]->sync();
    BOOST_TEST(exists(first));
}

// One arena per participant set: every collecting fence writes into it, and a region is written
// again only once every reader is done with the segment in it. A reader reads fence k's segment
// until fence k+1's replaces it, so it says done_through k in fence k+2.
BOOST_AUTO_TEST_CASE(arena_regions_are_reused_once_every_reader_is_done_with_them) {
    auto s = sessions();
    const std::size_t card = 64 * 1024;  // a 1 MiB arena holds five segments
    const auto first = arena_fence(s, 0, {0, 0, 0}, 100, card);
    BOOST_REQUIRE(!first.arena.empty());
    BOOST_TEST(first.segment.empty());
    const std::size_t files = files_in(session_dir);
    const auto arena = ArenaMapping::open(first.arena);
    bool wrapped = false;
    for (std::uint64_t id = 1; id < 16 && !wrapped; ++id) {
        const auto v = static_cast<std::uint32_t>(100 * id);
        const auto d = arena_fence(s, id, {id - 1, id - 1, id - 1}, v, card);
        BOOST_REQUIRE(d.arena == first.arena);  // never a file, never another arena
        const auto seg = FenceSegment::in_arena(arena, d.arena_offset, d.arena_length);
        BOOST_TEST((cards_in(*seg) ==
                    std::map<std::uint32_t, std::uint32_t>{{0, v}, {1, v + 1}, {2, v + 2}}));
        wrapped = d.arena_offset == 0;
    }
    BOOST_TEST(wrapped);
    BOOST_TEST(files_in(session_dir) == files);
}

// While a reader holds fence 0's segment (its done_through stays 0), the region is never written:
// the ring fills, later segments get files of their own, and fence 0's bytes never change. Once
// the reader lets go, the arena is used again from its start.
BOOST_AUTO_TEST_CASE(a_region_still_read_is_never_rewritten) {
    auto s = sessions();
    const std::size_t card = 64 * 1024;
    const auto first = arena_fence(s, 0, {0, 0, 0}, 7, card);
    const auto held = FenceSegment::in_arena(ArenaMapping::open(first.arena), first.arena_offset,
                                             first.arena_length);
    const auto cards = cards_in(*held);
    BOOST_REQUIRE(cards.size() == 3u);
    std::uint64_t id = 1;
    bool full = false;
    for (; id < 16 && !full; ++id) {
        const auto d = arena_fence(s, id, {id, id, 0}, static_cast<std::uint32_t>(1000 * id), card);
        full = d.arena.empty();
        if (full) BOOST_TEST(keys_in(d).size() == 3u);  // in a file of its own
        BOOST_TEST((cards_in(*held) == cards));
    }
    BOOST_REQUIRE(full);
    const auto d = arena_fence(s, id, {id, id, id}, 5, card);
    BOOST_TEST(d.arena == first.arena);
    BOOST_TEST(d.arena_offset == 0u);
}

// A segment too big for four of it in the arena gets a bigger arena; the outgrown one goes once
// the segments in it are released.
BOOST_AUTO_TEST_CASE(a_bigger_segment_outgrows_the_arena) {
    auto s = sessions();
    const auto small = arena_fence(s, 0, {0, 0, 0}, 1);
    // 3 x 200 KiB, four of which need more than the first arena's 1 MiB; rank 2 holds fence 0.
    const auto big = arena_fence(s, 1, {1, 1, 0}, 2, 200 * 1024);
    BOOST_REQUIRE(!big.arena.empty());
    BOOST_TEST(big.arena != small.arena);
    BOOST_TEST((cards_in(*open_segment(big)) ==
                std::map<std::uint32_t, std::uint32_t>{{0, 2}, {1, 3}, {2, 4}}));
    BOOST_TEST(exists(small.arena));
    arena_fence(s, 2, {2, 2, 2}, 3, 200 * 1024);
    BOOST_TEST(!exists(small.arena));
    BOOST_TEST(exists(big.arena));
}

BOOST_AUTO_TEST_CASE(an_arena_goes_with_the_last_namespace_of_its_set) {
    auto s = sessions("ns2");
    const auto d = arena_fence(s, 0, {0, 0, 0}, 1);
    BOOST_REQUIRE(exists(d.arena));
    deregister("ns2");
    BOOST_TEST(test::eventually([&] { return !exists(d.arena); }));
}

BOOST_AUTO_TEST_CASE(segments_go_with_the_last_namespace_of_their_set) {
    std::string one;
    std::uint64_t k;
    auto s = fenced("ns", one, k);
    // A set of two namespaces, whose segment goes into that set's arena.
    auto t = committed("ns2");
    const std::vector<msg::Proc> both = {{"ns", W}, {"ns2", W}};
    for (std::uint32_t r = 0; r < 3; ++r) {
        s[r]->send(contribution(both, {"ns", r}, true));
        t[r]->send(contribution(both, {"ns2", r}, true));
    }
    msg::FenceDone shared;
    for (auto &p : s) shared = p->expect<msg::FenceDone>();
    for (auto &p : t) BOOST_TEST(p->expect<msg::FenceDone>().arena == shared.arena);
    const std::string two = shared.arena;
    BOOST_REQUIRE(!two.empty());
    BOOST_TEST(open_segment(shared)->entries().size() == 6u);  // ranks 0..2 of two namespaces
    // ns goes: its own set's segment goes; the shared one stays for ns2.
    deregister("ns");
    BOOST_TEST(test::eventually([&] { return !exists(one); }));
    t[0]->sync();
    BOOST_TEST(exists(two));
    deregister("ns2");
    BOOST_TEST(test::eventually([&] { return !exists(two); }));
}

BOOST_AUTO_TEST_CASE(data_goes_inline_when_no_segment_can_be_written) {
    auto s = committed("nodir");
    for (std::uint32_t r = 0; r < 3; ++r)
        s[r]->send(contribution({{"nodir", W}}, {"nodir", r}, true));
    for (auto &p : s) {
        auto done = p->expect<msg::FenceDone>();
        BOOST_TEST(done.status == PMIX_SUCCESS);
        BOOST_TEST(done.segment.empty());
        BOOST_TEST(FenceSegment::parse({done.segment_bytes.data(), done.segment_bytes.size()})
                       ->entries()
                       .size() == 3u);
    }
}

BOOST_AUTO_TEST_CASE(concurrent_fences_over_different_sets_do_not_mix) {
    Session a(broker.uri(), {"ns", 0}), b(broker.uri(), {"ns", 1}), c(broker.uri(), {"ns", 2});
    // {0,1} twice (ids 0 and 1) and {1,2}; contributions interleaved.
    a.send(contribution({{"ns", 0}, {"ns", 1}}, {"ns", 0}, false, 0));
    c.send(contribution({{"ns", 1}, {"ns", 2}}, {"ns", 2}, false, 0));
    a.send(contribution({{"ns", 0}, {"ns", 1}}, {"ns", 0}, false, 1));
    BOOST_TEST(!a.recv(50ms));  // nothing is complete yet
    b.send(contribution({{"ns", 1}, {"ns", 0}}, {"ns", 1}, false, 1));
    BOOST_TEST(a.expect<msg::FenceDone>().key == "ns:0,1#1");
    BOOST_TEST(b.expect<msg::FenceDone>().key == "ns:0,1#1");
    b.send(contribution({{"ns", 2}, {"ns", 1}}, {"ns", 1}, false, 0));
    BOOST_TEST(b.expect<msg::FenceDone>().key == "ns:1,2#0");
    BOOST_TEST(c.expect<msg::FenceDone>().key == "ns:1,2#0");
    b.send(contribution({{"ns", 0}, {"ns", 1}}, {"ns", 1}, false, 0));
    BOOST_TEST(a.expect<msg::FenceDone>().key == "ns:0,1#0");
    BOOST_TEST(b.expect<msg::FenceDone>().key == "ns:0,1#0");
    // Contributing twice, or to a fence one is not part of, is refused.
    a.send(contribution({{"ns", 0}, {"ns", 2}}, {"ns", 0}, false, 5));
    a.send(contribution({{"ns", 0}, {"ns", 2}}, {"ns", 0}, false, 5));
    BOOST_TEST(a.expect_error() == PMIX_ERR_EXISTS);
    a.send(contribution({{"ns", 1}, {"ns", 2}}, {"ns", 0}, false, 9));
    BOOST_TEST(a.expect_error() == PMIX_ERR_BAD_PARAM);
}

BOOST_AUTO_TEST_CASE(fence_times_out_when_a_participant_never_comes) {
    Session a(broker.uri(), {"ns", 0});
    a.send(contribution({{"ns", 0}, {"ns", 1}}, {"ns", 0}, false, 0, 100));
    auto done = a.expect<msg::FenceDone>();
    BOOST_TEST(done.status == PMIX_ERR_TIMEOUT);
}

BOOST_AUTO_TEST_CASE(participant_exit_fails_the_fence_for_the_others) {
    Session a(broker.uri(), {"ns", 0}), b(broker.uri(), {"ns", 1});
    a.send(contribution({{"ns", W}}, {"ns", 0}));
    b.send(contribution({{"ns", W}}, {"ns", 1}));
    b.sync();
    proc_exit("ns", 2);
    BOOST_TEST(a.expect<msg::FenceDone>().status == PMIX_ERR_PROC_TERM_WO_SYNC);
    BOOST_TEST(b.expect<msg::FenceDone>().status == PMIX_ERR_PROC_TERM_WO_SYNC);
    // A later fence that names the dead process fails at once.
    a.send(contribution({{"ns", 0}, {"ns", 2}}, {"ns", 0}, false, 0));
    BOOST_TEST(a.expect<msg::FenceDone>().status == PMIX_ERR_PROC_TERM_WO_SYNC);
}

// A fence naming a job that ended and is gone from the broker fails as it did while that job was
// still registered (PMIX_ERR_PROC_TERM_WO_SYNC): its status does not hang on whether it came before
// or after the job's deregistration. A namespace the broker never knew is PMIX_ERR_NOT_FOUND.
BOOST_AUTO_TEST_CASE(a_fence_naming_a_job_that_ended_and_is_gone_fails_as_ended) {
    Session a(broker.uri(), {"ns", 0});
    deregister_everywhere("ns2");
    a.send(contribution({{"ns", W}, {"ns2", W}}, {"ns", 0}));
    BOOST_TEST(a.expect_error() == PMIX_ERR_PROC_TERM_WO_SYNC);
    a.send(contribution({{"ns", 0}, {"ns2", 1}}, {"ns", 0}));
    BOOST_TEST(a.expect_error() == PMIX_ERR_PROC_TERM_WO_SYNC);
    a.send(contribution({{"ns", W}, {"never", W}}, {"ns", 0}));
    BOOST_TEST(a.expect_error() == PMIX_ERR_NOT_FOUND);
    // Registered again, it is a new job, whose fences wait for its ranks.
    register_everywhere(job("ns2", 3, session_dir));
    a.send(contribution({{"ns", 0}, {"ns2", 1}}, {"ns", 0}, false, 0, 100));
    BOOST_TEST(a.expect<msg::FenceDone>().status == PMIX_ERR_TIMEOUT);
}

BOOST_AUTO_TEST_CASE(direct_modex_waits_for_the_commit) {
    Session a(broker.uri(), {"ns", 0}), b(broker.uri(), {"ns", 1});
    a.send(msg::ModexGet{{"ns", 1}, "card", 0, {}});
    a.sync();  // the Get is registered before b commits
    b.send(msg::Commit{{"ns", 1}, {}, {}, blob({{"card", 7}})});
    auto data = a.expect<msg::ModexData>();
    BOOST_TEST(data.data.proc.rank == 1u);
    BOOST_REQUIRE(data.data.blobs.size() == 1u);
    BOOST_TEST((data.data.blobs[0] == blob({{"card", 7}})));
    // Committed, but without the key: not found at once.
    a.send(msg::ModexGet{{"ns", 1}, "other", 0, {}});
    BOOST_TEST(a.expect_error() == PMIX_ERR_NOT_FOUND);
    // Never committed: the timeout, or the owner's exit, ends the wait.
    a.send(msg::ModexGet{{"ns", 2}, "card", 100, {}});
    BOOST_TEST(a.expect_error() == PMIX_ERR_TIMEOUT);
    a.send(msg::ModexGet{{"ns", 2}, "card", 0, {}});
    a.sync();
    proc_exit("ns", 2);
    BOOST_TEST(a.expect_error() == PMIX_ERR_NOT_FOUND);
}

BOOST_AUTO_TEST_CASE(a_deregistered_namespace_leaves_nothing_behind) {
    Session a(broker.uri(), {"ns", 0});
    a.send(msg::Commit{{"ns", 0}, {}, {}, blob({{"card", 1}})});
    a.expect<msg::Ok>();
    deregister_everywhere("ns");
    // The namespace's sessions ended with it.
    a.send(msg::ModexGet{{"ns", 0}, "card", 100, {}});
    BOOST_TEST(a.expect_error() == PMIX_ERR_NO_PERMISSIONS);
    // A new job of the same name finds none of the old one's data.
    register_everywhere(job("ns", 3, session_dir));
    Session b(broker.uri(), {"ns", 1});
    b.send(msg::ModexGet{{"ns", 0}, "card", 100, {}});
    BOOST_TEST(b.expect_error() == PMIX_ERR_TIMEOUT);
}

BOOST_AUTO_TEST_CASE(publish_lookup_unpublish) {
    Session a(broker.uri(), {"ns", 0}), b(broker.uri(), {"ns", 1});
    msg::Lookup wait{{"ns", 1}, PMIX_RANGE_SESSION, {"svc"}, true, 0};
    b.send(wait);
    b.sync();
    a.send(msg::Publish{{"ns", 0}, PMIX_RANGE_SESSION, PMIX_PERSIST_SESSION, blob({{"svc", 5}})});
    a.expect<msg::Ok>();
    auto found = b.expect<msg::LookupReply>();
    BOOST_REQUIRE(found.found.size() == 1u);
    BOOST_TEST(found.found[0].publisher.rank == 0u);
    a.send(msg::Publish{{"ns", 0}, PMIX_RANGE_SESSION, PMIX_PERSIST_SESSION, blob({{"svc", 6}})});
    BOOST_TEST(a.expect_error() == PMIX_ERR_DUPLICATE_KEY);
    // Range PROC_LOCAL: only the publisher sees it.
    a.send(
        msg::Publish{{"ns", 0}, PMIX_RANGE_PROC_LOCAL, PMIX_PERSIST_SESSION, blob({{"mine", 1}})});
    a.expect<msg::Ok>();
    b.send(msg::Lookup{{"ns", 1}, PMIX_RANGE_SESSION, {"mine"}, false, 0});
    BOOST_TEST(b.expect_error() == PMIX_ERR_NOT_FOUND);
    // Only the publisher unpublishes.
    b.send(msg::Unpublish{{"ns", 1}, 0, {"svc"}});
    BOOST_TEST(b.expect_error() == PMIX_ERR_NOT_FOUND);
    a.send(msg::Unpublish{{"ns", 0}, 0, {"svc"}});
    a.expect<msg::Ok>();
    b.send(msg::Lookup{{"ns", 1}, PMIX_RANGE_SESSION, {"svc"}, true, 100});
    BOOST_TEST(b.expect_error() == PMIX_ERR_TIMEOUT);
}

BOOST_AUTO_TEST_CASE(malformed_commit_is_refused_and_the_broker_keeps_serving) {
    Session a(broker.uri(), {"ns", 0});
    msg::Commit bad{{"ns", 0}, {}, {}, msg::Blob{'\x93', '\x01'}};  // a truncated array
    a.send(bad);
    BOOST_TEST(a.expect_error() == PMIX_ERR_BAD_PARAM);
    a.send(msg::Commit{{"ns", 0}, {}, {}, blob({{"ok", 1}})});
    a.expect<msg::Ok>();
}

// A job on its fence board: the reducer fails the fences a rank that ended had not arrived at, and
// refuses a whole-namespace contribution by message (its ranks fence on the board: this is a
// process that does not), failing the board's fences so that no rank waits for that process.
BOOST_AUTO_TEST_CASE(a_board_jobs_fences_fail_when_a_rank_ends_or_fences_by_message) {
    const std::string path = session_dir + "/fence-board";
    BOOST_REQUIRE_EQUAL(FenceBoard::create(path, 3), "");
    msg::JobInfo j = job("bd", 3, session_dir);
    j.fence_board = path;
    register_everywhere(j);
    std::string error;
    auto board = FenceBoard::open(path, error);
    BOOST_REQUIRE(board);
    auto alive = [] { return true; };
    auto deadline = [] { return FenceBoard::Clock::now() + 5s; };
    for (std::uint32_t r = 0; r < 3; ++r) BOOST_TEST(board->arrive(r, 0) == PMIX_SUCCESS);
    BOOST_TEST(board->arrive(2, 1) == PMIX_SUCCESS);
    proc_exit("bd", 2);  // after arriving at fence 1: that fence completes without it
    BOOST_TEST(board->arrive(0, 1) == PMIX_SUCCESS);
    BOOST_TEST(board->arrive(1, 1) == PMIX_SUCCESS);
    BOOST_TEST(board->wait(1, deadline(), alive) == PMIX_SUCCESS);
    BOOST_TEST(board->arrive(0, 2) == PMIX_SUCCESS);
    BOOST_TEST(board->wait(2, deadline(), alive) == PMIX_ERR_PROC_TERM_WO_SYNC);

    const std::string path2 = session_dir + "/fence-board-2";
    BOOST_REQUIRE_EQUAL(FenceBoard::create(path2, 3), "");
    msg::JobInfo j2 = job("bd2", 3, session_dir);
    j2.fence_board = path2;
    register_everywhere(j2);
    auto board2 = FenceBoard::open(path2, error);
    BOOST_REQUIRE(board2);
    BOOST_TEST(board2->arrive(0, 0) == PMIX_SUCCESS);
    Session stray(broker.uri(), {"bd2", 1});
    stray.send(contribution({{"bd2", W}}, {"bd2", 1}));
    BOOST_TEST(stray.expect_error() == PMIX_ERR_NOT_SUPPORTED);
    BOOST_TEST(board2->wait(0, deadline(), alive) == PMIX_ERR_NOT_SUPPORTED);
    // Its fences over other sets still go through the reducer.
    Session a(broker.uri(), {"bd2", 0});
    a.send(contribution({{"bd2", 0}, {"bd2", 1}}, {"bd2", 0}));
    stray.send(contribution({{"bd2", 0}, {"bd2", 1}}, {"bd2", 1}));
    BOOST_TEST(a.expect<msg::FenceDone>().status == PMIX_SUCCESS);
}

// A reader that saw the owner's second commit counted (on a fence board) is answered from that
// commit, even while the broker still holds only the first; an empty key asks for all of it.
BOOST_AUTO_TEST_CASE(direct_modex_waits_for_the_commits_the_reader_saw) {
    Session a(broker.uri(), {"ns", 0}), b(broker.uri(), {"ns", 1});
    b.send(msg::Commit{{"ns", 1}, {}, {}, blob({{"card", 1}})});
    b.expect<msg::Ok>();
    a.send(msg::ModexGet{{"ns", 1}, "card", 0, {}, 2});
    a.send(msg::ModexGet{{"ns", 1}, "", 0, {}, 1});
    auto first = a.expect<msg::ModexData>();  // the second Get: one commit is enough
    BOOST_REQUIRE(first.data.blobs.size() == 1u);
    BOOST_TEST((first.data.blobs[0] == blob({{"card", 1}})));
    b.send(msg::Commit{{"ns", 1}, {}, {}, blob({{"card", 2}})});
    auto second = a.expect<msg::ModexData>();
    BOOST_REQUIRE(second.data.blobs.size() == 1u);
    BOOST_TEST((second.data.blobs[0] == blob({{"card", 2}})));
    // An owner that ends before that commit: not found.
    a.send(msg::ModexGet{{"ns", 1}, "card", 0, {}, 3});
    a.sync();
    proc_exit("ns", 1);
    BOOST_TEST(a.expect_error() == PMIX_ERR_NOT_FOUND);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_CASE(a_stopping_broker_removes_its_segments_and_arenas) {
    std::string segment, arena;
    {
        Fixture f;
        std::uint64_t k;
        auto s = f.fenced("ns", segment, k);
        BOOST_REQUIRE(exists(segment));
        auto t = f.sessions("ns2");
        arena = f.arena_fence(t, 0, {0, 0, 0}, 1).arena;
        BOOST_REQUIRE(exists(arena));
    }
    BOOST_TEST(!exists(segment));
    BOOST_TEST(!exists(arena));
}

// A job's board the launcher removed (its ranks here all ended) when a rank's end reaches the
// reducer is no one's to mark, and nothing to report: the reducer opens it without looking first,
// as the file may go between a look and the open. A board that is there but is no board is still
// reported.
BOOST_AUTO_TEST_CASE(a_board_gone_when_a_rank_ends_is_not_an_error) {
    const auto log = test::capture_log();  // before the broker's actors clone the logger
    Fixture f;
    const std::string dir = f.session_dir + "/gone";
    fs::create_directories(dir);
    BOOST_REQUIRE_EQUAL(FenceBoard::create(dir + "/fence-board", 3), "");
    msg::JobInfo gone = job("gone", 3, f.session_dir);
    gone.fence_board = dir + "/fence-board";
    f.register_everywhere(gone);
    fs::remove_all(dir);  // as the launcher does once the job's ranks here are over
    for (std::uint32_t r = 0; r < 3; ++r) f.proc_exit_everywhere("gone", r);
    BOOST_TEST(!log->contains("gone: "));

    const std::string junk = f.session_dir + "/junk";
    { std::ofstream(junk) << "not a board"; }
    msg::JobInfo bad = job("bad", 3, f.session_dir);
    bad.fence_board = junk;
    f.register_everywhere(bad);
    f.proc_exit_everywhere("bad", 0);
    BOOST_TEST(log->contains("bad: " + junk + ": not a fence board"));
}
