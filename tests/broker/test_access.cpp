#define BOOST_TEST_MODULE access
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include <pmix_common.h>
#include <zmq_addon.hpp>

#include "actors/protocol/events.hpp"
#include "actors/protocol/fence.hpp"
#include "actors/protocol/job.hpp"
#include "actors/protocol/jobctl.hpp"
#include "actors/protocol/modex.hpp"
#include "actors/protocol/query.hpp"
#include "actors/protocol/session.hpp"
#include "actors/runtime/curve_keys.hpp"
#include "actors/runtime/zmq_frames.hpp"
#include "broker/broker.hpp"
#include "support/process.hpp"

// Who may send what: a raw libzmq DEALER, over ipc and over tcp, sends every message type the
// broker's actors handle, first without a Hello, then as a client of another job naming the
// victim job's processes. Each internal, operator and impersonating message is refused with
// PMIX_ERR_NO_PERMISSIONS, and the victim job, fencing beside it, keeps its data.
using namespace zpmix;
using namespace std::chrono_literals;
using zpmix::test::TempDir;

namespace {

constexpr std::uint32_t W = msg::kWildcardRank;

// Registers namespaces with the broker's actors, as the launcher would.
class Registrar : public Actor {
  public:
    Registrar(Reactor &r, Bus &b) : Actor("registrar", r, b) {
        for (const char *ns : {"victim", "other"}) {
            msg::JobInfo j;
            j.nspace = ns;
            j.size = 2;
            j.procs.resize(2);
            for (std::uint32_t r = 0; r < 2; ++r) j.procs[r].rank = r;
            broadcast(msg::RegisterNamespace{std::move(j), std::string(ns) + "-secret"});
        }
    }
};

// Registers a namespace when told (from the test's thread), as the launcher would for a job
// started later; `parent`: a job PMIx_Spawn started.
class LateRegistrar : public Actor {
  public:
    LateRegistrar(Reactor &r, Bus &b) : Actor("late-registrar", r, b) {}
    void add(std::string ns, msg::Proc parent = {}) {
        reactor().post([this, ns = std::move(ns), parent] {
            msg::JobInfo j;
            j.nspace = ns;
            j.size = 2;
            j.procs.resize(2);
            for (std::uint32_t r = 0; r < 2; ++r) j.procs[r].rank = r;
            j.parent = parent;
            broadcast(msg::RegisterNamespace{std::move(j), ns + "-secret"});
        });
    }
};

// A DEALER on the broker's ROUTER; optionally says Hello as a client.
struct Peer {
    zmq::context_t ctx;
    zmq::socket_t s{ctx, zmq::socket_type::dealer};
    std::uint64_t next_id = 1;

    // `tcp_keys`: the broker's keypair ("PUBLIC SECRET"), which tcp needs.
    explicit Peer(const std::string &uri, const std::string &tcp_keys = {}) {
        s.set(zmq::sockopt::linger, 0);
        if (!tcp_keys.empty()) CurveKeypair::parse(tcp_keys)->apply_to_client(s);
        s.connect(uri);
    }
    std::uint64_t send_raw(std::string_view type, const msgpack::sbuffer &body) {
        const std::uint64_t id = next_id++;
        msgpack::sbuffer buf;
        msgpack::packer<msgpack::sbuffer> pk(buf);
        pk.pack_map(4);
        pk.pack("v");
        pk.pack(kProtocolVersion);
        pk.pack("t");
        pk.pack(type);
        pk.pack("id");
        pk.pack(id);
        pk.pack("body");
        buf.write(body.data(), body.size());
        s.send(zmq::buffer(buf.data(), buf.size()), zmq::send_flags::none);
        return id;
    }
    template <class M>
    std::uint64_t send(const M &m) {
        const std::uint64_t id = next_id++;
        s.send(encode(M::type, id, m), zmq::send_flags::none);
        return id;
    }
    std::optional<Envelope> recv(std::chrono::milliseconds timeout = 5000ms) {
        zmq::pollitem_t item{s.handle(), 0, ZMQ_POLLIN, 0};
        if (zmq::poll(&item, 1, timeout) == 0) return std::nullopt;
        zmq::message_t m;
        (void)s.recv(m);
        return decode(m);
    }
    // The first message that `wanted` accepts (others are dropped), or nothing within the timeout.
    template <class Wanted>
    std::optional<Envelope> first(Wanted wanted, std::chrono::milliseconds timeout = 5000ms) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) return std::nullopt;
            auto env = recv(left);
            if (!env || wanted(*env)) return env;
        }
    }
    // The answer to request `id`.
    std::optional<Envelope> answer(std::uint64_t id) {
        return first([id](const Envelope &e) { return e.id == id; });
    }
    // The next message of `type`.
    std::optional<Envelope> next_of(std::string_view type) {
        return first([type](const Envelope &e) { return e.type == type; });
    }
    std::int32_t refusal(std::uint64_t id) {
        auto env = answer(id);
        if (!env) return 1;                           // no answer: not a refusal
        if (env->type == msg::JobControlReply::type)  // job control answers with its own reply
            return env->as<msg::JobControlReply>().status;
        if (env->type != msg::ErrorReply::type) return 0;
        return env->as<msg::ErrorReply>().status;
    }
    void hello(const std::string &nspace, std::uint32_t rank, const std::string &secret) {
        const auto id = send(msg::Hello{"client", nspace, rank, ::getpid(), secret});
        auto env = answer(id);
        BOOST_REQUIRE(env);
        BOOST_REQUIRE_EQUAL(env->type, msg::Welcome::type);
    }
};

// A universal body: every field by which a message names the process it acts for, or the job it
// acts on, names the victim's rank 0 (the reader ignores the fields a type does not have).
msgpack::sbuffer body_naming_the_victim() {
    msgpack::sbuffer buf;
    msgpack::packer<msgpack::sbuffer> pk(buf);
    const msg::Proc v{"victim", 0};
    pk.pack_map(8);
    pk.pack("proc");
    pk.pack(v);
    pk.pack("parent");
    pk.pack(v);
    pk.pack("requester");
    pk.pack(v);
    pk.pack("nspace");
    pk.pack("victim");
    pk.pack("procs");
    pk.pack(std::vector<msg::Proc>{{"victim", W}});
    pk.pack("targets");
    pk.pack(std::vector<msg::Proc>{{"victim", W}});
    pk.pack("participants");
    pk.pack(std::vector<msg::Proc>{{"victim", W}});
    pk.pack("event");
    pk.pack_map(2);
    pk.pack("source");
    pk.pack(v);
    pk.pack("status");
    pk.pack(-1000);
    return buf;
}

msg::Blob card(std::uint32_t value) {
    msgpack::sbuffer buf;
    msgpack::packer<msgpack::sbuffer> pk(buf);
    pk.pack_map(1);
    pk.pack("card");
    pk.pack_array(2);
    pk.pack(static_cast<std::uint16_t>(PMIX_UINT32));
    pk.pack(value);
    return msg::Blob(buf.data(), buf.data() + buf.size());
}

struct Fixture {
    TempDir tmp;
    Broker broker{[this] {
        Config c;
        c.run_dir = tmp.path + "/run";
        c.tcp = "tcp://127.0.0.1:*";
        return c;
    }()};
    std::vector<std::unique_ptr<Peer>> victim;
    std::uint64_t fences = 0;

    LateRegistrar *late = nullptr;

    Fixture() {
        broker.add_actor<Registrar>();
        late = &broker.add_actor<LateRegistrar>();
        broker.start();
        for (std::uint32_t r = 0; r < 2; ++r) {
            victim.push_back(std::make_unique<Peer>(broker.uri()));
            victim[r]->hello("victim", r, "victim-secret");
            victim[r]->send(msg::Commit{{"victim", r}, {}, {}, card(100 + r)});
        }
        victim_fences_and_reads();
    }
    // The victim's ranks fence together and rank 0 reads rank 1's card: correct, and in time.
    void victim_fences_and_reads() {
        const std::uint64_t id = fences++;
        for (std::uint32_t r = 0; r < 2; ++r) {
            msg::FenceContribute c;
            c.participants = {{"victim", W}};
            c.fence_id = id;
            c.proc = {"victim", r};
            c.sizes = {{"victim", 2}};
            c.done_through = id;
            victim[r]->send(c);
        }
        for (auto &p : victim) {
            auto env = p->next_of(msg::FenceDone::type);
            BOOST_REQUIRE_MESSAGE(env, "the victim's fence did not complete");
            BOOST_REQUIRE_EQUAL(env->type, msg::FenceDone::type);
            BOOST_TEST(env->as<msg::FenceDone>().status == PMIX_SUCCESS);
        }
        msg::ModexGet get;
        get.proc = {"victim", 1};
        get.key = "card";
        const auto gid = victim[0]->send(get);
        auto env = victim[0]->answer(gid);
        BOOST_REQUIRE(env);
        BOOST_REQUIRE_EQUAL(env->type, msg::ModexData::type);
        const auto data = env->as<msg::ModexData>().data;
        BOOST_REQUIRE(!data.blobs.empty());
        BOOST_TEST(data.blobs.back() == card(101), "rank 1's card was changed");
    }
    std::vector<std::pair<std::string, Bus::Route>> routes() { return broker.bus().routes(); }
};

// Messages of a session that act for a process (msg::acting_proc), or on the sender's own job:
// from a client of another job that names the victim, each must be refused.
const std::set<std::string> kImpersonating = {
    "modex.commit",
    "modex.publish",
    "modex.lookup",
    "modex.unpublish",
    "fence.contribute",
    "ev.notify",
    "ev.register",
    "ev.ack",
    "ev.notify_completion",
    "mon.request",
    "mon.beat",
    "job.spawn",
    "abort",
    "jctl.request",
    "group.contribute",
    "group.invite",
    "group.join",
    "group.leave",
    "group.leader_answer",
    "iof.pull",
    "iof.push",
    "job.stopped_in_init",
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(who_may_send_what, Fixture)

// Without a Hello, over ipc and over tcp, every type but hello is refused.
BOOST_AUTO_TEST_CASE(a_peer_without_a_session_may_only_say_hello) {
    const auto body = body_naming_the_victim();
    for (const std::string &uri : {broker.uri(), broker.tcp_uri()}) {
        Peer stranger(uri, uri == broker.uri() ? "" : broker.tcp_keys());
        std::size_t tried = 0;
        for (const auto &[type, route] : routes()) {
            if (type == msg::Hello::type) continue;
            ++tried;
            const auto id = stranger.send_raw(type, body);
            BOOST_TEST(stranger.refusal(id) == PMIX_ERR_NO_PERMISSIONS, uri << ": " << type);
        }
        BOOST_TEST(tried > 30u);  // every actor's table was walked
    }
    victim_fences_and_reads();
}

// A client of another job (ipc, then tcp with its own job's secret) may send no internal or
// operator message, and none that acts as the victim's processes.
BOOST_AUTO_TEST_CASE(a_client_of_another_job_cannot_act_on_the_victim) {
    const auto body = body_naming_the_victim();
    for (const std::string &uri : {broker.uri(), broker.tcp_uri()}) {
        Peer intruder(uri, uri == broker.uri() ? "" : broker.tcp_keys());
        intruder.hello("other", 0, "other-secret");
        for (const auto &[type, route] : routes()) {
            if (type == msg::Hello::type) continue;
            const bool must_refuse =
                !allows(route.access, Access::session) || kImpersonating.contains(type);
            const auto id = intruder.send_raw(type, body);
            if (must_refuse)
                BOOST_TEST(intruder.refusal(id) == PMIX_ERR_NO_PERMISSIONS, uri << ": " << type);
        }
        victim_fences_and_reads();
    }
}

// Over tcp a client's secret vouches for its own job only: it reads no other job's data or
// information, and a Hello with a wrong secret or an unknown namespace gets the same answer.
BOOST_AUTO_TEST_CASE(a_tcp_client_reads_only_its_own_job) {
    Peer intruder(broker.tcp_uri(), broker.tcp_keys());
    intruder.hello("other", 0, "other-secret");
    msg::ModexGet get;
    get.proc = {"victim", 1};
    get.key = "card";
    BOOST_TEST(intruder.refusal(intruder.send(get)) == PMIX_ERR_NO_PERMISSIONS);
    BOOST_TEST(intruder.refusal(intruder.send(msg::JobInfoQuery{"victim"})) ==
               PMIX_ERR_NO_PERMISSIONS);
    // Queries: its own namespace only, and nothing of the victim's process table.
    msg::QueryRequest q;
    q.queries.resize(2);
    q.queries[0].keys = {PMIX_QUERY_NAMESPACES};
    q.queries[1].keys = {PMIX_QUERY_PROC_TABLE, PMIX_QUERY_JOB_STATUS};
    q.queries[1].nspace = "victim";
    auto answer = intruder.answer(intruder.send(q));
    BOOST_REQUIRE(answer);
    BOOST_REQUIRE_EQUAL(answer->type, msg::QueryReply::type);
    const auto reply = answer->as<msg::QueryReply>();
    BOOST_REQUIRE_EQUAL(reply.results.size(), 2u);
    BOOST_TEST(reply.results[0].answers.at(0).status == PMIX_SUCCESS);
    const auto &listed = reply.results[0].answers.at(0).value;
    BOOST_TEST(std::string(listed.begin(), listed.end()).find("victim") == std::string::npos);
    BOOST_TEST(reply.results[1].answers.at(0).status == PMIX_ERR_NOT_FOUND);
    BOOST_TEST(reply.results[1].answers.at(1).status == PMIX_ERR_NOT_FOUND);

    Peer guesser(broker.tcp_uri(), broker.tcp_keys());
    auto wrong = guesser.answer(guesser.send(msg::Hello{"client", "victim", 0, 0, "guess"}));
    auto unknown = guesser.answer(guesser.send(msg::Hello{"client", "nosuch", 0, 0, "guess"}));
    BOOST_REQUIRE(wrong && unknown);
    BOOST_REQUIRE_EQUAL(wrong->type, msg::ErrorReply::type);
    BOOST_REQUIRE_EQUAL(unknown->type, msg::ErrorReply::type);
    BOOST_TEST(wrong->as<msg::ErrorReply>().status == PMIX_ERR_NO_PERMISSIONS);
    BOOST_TEST(wrong->as<msg::ErrorReply>().message == unknown->as<msg::ErrorReply>().message);
    BOOST_TEST(wrong->as<msg::ErrorReply>().status == unknown->as<msg::ErrorReply>().status);
    victim_fences_and_reads();
}

// A session is for one Hello: a client cannot turn itself into another by saying Hello again.
BOOST_AUTO_TEST_CASE(a_session_is_opened_once) {
    Peer client(broker.uri());
    client.hello("other", 1, "");
    BOOST_TEST(client.refusal(client.send(msg::Hello{"client", "victim", 0, ::getpid(), ""})) ==
               PMIX_ERR_NO_PERMISSIONS);
    victim_fences_and_reads();
}

// A tool (zpmix ctl, ps, events) may send operator messages, but none that only a job's own
// processes send, and no internal one.
BOOST_AUTO_TEST_CASE(a_tool_is_no_client) {
    const auto body = body_naming_the_victim();
    Peer tool(broker.uri());
    const auto hid = tool.send(msg::Hello{"tool", "", 0, ::getpid(), ""});
    auto welcome = tool.answer(hid);
    BOOST_REQUIRE(welcome);
    BOOST_REQUIRE_EQUAL(welcome->type, msg::Welcome::type);
    for (const auto &[type, route] : routes()) {
        if (type == msg::Hello::type || allows(route.access, Access::operator_)) continue;
        BOOST_TEST(tool.refusal(tool.send_raw(type, body)) == PMIX_ERR_NO_PERMISSIONS, type);
    }
    victim_fences_and_reads();
}

// One PMIx_Notify_event naming a huge custom range (each member a stream to publish, cache and
// relay) neither loses the broker nor holds it from another job: over [events]
// max_custom_range (20,000 processes) it is refused at once with a status and a reason naming
// the limit; at the limit it is published in linear time. The victim job's fence and Get,
// sent right behind it, complete within their deadline each time.
BOOST_AUTO_TEST_CASE(a_huge_custom_range_neither_stalls_nor_loses_the_broker) {
    Peer notifier(broker.uri());
    notifier.hello("other", 0, "other-secret");
    auto notify = [&](std::uint32_t procs) {
        msg::NotifyEvent n;
        n.event.status = -1000;  // PMIX_ERR_BASE - 1000: a user's event code
        n.event.source = {"other", 0};
        n.event.range = static_cast<std::uint8_t>(msg::Range::custom);
        for (std::uint32_t r = 0; r < procs; ++r) n.event.custom_range.push_back({"other", r});
        return notifier.send(n);
    };
    const auto limit = broker.config().event_max_custom_range;
    const auto over = notify(20000);
    const auto t0 = std::chrono::steady_clock::now();
    victim_fences_and_reads();
    BOOST_TEST((std::chrono::steady_clock::now() - t0 < 5s));
    auto refused = notifier.answer(over);
    BOOST_REQUIRE(refused);
    BOOST_REQUIRE_EQUAL(refused->type, msg::ErrorReply::type);
    BOOST_TEST(refused->as<msg::ErrorReply>().status == PMIX_ERR_BAD_PARAM);
    BOOST_TEST(refused->as<msg::ErrorReply>().message.find("max_custom_range") !=
               std::string::npos);

    const auto at = notify(static_cast<std::uint32_t>(limit));
    const auto t1 = std::chrono::steady_clock::now();
    victim_fences_and_reads();
    BOOST_TEST((std::chrono::steady_clock::now() - t1 < 5s));
    auto published = notifier.answer(at);
    BOOST_REQUIRE(published);
    BOOST_TEST(published->type == msg::Ok::type);
}

// tcp takes no frame over 64 KiB (zmtp::kTcpFrameLimit), the handshake's included, so that a
// peer that has not authenticated makes the broker hold little: a message over it comes in
// pieces (send_in_pieces), which the broker rejoins; one frame over it ends the connection.
BOOST_AUTO_TEST_CASE(a_tcp_message_over_64_KiB_comes_in_pieces) {
    msgpack::sbuffer buf;
    msgpack::packer<msgpack::sbuffer> pk(buf);
    pk.pack_map(1);
    pk.pack("big");
    pk.pack_array(2);
    pk.pack(static_cast<std::uint16_t>(PMIX_STRING));
    pk.pack(std::string(std::size_t{4} << 20, 'x'));
    const msg::Blob big(buf.data(), buf.data() + buf.size());
    const msg::Commit commit{{"other", 0}, {}, {}, big};
    Peer pieces(broker.tcp_uri(), broker.tcp_keys());
    pieces.hello("other", 0, "other-secret");
    const zmq::message_t bytes = encode(msg::Commit::type, pieces.next_id++, commit);
    BOOST_REQUIRE(bytes.size() > zmtp::kTcpFrameLimit);
    BOOST_REQUIRE(send_in_pieces(pieces.s, bytes.data(), bytes.size()));
    msg::ModexGet get;
    get.proc = {"other", 0};
    get.key = "big";
    get.commits = 1;
    get.reader = {"other", 0};
    auto env = pieces.answer(pieces.send(get));
    BOOST_REQUIRE(env);
    BOOST_REQUIRE_EQUAL(env->type, msg::ModexData::type);
    const auto data = env->as<msg::ModexData>().data;
    BOOST_REQUIRE(!data.blobs.empty());
    BOOST_TEST((data.blobs.back() == big), "the 4 MiB commit came back changed");

    // Rank 1's commit in one frame: never taken (its connection ends), so its data never comes.
    Peer whole(broker.tcp_uri(), broker.tcp_keys());
    whole.hello("other", 1, "other-secret");
    const zmq::message_t one =
        encode(msg::Commit::type, whole.next_id++, msg::Commit{{"other", 1}, {}, {}, big});
    whole.s.send(zmq::const_buffer(one.data(), one.size()), zmq::send_flags::none);
    get.proc = {"other", 1};
    get.timeout_ms = 1000;
    auto none = pieces.answer(pieces.send(get));
    BOOST_REQUIRE(none);
    BOOST_TEST(none->type == msg::ErrorReply::type, "rank 1's one-frame commit was taken");
    victim_fences_and_reads();
}

// A client (a rank) notifies as itself (Actor::on refuses another source), never the runtime's
// codes beyond its own process, and names only processes of its own or related jobs in a custom
// range (event_rights.hpp): over ipc and over tcp, each forbidden notification is refused with
// PMIX_ERR_NO_PERMISSIONS and reaches no subscriber; a one-way one (id 0) too. What it may send
// goes out. Its cached GLOBAL event is replayed to a job that was there, not to one started later.
BOOST_AUTO_TEST_CASE(a_client_notifies_neither_runtime_events_nor_other_jobs) {
    late->add("kid", {"other", 0});  // a job "other" spawned
    zmq::context_t ctx;
    zmq::socket_t sub(ctx, zmq::socket_type::sub);
    sub.set(zmq::sockopt::linger, 0);
    sub.set(zmq::sockopt::subscribe, "ev/");
    sub.connect(broker.events_uri());
    auto event = [](std::int32_t code, msg::Range range, std::vector<msg::Proc> members = {},
                    msg::Proc source = {"other", 0}) {
        msg::NotifyEvent n;
        n.event.status = code;
        n.event.source = std::move(source);
        n.event.range = static_cast<std::uint8_t>(range);
        n.event.custom_range = std::move(members);
        n.event.affected = {{"victim", 0}};
        return n;
    };
    // The codes published since the last call, up to (and with) `marker`, within a deadline.
    auto seen_until = [&](std::int32_t marker) {
        std::vector<std::int32_t> codes;
        const auto deadline = std::chrono::steady_clock::now() + 5s;
        while (std::chrono::steady_clock::now() < deadline) {
            zmq::pollitem_t item{sub.handle(), 0, ZMQ_POLLIN, 0};
            if (zmq::poll(&item, 1, 100ms) == 0) continue;
            std::vector<zmq::message_t> parts;
            (void)zmq::recv_multipart(sub, std::back_inserter(parts));
            if (parts.size() != 2) continue;
            codes.push_back(decode(parts[1]).as<msg::Event>().status);
            if (codes.back() == marker) break;
        }
        return codes;
    };
    for (const std::string &uri : {broker.uri(), broker.tcp_uri()}) {
        BOOST_TEST_CONTEXT(uri) {
            Peer other(uri, uri == broker.uri() ? "" : broker.tcp_keys());
            other.hello("other", 0, "other-secret");
            // The subscriber is in before anything is asserted: a marker it sees.
            const std::int32_t start = -4100;
            for (int i = 0; i < 50; ++i) {
                other.answer(other.send(event(start, msg::Range::global)));
                auto codes = seen_until(start);
                if (!codes.empty() && codes.back() == start) break;
            }
            for (auto &[what, n] : std::vector<std::pair<std::string, msg::NotifyEvent>>{
                     {"PROC_ABORTED to {victim:*}",
                      event(PMIX_ERR_PROC_ABORTED, msg::Range::custom, {{"victim", W}})},
                     {"PROC_ABORTED to all", event(PMIX_ERR_PROC_ABORTED, msg::Range::global)},
                     {"PROC_TERMINATED to its job",
                      event(PMIX_EVENT_PROC_TERMINATED, msg::Range::nspace)},
                     {"DEBUGGER_RELEASE of the victim",
                      event(PMIX_DEBUGGER_RELEASE, msg::Range::custom, {{"victim", W}})},
                     {"a group's update to itself",
                      event(PMIX_GROUP_MEMBERSHIP_UPDATE, msg::Range::nspace)},
                     {"node down to all", event(PMIX_EVENT_NODE_DOWN, msg::Range::session)},
                     {"a user code to {victim:0}",
                      event(-501, msg::Range::custom, {{"other", 1}, {"victim", 0}})},
                     {"a forged source", event(-501, msg::Range::nspace, {}, {"victim", 0})}}) {
                BOOST_TEST_CONTEXT(what) {
                    BOOST_TEST(other.refusal(other.send(n)) == PMIX_ERR_NO_PERMISSIONS);
                }
            }
            // One-way (request id 0, as libpmix sends what it checked itself): no answer, and
            // nothing published; the allowed ones behind it are.
            auto one_way = [&](msg::NotifyEvent n) {
                other.s.send(encode(msg::NotifyEvent::type, 0, n), zmq::send_flags::none);
            };
            one_way(event(PMIX_ERR_PROC_ABORTED, msg::Range::global));
            one_way(event(PMIX_ERR_PROC_ABORTED, msg::Range::custom, {{"victim", W}}));
            BOOST_TEST(other.refusal(other.send(event(-501, msg::Range::global))) == 0);
            BOOST_TEST(other.refusal(
                           other.send(event(PMIX_JCTRL_CHECKPOINT_COMPLETE, msg::Range::rm))) == 0);
            BOOST_TEST(other.refusal(other.send(
                           event(-502, msg::Range::custom, {{"other", 1}, {"kid", W}}))) == 0);
            const std::int32_t end = -4101;
            BOOST_TEST(other.refusal(other.send(event(end, msg::Range::global))) == 0);
            const auto codes = seen_until(end);
            BOOST_TEST(std::count(codes.begin(), codes.end(), PMIX_ERR_PROC_ABORTED) == 0);
            BOOST_TEST(std::count(codes.begin(), codes.end(), PMIX_DEBUGGER_RELEASE) == 0);
            BOOST_TEST(std::count(codes.begin(), codes.end(), -501) == 1);
            BOOST_TEST(std::count(codes.begin(), codes.end(), -502) >= 1);
            BOOST_TEST(std::count(codes.begin(), codes.end(), end) == 1);
        }
    }
    // Replay: the victim was there when "other" sent -501 to GLOBAL; "later" was not.
    late->add("later");
    auto replayed = [&](const std::string &ns, std::uint32_t rank) {
        Peer p(broker.uri());
        std::uint64_t id = 0;
        for (int i = 0; i < 100; ++i) {  // "later" is registered by the registry's turn
            id = p.send(msg::Hello{"client", ns, rank, ::getpid(), ns + "-secret"});
            auto env = p.answer(id);
            if (env && env->type == msg::Welcome::type) break;
            std::this_thread::sleep_for(10ms);
        }
        auto env = p.answer(p.send(msg::EventRegister{{ns, rank}, "", {"ev/g/j/"}}));
        BOOST_REQUIRE(env);
        BOOST_REQUIRE_EQUAL(env->type, msg::EventRegistered::type);
        std::vector<std::int32_t> codes;
        for (const auto &e : env->as<msg::EventRegistered>().replay) codes.push_back(e.status);
        return codes;
    };
    const auto victims = replayed("victim", 1);
    BOOST_TEST(std::count(victims.begin(), victims.end(), -501) == 2);
    const auto laters = replayed("later", 0);
    BOOST_TEST(std::count(laters.begin(), laters.end(), -501) == 0);
    BOOST_TEST(std::count(laters.begin(), laters.end(), PMIX_ERR_PROC_ABORTED) == 0);
}

BOOST_AUTO_TEST_SUITE_END()
