#define BOOST_TEST_MODULE fence_tree
#include <boost/test/unit_test.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

#include <pmix_common.h>
#include <msgpack.hpp>

#include "actors/fence/fence_reducer.hpp"
#include "actors/modex/modex_store.hpp"
#include "actors/protocol/shm/fence_segment.hpp"
#include "support/broker_tree.hpp"

// Fences and direct modex across brokers: the real FenceReducer and ModexStore of several brokers
// in one process, joined by tests/support/broker_tree.hpp as the tree link joins them.

using namespace zpmix;
using namespace std::chrono_literals;

namespace {

constexpr auto kWait = 10s;

// A broker tree with the fence and modex actors on every broker.
struct Tree : test::BrokerTree {
    Tree(std::uint32_t size, std::uint32_t radix, std::chrono::milliseconds get_wait = {})
        : BrokerTree(size, radix) {
        for (std::uint32_t r = 0; r < size; ++r) {
            Broker &b = broker(r);
            add<ModexStore>(r, b.namespaces, b.brokers, get_wait);
            add<FenceReducer>(r, b.namespaces, b.brokers);
        }
    }
};

// A process of a job, as a client of its node's broker.
struct Client {
    std::uint32_t broker;
    msg::Proc proc;
    std::uint32_t job_size;
    std::string rid() const { return proc.nspace + ":" + std::to_string(proc.rank); }
};

std::vector<Client> clients(Tree &t, const std::string &nspace,
                            const std::vector<std::uint32_t> &placement) {
    t.add_job(nspace, placement);
    std::vector<Client> out;
    for (std::uint32_t r = 0; r < placement.size(); ++r)
        out.push_back({placement[r], {nspace, r}, static_cast<std::uint32_t>(placement.size())});
    return out;
}

void contribute(Tree &t, const Client &c, const std::vector<msg::Proc> &participants,
                std::uint64_t fence_id, bool collect = false, std::uint32_t timeout_ms = 0) {
    msg::FenceContribute m;
    m.participants = msg::canonical_participants(participants);
    m.fence_id = fence_id;
    m.collect = collect;
    m.timeout_ms = timeout_ms;
    m.proc = c.proc;
    m.sizes = {{c.proc.nspace, c.job_size}};
    t.client_send(c.broker, c.rid(), c.proc, "fence", m, 0);
}

msg::FenceDone done(Tree &t, const Client &c) {
    auto env = t.next(c.broker, c.rid(), kWait);
    BOOST_REQUIRE_MESSAGE(env, c.rid() + " had no answer to its fence");
    BOOST_REQUIRE_EQUAL(env->type, msg::FenceDone::type);
    return env->as<msg::FenceDone>();
}

// Every contributor gets its fence's FenceDone with `status`.
void all_done(Tree &t, const std::vector<Client> &cs, const std::string &key, std::int32_t status) {
    for (const auto &c : cs) {
        const auto d = done(t, c);
        BOOST_TEST(d.key == key);
        BOOST_TEST(d.status == status, c.rid() << " got status " << d.status);
    }
}

// A data blob of one string value under `key` (the client's value codec: key -> [type, value]).
msg::Blob blob(const std::string &key) {
    msgpack::sbuffer buf;
    msgpack::packer<msgpack::sbuffer> pk(buf);
    pk.pack_map(1);
    pk.pack(key);
    pk.pack_array(2);
    pk.pack(static_cast<int>(PMIX_STRING));
    pk.pack(std::string("v"));
    return msg::Blob(buf.data(), buf.data() + buf.size());
}

std::string key_of(const Client &c, const char *scope) {
    return std::string(scope) + "." + c.rid();
}

// c commits "local.<ns>:<rank>", "remote..." and "global..." in those scopes.
void commit(Tree &t, const Client &c) {
    t.client_send(c.broker, c.rid(), c.proc, "modex",
                  msg::Commit{c.proc, blob(key_of(c, "local")), blob(key_of(c, "remote")),
                              blob(key_of(c, "global"))},
                  1);
    auto env = t.next(c.broker, c.rid(), kWait);
    BOOST_REQUIRE(env);
    BOOST_REQUIRE_EQUAL(env->type, msg::Ok::type);
}

using Seen = std::map<msg::Proc, std::set<std::pair<int, std::string>>>;

// What a reader finds in its FenceDone's segment: each proc's keys, with the scope of each.
Seen seen(const msg::FenceDone &d) {
    BOOST_REQUIRE_MESSAGE(!d.segment_bytes.empty(), "no inline segment in " << d.key);
    auto segment =
        FenceSegment::parse(std::string_view(d.segment_bytes.data(), d.segment_bytes.size()));
    Seen out;
    for (const auto &e : segment->entries()) {
        auto &keys = out[msg::Proc{std::string(e.nspace), e.rank}];
        auto handle = msgpack::unpack(e.data.data(), e.data.size());
        for (const auto &pair : handle.get().via.array) {
            const int scope = pair.via.array.ptr[0].as<int>();
            for (const auto &kv : pair.via.array.ptr[1].via.map)
                keys.insert({scope, kv.key.as<std::string>()});
        }
    }
    return out;
}

// What a reader on `node` must see of c's data: local+global on c's node, else remote+global.
std::set<std::pair<int, std::string>> expected_view(const Client &c, std::uint32_t node) {
    if (c.broker == node)
        return {{PMIX_LOCAL, key_of(c, "local")}, {PMIX_GLOBAL, key_of(c, "global")}};
    return {{PMIX_REMOTE, key_of(c, "remote")}, {PMIX_GLOBAL, key_of(c, "global")}};
}

msg::Proc all(const std::string &nspace) {
    return {nspace, msg::kWildcardRank};
}

}  // namespace

// Five brokers, radix 2 (0 -> 1, 2; 1 -> 3, 4): broker 1 hosts no participant and relays.
BOOST_AUTO_TEST_CASE(barrier_over_five_brokers) {
    Tree t(5, 2);
    t.start();
    const auto cs = clients(t, "b", {0, 3, 3, 4, 2});
    for (std::uint64_t id = 1; id <= 3; ++id) {
        for (std::size_t i = 0; i + 1 < cs.size(); ++i) contribute(t, cs[i], {all("b")}, id);
        // One participant (on broker 2) is missing: nobody is through.
        BOOST_TEST(!t.next(cs[0].broker, cs[0].rid(), 50ms));
        contribute(t, cs.back(), {all("b")}, id);
        all_done(t, cs, "b:*#" + std::to_string(id), PMIX_SUCCESS);
    }
}

// Each reader sees the others' data as the standard says: a process on its node with its local
// and global data, one elsewhere with its remote and global data.
BOOST_AUTO_TEST_CASE(collect_scopes) {
    Tree t(3, 2);
    t.start();
    const auto cs = clients(t, "c", {0, 0, 1, 2});
    for (const auto &c : cs) commit(t, c);
    for (const auto &c : cs) contribute(t, c, {all("c")}, 1, true);
    for (const auto &reader : cs) {
        const auto d = done(t, reader);
        BOOST_REQUIRE_EQUAL(d.status, PMIX_SUCCESS);
        const Seen s = seen(d);
        BOOST_TEST(s.size() == cs.size());
        for (const auto &owner : cs) {
            auto it = s.find(owner.proc);
            BOOST_REQUIRE_MESSAGE(it != s.end(), reader.rid() << " lacks " << owner.rid());
            BOOST_TEST((it->second == expected_view(owner, reader.broker)),
                       reader.rid() << " reads " << owner.rid() << " wrongly");
        }
    }
}

// A fence over part of one job and all of another; then one among brokers 1 and 2 only, which
// the root (hosting none of it) relays.
BOOST_AUTO_TEST_CASE(subset_and_two_namespaces) {
    Tree t(3, 2);
    t.start();
    const auto xs = clients(t, "x", {0, 1, 2});
    const auto ys = clients(t, "y", {1, 2});
    for (const auto &c : xs) commit(t, c);
    for (const auto &c : ys) commit(t, c);
    const std::vector<msg::Proc> set{xs[0].proc, xs[2].proc, all("y")};
    const std::vector<Client> in{xs[0], xs[2], ys[0], ys[1]};
    for (const auto &c : in) contribute(t, c, set, 1, true);
    for (const auto &reader : in) {
        const auto d = done(t, reader);
        BOOST_TEST(d.key == "x:0,2;y:*#1");
        BOOST_REQUIRE_EQUAL(d.status, PMIX_SUCCESS);
        const Seen s = seen(d);
        BOOST_TEST(s.size() == in.size());  // not x:1's
        for (const auto &owner : in)
            BOOST_TEST((s.at(owner.proc) == expected_view(owner, reader.broker)));
    }
    BOOST_TEST(!t.next(xs[1].broker, xs[1].rid(), 20ms));

    const std::vector<Client> pair{xs[1], ys[1]};
    for (const auto &c : pair) contribute(t, c, {xs[1].proc, ys[1].proc}, 1, true);
    for (const auto &reader : pair) {
        const auto d = done(t, reader);
        BOOST_REQUIRE_EQUAL(d.status, PMIX_SUCCESS);
        const Seen s = seen(d);
        BOOST_TEST(s.size() == 2u);
        for (const auto &owner : pair)
            BOOST_TEST((s.at(owner.proc) == expected_view(owner, reader.broker)));
    }
}

// A participant that ends before contributing fails the fence on every broker: during the
// fence, and before it began (its broker, which may know nothing of the fence, tells the root).
BOOST_AUTO_TEST_CASE(participant_ends_before_contributing) {
    Tree t(3, 2);
    t.start();
    const auto cs = clients(t, "e", {0, 1, 2, 2});
    for (std::size_t i = 0; i < 3; ++i) contribute(t, cs[i], {all("e")}, 1);
    BOOST_TEST(!t.next(cs[0].broker, cs[0].rid(), 20ms));
    t.end_proc(2, "e", 3);
    all_done(t, {cs[0], cs[1], cs[2]}, "e:*#1", PMIX_ERR_PROC_TERM_WO_SYNC);

    // Rank 1 of f, alone on broker 1, ends while the others wait: its broker, which never heard
    // of the fence, tells the others. A later fence fails too.
    const auto fs = clients(t, "f", {0, 1, 2});
    contribute(t, fs[0], {all("f")}, 1);
    contribute(t, fs[2], {all("f")}, 1);
    BOOST_TEST(!t.next(fs[0].broker, fs[0].rid(), 20ms));
    t.end_proc(1, "f", 1);
    all_done(t, {fs[0], fs[2]}, "f:*#1", PMIX_ERR_PROC_TERM_WO_SYNC);
    contribute(t, fs[0], {all("f")}, 2);
    contribute(t, fs[2], {all("f")}, 2);
    all_done(t, {fs[0], fs[2]}, "f:*#2", PMIX_ERR_PROC_TERM_WO_SYNC);

    // Neither the root nor the ended rank's broker has a contributor: the root still learns it.
    const auto gs = clients(t, "g", {1, 2});
    contribute(t, gs[1], {all("g")}, 1);
    t.end_proc(1, "g", 0);
    all_done(t, {gs[1]}, "g:*#1", PMIX_ERR_PROC_TERM_WO_SYNC);
}

// One broker's contributors give a timeout; the fence fails with it everywhere.
BOOST_AUTO_TEST_CASE(timeout) {
    Tree t(3, 2);
    t.start();
    const auto cs = clients(t, "t", {0, 1, 2, 2});
    contribute(t, cs[0], {all("t")}, 1);
    contribute(t, cs[1], {all("t")}, 1, false, 100);
    contribute(t, cs[2], {all("t")}, 1);  // rank 3 never comes
    all_done(t, {cs[0], cs[1], cs[2]}, "t:*#1", PMIX_ERR_TIMEOUT);
}

// A lost broker fails the fences that wait on it: at its parent (a lost child) and at its
// children (a lost parent).
BOOST_AUTO_TEST_CASE(lost_broker) {
    Tree t(5, 2);
    t.start();
    const auto cs = clients(t, "l", {0, 1, 3, 4});
    contribute(t, cs[0], {all("l")}, 1);
    contribute(t, cs[2], {all("l")}, 1);
    contribute(t, cs[3], {all("l")}, 1);
    BOOST_TEST(!t.next(cs[0].broker, cs[0].rid(), 20ms));
    t.lose(1);  // rank 1's broker: 0 loses a child, 3 and 4 their parent
    all_done(t, {cs[0], cs[2], cs[3]}, "l:*#1", PMIX_ERR_UNREACH);
    // A later fence that needs the lost broker fails at once.
    contribute(t, cs[0], {cs[0].proc, cs[1].proc}, 1);
    BOOST_TEST(done(t, cs[0]).status == PMIX_ERR_UNREACH);
}

// A fence whose participants are all on one broker's node stays on that broker.
BOOST_AUTO_TEST_CASE(node_local_fence_stays_off_the_tree) {
    Tree t(3, 2);
    t.start();
    const auto cs = clients(t, "n", {2, 2});
    for (const auto &c : cs) commit(t, c);
    for (const auto &c : cs) contribute(t, c, {all("n")}, 1, true);
    for (const auto &reader : cs) {
        const auto d = done(t, reader);
        BOOST_REQUIRE_EQUAL(d.status, PMIX_SUCCESS);
        BOOST_TEST(seen(d).size() == 2u);
    }
    BOOST_TEST(t.carried() == 0u);
}

// A lone broker (no tree) fences as it always did.
BOOST_AUTO_TEST_CASE(alone) {
    Tree t(1, 2);
    t.start();
    const auto cs = clients(t, "a", {0, 0, 0});
    for (const auto &c : cs) commit(t, c);
    for (const auto &c : cs) contribute(t, c, {all("a")}, 1, true);
    for (const auto &reader : cs) {
        const auto d = done(t, reader);
        BOOST_REQUIRE_EQUAL(d.status, PMIX_SUCCESS);
        for (const auto &owner : cs)
            BOOST_TEST((seen(d).at(owner.proc) == expected_view(owner, 0)));
    }
    BOOST_TEST(t.carried() == 0u);
}

// Direct modex of a process on another broker's node: relayed to its broker, answered with what
// a reader elsewhere may see, under the reader's own request id.
BOOST_AUTO_TEST_CASE(direct_modex_across_brokers) {
    Tree t(3, 2);
    t.start();
    const auto cs = clients(t, "d", {0, 2, 1});
    const Client &reader = cs[0], &owner = cs[1];
    commit(t, owner);
    auto get = [&](const Client &of, const std::string &key, std::uint64_t id,
                   std::uint32_t timeout_ms = 0) {
        t.client_send(reader.broker, reader.rid(), reader.proc, "modex",
                      msg::ModexGet{of.proc, key, timeout_ms, reader.proc, 0}, id);
        auto env = t.next(reader.broker, reader.rid(), kWait);
        BOOST_REQUIRE_MESSAGE(env, "no answer to a Get");
        BOOST_TEST(env->id == id);
        return *env;
    };
    // Found: remote and global data, not the local.
    auto env = get(owner, key_of(owner, "remote"), 41);
    BOOST_REQUIRE_EQUAL(env.type, msg::ModexData::type);
    const auto data = env.as<msg::ModexData>().data;
    BOOST_TEST((data.proc == owner.proc));
    BOOST_TEST((data.scopes == std::vector<std::uint8_t>{PMIX_REMOTE, PMIX_GLOBAL}));
    BOOST_TEST((data.blobs == std::vector<msg::Blob>{blob(key_of(owner, "remote")),
                                                     blob(key_of(owner, "global"))}));
    // Not found: a key the owner put for its own node only.
    env = get(owner, key_of(owner, "local"), 42);
    BOOST_REQUIRE_EQUAL(env.type, msg::ErrorReply::type);
    BOOST_TEST(env.as<msg::ErrorReply>().status == PMIX_ERR_NOT_FOUND);
    // Not committed yet, bounded by the Get's timeout.
    env = get(cs[2], "", 43, 100);
    BOOST_REQUIRE_EQUAL(env.type, msg::ErrorReply::type);
    BOOST_TEST(env.as<msg::ErrorReply>().status == PMIX_ERR_TIMEOUT);
    // Waiting without a limit for a process whose broker is then lost.
    t.client_send(reader.broker, reader.rid(), reader.proc, "modex",
                  msg::ModexGet{cs[2].proc, "", 0, reader.proc, 0}, 44);
    BOOST_TEST(!t.next(reader.broker, reader.rid(), 20ms));
    t.lose(1);
    env = *t.next(reader.broker, reader.rid(), kWait);
    BOOST_TEST(env.id == 44u);
    BOOST_REQUIRE_EQUAL(env.type, msg::ErrorReply::type);
    BOOST_TEST(env.as<msg::ErrorReply>().status == PMIX_ERR_UNREACH);
}

// A Get that waits on the owner's broker is answered once the owner commits.
BOOST_AUTO_TEST_CASE(direct_modex_waits_for_a_remote_commit) {
    Tree t(2, 2);
    t.start();
    const auto cs = clients(t, "w", {0, 1});
    t.client_send(0, cs[0].rid(), cs[0].proc, "modex",
                  msg::ModexGet{cs[1].proc, key_of(cs[1], "global"), 0, cs[0].proc, 0}, 7);
    BOOST_TEST(!t.next(0, cs[0].rid(), 20ms));
    commit(t, cs[1]);
    auto env = t.next(0, cs[0].rid(), kWait);
    BOOST_REQUIRE(env);
    BOOST_TEST(env->id == 7u);
    BOOST_REQUIRE_EQUAL(env->type, msg::ModexData::type);
    BOOST_TEST((env->as<msg::ModexData>().data.scopes ==
                std::vector<std::uint8_t>{PMIX_REMOTE, PMIX_GLOBAL}));
}

BOOST_AUTO_TEST_CASE(fence_key_participants) {
    const std::vector<msg::Proc> set{{"a", 0}, {"a", 3}, {"b:c", msg::kWildcardRank}};
    const std::string key = msg::fence_key(set, 7);
    BOOST_TEST(key == "a:0,3;b:c:*#7");
    BOOST_TEST((msg::fence_key_participants(key) == set));
    for (const char *bad :
         {"", "#1", "a#1", "a:#1", "a:1,#1", "a:x#1", "a:3,0#1", "a:0;;b:1#1", "a:01#1", "a:*,1#1"})
        BOOST_TEST(!msg::fence_key_participants(bad), bad);
}
