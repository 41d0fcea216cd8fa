#define BOOST_TEST_MODULE client_session
#include <boost/test/unit_test.hpp>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include <pmix.h>

#include "actors/protocol/fence.hpp"
#include "actors/protocol/modex.hpp"
#include "actors/protocol/shm/fence_segment.hpp"
#include "actors/protocol/shm/segment_arena.hpp"
#include "actors/runtime/zmtp_wire.hpp"
#include "broker/broker.hpp"
#include "client/session.hpp"
#include "client/store.hpp"
#include "support/log_capture.hpp"
#include "support/process.hpp"

// The client session against a real broker: requests, replies, and the broker's death.
using namespace zpmix;
using namespace zpmix::client;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

using test::TempDir;  // support/process.hpp

class Registrar : public Actor {
  public:
    Registrar(Reactor &r, Bus &b, std::vector<msg::JobInfo> jobs, std::string secret = "")
        : Actor("registrar", r, b) {
        for (auto &job : jobs) send("registry", msg::RegisterNamespace{std::move(job), secret});
    }
};

msg::JobInfo two_ranks() {
    msg::JobInfo j;
    j.nspace = "ns";
    j.size = 2;
    j.nodes = {"node0"};
    j.procs.resize(2);
    j.procs[1].rank = 1;
    j.procs[1].local_rank = 1;
    j.procs[0].hostname = j.procs[1].hostname = "node0";
    return j;
}

// Runs a request and waits (bounded) for its outcome.
template <class Msg>
std::pair<pmix_status_t, std::string> ask(Session &a, const Msg &m, std::uint32_t timeout_ms,
                                          std::chrono::seconds limit = 10s) {
    auto p = std::make_shared<std::promise<std::pair<pmix_status_t, std::string>>>();
    auto f = p->get_future();
    a.request(m, timeout_ms, [p](pmix_status_t status, const Envelope *env) {
        p->set_value({status, env ? env->type : ""});
    });
    BOOST_REQUIRE(f.wait_for(limit) == std::future_status::ready);
    return f.get();
}

msg::Hello hello(std::uint32_t rank) {
    return {"client", "ns", rank, ::getpid(), ""};
}

msg::JobInfo another_job() {
    msg::JobInfo j;
    j.nspace = "other";
    j.size = 1;
    j.nodes = {"node0"};
    j.procs.resize(1);
    j.procs[0].hostname = "node0";
    return j;
}

// A started broker with the two-rank namespace "ns" and the one-rank "other" registered (and
// tcp, when given).
struct TwoRankBroker {
    TempDir tmp;
    std::unique_ptr<Broker> broker;
    explicit TwoRankBroker(const std::string &tcp = {}, const std::string &secret = {},
                           int heartbeat_ivl_ms = 5000, int heartbeat_timeout_ms = 30000,
                           int handshake_timeout_ms = 5000) {
        Config c;
        c.run_dir = tmp.path + "/run";
        c.tcp = tcp;
        c.tcp_heartbeat_ivl_ms = heartbeat_ivl_ms;
        c.tcp_heartbeat_timeout_ms = heartbeat_timeout_ms;
        c.tcp_handshake_timeout_ms = handshake_timeout_ms;
        broker = std::make_unique<Broker>(c);
        broker->add_actor<Registrar>(std::vector{two_ranks(), another_job()}, secret);
        broker->start();
    }
};

// A stand-in broker: a ROUTER that answers each fence contribution as the test says.
struct FakeBroker {
    TempDir tmp;
    zmq::context_t ctx;
    zmq::socket_t router{ctx, zmq::socket_type::router};
    std::string uri = "ipc://" + tmp.path + "/fake.sock";
    std::string peer;  // the client's routing id
    FakeBroker() {
        router.set(zmq::sockopt::linger, 0);
        router.bind(uri);
    }
    msg::FenceContribute contribution() {
        zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
        BOOST_REQUIRE(zmq::poll(&item, 1, 5000ms) == 1);
        std::vector<zmq::message_t> frames;
        do {
            frames.emplace_back();
            (void)router.recv(frames.back());
        } while (frames.back().more());
        BOOST_REQUIRE(frames.size() >= 2u);
        peer = frames.front().to_string();
        auto env = decode(frames.back());
        BOOST_REQUIRE_EQUAL(env.type, msg::FenceContribute::type);
        return env.as<msg::FenceContribute>();
    }
    void answer(const msg::FenceDone &done) {
        router.send(zmq::buffer(peer), zmq::send_flags::sndmore);
        router.send(encode(msg::FenceDone::type, 0, done), zmq::send_flags::none);
    }
};

// A stand-in broker that stopped (as under SIGSTOP): it accepts one client and completes the
// handshake, then reads nothing, so the client's socket buffer fills.
struct DeafBroker {
    TempDir tmp;
    std::string path = tmp.path + "/deaf.sock";
    std::string uri = "ipc://" + path;
    int listen_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int fd = -1;
    std::thread acceptor;
    DeafBroker() {
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
        BOOST_REQUIRE(::bind(listen_fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
        BOOST_REQUIRE(::listen(listen_fd, 1) == 0);
        acceptor = std::thread([this] {
            fd = ::accept(listen_fd, nullptr, nullptr);
            char g[zmtp::kGreetingSize];
            zmtp::greeting(g);
            const std::string ready = zmtp::ready("ROUTER");
            unsigned char h[zmtp::kMaxHeader];
            const std::size_t hlen = zmtp::put_header(h, zmtp::kCommand, ready.size());
            std::string out(g, sizeof g);
            out.append(reinterpret_cast<char *>(h), hlen);
            out += ready;
            (void)!::write(fd, out.data(), out.size());
        });
    }
    ~DeafBroker() {
        acceptor.join();
        ::close(fd);
        ::close(listen_fd);
    }
    // Whether the client ended the stream (after what it wrote), within 5 s.
    bool client_closed() {
        acceptor.join();
        acceptor = std::thread([] {});
        char buf[65536];
        pollfd p{fd, POLLIN, 0};
        while (::poll(&p, 1, 5000) == 1) {
            const ssize_t n = ::read(fd, buf, sizeof buf);
            if (n <= 0) return n == 0;
        }
        return false;
    }
};

// Rank 0's contribution to a collecting fence over its whole namespace.
msg::FenceContribute collecting_fence() {
    msg::FenceContribute m;
    m.participants = {{"ns", msg::kWildcardRank}};
    m.collect = true;
    m.proc = {"ns", 0};
    return m;
}

// Rank 0 of "ns" (two ranks) against a FakeBroker, fencing over its namespace with collect.
struct FencingClient {
    FakeBroker fake;
    ClientStore store;
    Session session{rank_0_of_ns(store), fake.uri, 5000};
    msg::FenceContribute m = collecting_fence();

    static ClientStore &rank_0_of_ns(ClientStore &s) {
        s.set_job(two_ranks(), 0);
        return s;
    }
    // Blocking fence `id`, called on another thread.
    std::future<pmix_status_t> fence(std::uint64_t id) {
        m.fence_id = id;
        return std::async(std::launch::async, [this, c = m] { return session.fence_call(c); });
    }
};

}  // namespace

// A FenceDone whose segment is missing, not a segment, or cut short fails that fence with a
// status; the next fence works. Each contribution says which fences the client is done with.
BOOST_FIXTURE_TEST_CASE(a_bad_fence_segment_fails_the_fence_and_nothing_else, FencingClient) {
    auto done = [](std::uint64_t id, std::string segment, msg::Blob bytes = {}) {
        msg::FenceDone d;
        d.key = "ns:*#" + std::to_string(id);
        d.segment = std::move(segment);
        d.segment_bytes = std::move(bytes);
        return d;
    };
    const std::vector<msg::ProcData> data = {
        {{"ns", 1},
         {msg::Blob{'\x81', '\xa4', 'c', 'a', 'r', 'd', '\x92', '\x06', '\x07'}},
         {PMIX_GLOBAL}}};

    auto f = fence(0);
    BOOST_TEST(fake.contribution().done_through == 0u);
    fake.answer(done(0, fake.tmp.path + "/no/such/segment"));
    BOOST_TEST(f.get() == PMIX_ERR_NOT_FOUND);

    const std::string garbage = fake.tmp.path + "/fence.garbage";
    std::ofstream(garbage) << std::string(100, 'x');
    f = fence(1);
    BOOST_TEST(fake.contribution().done_through == 1u);  // fence 0 is over, failed or not
    fake.answer(done(1, garbage));
    BOOST_TEST(f.get() == PMIX_ERR_UNPACK_FAILURE);

    msg::Blob cut = FenceSegmentWriter(data).bytes();
    cut.resize(cut.size() - 1);
    f = fence(2);
    fake.contribution();
    fake.answer(done(2, "", cut));
    BOOST_TEST(f.get() == PMIX_ERR_UNPACK_FAILURE);

    // A non-blocking fence still open holds done_through down for the next one.
    auto nb = std::make_shared<std::promise<pmix_status_t>>();
    m.fence_id = 3;
    session.fence(m, [nb](pmix_status_t s, const Envelope *) { nb->set_value(s); });
    BOOST_TEST(fake.contribution().done_through == 3u);
    f = fence(4);
    BOOST_TEST(fake.contribution().done_through == 3u);
    const std::string good = fake.tmp.path + "/fence.4";
    BOOST_REQUIRE_EQUAL(FenceSegmentWriter(data).write(good), "");
    fake.answer(done(4, good));
    BOOST_TEST(f.get() == PMIX_SUCCESS);
    ::unlink(good.c_str());  // mapped already
    pmix_value_t *v = nullptr;
    BOOST_REQUIRE(store.get("ns", 1, "card", &v) == PMIX_SUCCESS);
    BOOST_TEST(v->type == PMIX_INT);
    BOOST_TEST(v->data.integer == 7);
    PMIX_VALUE_RELEASE(v);
    fake.answer(done(3, "", FenceSegmentWriter(data).bytes()));
    BOOST_REQUIRE(nb->get_future().wait_for(5s) == std::future_status::ready);
    f = fence(5);
    BOOST_TEST(fake.contribution().done_through == 5u);
    fake.answer(done(5, ""));
    BOOST_TEST(f.get() == PMIX_SUCCESS);
}

// A segment in an arena is read where it is. Its region is held (done_through) while the store
// may still read it: until a later segment replaces its data, or its data is read. A region
// outside the arena, or an arena that is not there, fails that fence.
BOOST_FIXTURE_TEST_CASE(an_arena_segment_is_held_until_the_store_is_done_with_it, FencingClient) {
    std::string error;
    auto arena = SegmentArena::create(fake.tmp.path + "/arena.1", 1 << 20, error);
    BOOST_REQUIRE_MESSAGE(arena, error);
    auto done = [](std::uint64_t id) {
        msg::FenceDone d;
        d.key = "ns:*#" + std::to_string(id);
        return d;
    };
    // Fence `id`'s FenceDone, with rank 1's card of `value` written into the arena.
    auto in_arena = [&](std::uint64_t id, char value) {
        const std::vector<msg::ProcData> data = {
            {{"ns", 1},
             {msg::Blob{'\x81', '\xa4', 'c', 'a', 'r', 'd', '\x92', '\x06', value}},
             {PMIX_GLOBAL}}};
        const FenceSegmentWriter segment(data);
        auto at = arena->place(id, segment);
        BOOST_REQUIRE(at);
        msg::FenceDone d = done(id);
        d.arena = arena->path();
        d.arena_offset = *at;
        d.arena_length = segment.size();
        return d;
    };
    auto card = [&] {
        pmix_value_t *v = nullptr;
        BOOST_REQUIRE(store.get("ns", 1, "card", &v) == PMIX_SUCCESS);
        const int value = v->data.integer;
        PMIX_VALUE_RELEASE(v);
        return value;
    };

    auto f = fence(0);
    BOOST_TEST(fake.contribution().done_through == 0u);
    fake.answer(in_arena(0, 7));
    BOOST_TEST(f.get() == PMIX_SUCCESS);
    // A barrier leaves fence 0's data unread: its region is still held.
    f = fence(1);
    BOOST_TEST(fake.contribution().done_through == 0u);
    fake.answer(done(1));
    BOOST_TEST(f.get() == PMIX_SUCCESS);
    // Fence 2's segment replaces it...
    f = fence(2);
    BOOST_TEST(fake.contribution().done_through == 0u);
    fake.answer(in_arena(2, 8));
    BOOST_TEST(f.get() == PMIX_SUCCESS);
    // ... and once read, fence 2's is not needed either.
    BOOST_TEST(card() == 8);
    f = fence(3);
    BOOST_TEST(fake.contribution().done_through == 3u);
    msg::FenceDone outside = in_arena(3, 9);
    outside.arena_offset = arena->size() - 8;
    fake.answer(outside);
    BOOST_TEST(f.get() == PMIX_ERR_UNPACK_FAILURE);
    f = fence(4);
    fake.contribution();
    msg::FenceDone gone = in_arena(4, 9);
    gone.arena = fake.tmp.path + "/no/such/arena";
    fake.answer(gone);
    BOOST_TEST(f.get() == PMIX_ERR_NOT_FOUND);
    BOOST_TEST(card() == 8);
}

BOOST_AUTO_TEST_CASE(requests_are_answered_and_the_brokers_end_fails_pending_ones) {
    TwoRankBroker b;
    Broker &broker = *b.broker;
    ClientStore store;
    Session session(store, broker.uri(), 5000);
    auto [status, type] = ask(session, hello(0), 5000);
    BOOST_TEST(status == PMIX_SUCCESS);
    BOOST_TEST(type == msg::Welcome::type);
    // An error reply carries its status, to a blocking call as to a callback.
    BOOST_TEST(ask(session, msg::ModexGet{{"ns", msg::kWildcardRank}, "k", 0, {}}, 0).first ==
               PMIX_ERR_BAD_PARAM);
    BOOST_TEST(session.call(msg::ModexGet{{"ns", msg::kWildcardRank}, "k", 0, {}}, 0).status ==
               PMIX_ERR_BAD_PARAM);
    // The client's own timeout.
    BOOST_TEST(ask(session, msg::ModexGet{{"ns", 1}, "k", 0, {}}, 100).first == PMIX_ERR_TIMEOUT);
    BOOST_TEST(session.call(msg::ModexGet{{"ns", 1}, "k", 0, {}}, 100).status == PMIX_ERR_TIMEOUT);
    // A Get that waits for ever, then the broker goes away.
    auto p = std::make_shared<std::promise<pmix_status_t>>();
    auto f = p->get_future();
    session.request(msg::ModexGet{{"ns", 1}, "k", 0, {}}, 0,
                    [p](pmix_status_t s, const Envelope *) { p->set_value(s); });
    BOOST_TEST((f.wait_for(50ms) == std::future_status::timeout));  // really waiting
    broker.stop();
    BOOST_REQUIRE(f.wait_for(10s) == std::future_status::ready);
    BOOST_TEST(f.get() == PMIX_ERR_LOST_CONNECTION);
    // And every later request fails at once.
    BOOST_TEST(ask(session, msg::ModexGet{{"ns", 1}, "k", 0, {}}, 0).first ==
               PMIX_ERR_LOST_CONNECTION);
    BOOST_TEST(session.call(msg::ModexGet{{"ns", 1}, "k", 0, {}}, 0).status ==
               PMIX_ERR_LOST_CONNECTION);
}

// A broker that stops answers what it holds, closes the request connection, then the event
// stream. A client that sees the event stream end first (its progress thread busy, as here) still
// reads that answer: the request succeeds, and only then is the connection lost.
BOOST_AUTO_TEST_CASE(an_answer_sent_before_the_broker_stopped_is_not_lost) {
    FakeBroker fake;
    ClientStore store;
    Session session(store, fake.uri, 5000);
    std::promise<void> release;
    session.reactor().post([released = release.get_future().share()] { released.wait(); });
    auto p = std::make_shared<std::promise<pmix_status_t>>();
    auto f = p->get_future();
    session.request(msg::ModexGet{{"ns", 1}, "k", 0, {}}, 5000,
                    [p](pmix_status_t s, const Envelope *) { p->set_value(s); });
    zmq::pollitem_t item{fake.router.handle(), 0, ZMQ_POLLIN, 0};
    BOOST_REQUIRE(zmq::poll(&item, 1, 5000ms) == 1);
    std::vector<zmq::message_t> frames;
    do {
        frames.emplace_back();
        (void)fake.router.recv(frames.back());
    } while (frames.back().more());
    BOOST_REQUIRE(frames.size() >= 2u);
    const std::uint64_t id = decode(frames.back()).id;
    fake.router.send(frames.front(), zmq::send_flags::sndmore);
    fake.router.send(encode(msg::Ok::type, id, msg::Ok{}), zmq::send_flags::none);
    // Closed with a linger: once the context is gone, the answer is in the client's socket.
    fake.router.set(zmq::sockopt::linger, 5000);
    fake.router.close();
    fake.ctx.close();
    session.connection_lost();  // what the event stream's end tells the session
    release.set_value();
    BOOST_REQUIRE(f.wait_for(5s) == std::future_status::ready);
    BOOST_TEST(f.get() == PMIX_SUCCESS);
    BOOST_TEST(session.call(msg::ModexGet{{"ns", 1}, "k", 0, {}}, 0).status ==
               PMIX_ERR_LOST_CONNECTION);
}

// Blocking callers read the connection themselves, one at a time: a caller whose answer comes
// first must not wait for one that is still waiting, and a callback must not wait for either.
BOOST_AUTO_TEST_CASE(blocking_callers_and_callbacks_share_the_connection) {
    TwoRankBroker b;
    Broker &broker = *b.broker;
    ClientStore store;
    Session session(store, broker.uri(), 5000);
    BOOST_REQUIRE(session.call(hello(0), 5000).status == PMIX_SUCCESS);
    // A blocking Get of data that never comes: this thread holds the reader role until the end.
    auto waiting = std::async(std::launch::async, [&] {
        return session.call(msg::ModexGet{{"ns", 1}, "k", 0, {}}, 0).status;
    });
    BOOST_TEST((waiting.wait_for(50ms) == std::future_status::timeout));
    for (int i = 0; i < 20; ++i) {
        BOOST_TEST(
            session.call(msg::ModexGet{{"ns", msg::kWildcardRank}, "k", 0, {}}, 5000).status ==
            PMIX_ERR_BAD_PARAM);
        BOOST_TEST(
            ask(session, msg::ModexGet{{"ns", msg::kWildcardRank}, "k", 0, {}}, 5000).first ==
            PMIX_ERR_BAD_PARAM);
    }
    broker.stop();
    BOOST_REQUIRE(waiting.wait_for(10s) == std::future_status::ready);
    BOOST_TEST(waiting.get() == PMIX_ERR_LOST_CONNECTION);
}

// A client of another node: ZMTP over tcp, where the broker wants the job's secret.
BOOST_AUTO_TEST_CASE(tcp_clients_connect_and_need_the_job_secret) {
    TwoRankBroker b("tcp://127.0.0.1:*", "s3cret");
    Broker &broker = *b.broker;
    BOOST_REQUIRE(broker.tcp_uri().starts_with("tcp://127.0.0.1:"));
    ClientStore store;
    Session session(store, broker.tcp_uri(), 5000, false, CurveKeypair::parse(broker.tcp_keys()));
    msg::Hello h = hello(0);
    h.secret = "guess";
    auto refused = session.call(h, 5000);
    BOOST_TEST(refused.status == PMIX_ERR_NO_PERMISSIONS);
    BOOST_TEST(refused.message == "unknown namespace or bad job secret");  // what PMIx_Init logs
    h.secret = "s3cret";
    auto welcome = session.call(h, 5000);
    BOOST_REQUIRE(welcome.status == PMIX_SUCCESS);
    BOOST_TEST(welcome.env.as<msg::Welcome>().job.size == 2u);
    // Its job's secret vouches for it in its own job only: no other job's information, no
    // abort of another job's processes.
    auto own = session.call(msg::JobInfoQuery{"ns"}, 5000);
    BOOST_REQUIRE(own.status == PMIX_SUCCESS);
    BOOST_TEST(own.env.as<msg::JobInfoReply>().job.size == 2u);
    BOOST_TEST(session.call(msg::JobInfoQuery{"other"}, 5000).status == PMIX_ERR_NO_PERMISSIONS);
    BOOST_TEST(session.call(msg::Abort{1, "no", {{"other", 0}}}, 5000).status ==
               PMIX_ERR_NO_PERMISSIONS);
}

// Over tcp no frame is over 64 KiB (the broker's ZMQ_MAXMSGSIZE): libpmix seals a larger
// message in pieces, which the broker rejoins; its 4 MiB answer comes back whole.
BOOST_AUTO_TEST_CASE(tcp_clients_send_large_messages_in_pieces) {
    TwoRankBroker b("tcp://127.0.0.1:*", "s3cret");
    Broker &broker = *b.broker;
    const auto keys = CurveKeypair::parse(broker.tcp_keys());
    msgpack::sbuffer buf;
    msgpack::packer<msgpack::sbuffer> pk(buf);
    pk.pack_map(1);
    pk.pack("big");
    pk.pack_array(2);
    pk.pack(static_cast<std::uint16_t>(PMIX_STRING));
    pk.pack(std::string(std::size_t{4} << 20, 'y'));
    const msg::Blob big(buf.data(), buf.data() + buf.size());
    ClientStore store0, store1;
    Session writer(store0, broker.tcp_uri(), 5000, false, keys);
    Session reader(store1, broker.tcp_uri(), 5000, false, keys);
    for (std::uint32_t r = 0; r < 2; ++r) {
        msg::Hello h = hello(r);
        h.secret = "s3cret";
        BOOST_REQUIRE((r == 0 ? writer : reader).call(h, 5000).status == PMIX_SUCCESS);
    }
    BOOST_REQUIRE(writer.notify(msg::Commit{{"ns", 0}, {}, {}, big}));
    msg::ModexGet get;
    get.proc = {"ns", 0};
    get.key = "big";
    get.commits = 1;
    get.reader = {"ns", 1};
    auto got = reader.call(get, 10000);
    BOOST_REQUIRE(got.status == PMIX_SUCCESS);
    const auto data = got.env.as<msg::ModexData>().data;
    BOOST_REQUIRE(!data.blobs.empty());
    BOOST_TEST((data.blobs.back() == big), "the 4 MiB commit came back changed");
}

// A tcp relay that keeps a copy of every byte either way: what an eavesdropper on the network
// would see.
struct Sniffer {
    int listener = -1;
    std::uint16_t port = 0;
    std::string seen;
    std::mutex mu;
    std::thread thread;
    std::atomic<bool> stop{false};
    explicit Sniffer(std::uint16_t to) {
        listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        BOOST_REQUIRE(::bind(listener, reinterpret_cast<sockaddr *>(&a), len) == 0);
        BOOST_REQUIRE(::listen(listener, 4) == 0);
        ::getsockname(listener, reinterpret_cast<sockaddr *>(&a), &len);
        port = ntohs(a.sin_port);
        thread = std::thread([this, to] { relay(to); });
    }
    ~Sniffer() {
        stop = true;
        thread.join();
        ::close(listener);
    }
    std::string uri() const { return "tcp://127.0.0.1:" + std::to_string(port); }
    std::string bytes() {
        std::lock_guard lock(mu);
        return seen;
    }
    void relay(std::uint16_t to) {
        pollfd l{listener, POLLIN, 0};
        while (!stop && ::poll(&l, 1, 50) == 0) {
        }
        if (stop) return;
        const int a = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
        const int b = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in dst{};
        dst.sin_family = AF_INET;
        dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        dst.sin_port = htons(to);
        if (::connect(b, reinterpret_cast<sockaddr *>(&dst), sizeof dst) != 0) stop = true;
        pollfd p[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
        char buf[65536];
        while (!stop) {
            if (::poll(p, 2, 50) <= 0) continue;
            for (int i = 0; i < 2; ++i) {
                if (!(p[i].revents & (POLLIN | POLLHUP))) continue;
                const ssize_t n = ::read(p[i].fd, buf, sizeof buf);
                if (n <= 0) stop = true;
                if (n <= 0) break;
                {
                    std::lock_guard lock(mu);
                    seen.append(buf, static_cast<std::size_t>(n));
                }
                (void)::write(p[1 - i].fd, buf, static_cast<std::size_t>(n));
            }
        }
        ::close(a);
        ::close(b);
    }
};

// tcp is CURVE: a client with the broker's keypair is served, and neither its job's secret nor
// its data cross the network in clear; one without keys, or with other keys, is turned away in
// the handshake with a reason and a broker log line, before anything is served; the broker
// keeps serving.
BOOST_AUTO_TEST_CASE(tcp_is_curve_and_turns_away_peers_without_the_keys) {
    auto log = zpmix::test::capture_log();
    TwoRankBroker b("tcp://127.0.0.1:*", "s3cret-of-the-job");
    Broker &broker = *b.broker;
    const auto keys = CurveKeypair::parse(broker.tcp_keys());
    BOOST_REQUIRE(keys);
    const auto port = static_cast<std::uint16_t>(
        std::stoi(broker.tcp_uri().substr(broker.tcp_uri().rfind(':') + 1)));
    {
        Sniffer sniffer(port);
        ClientStore store;
        Session session(store, sniffer.uri(), 5000, false, keys);
        msg::Hello h = hello(0);
        h.secret = "s3cret-of-the-job";
        BOOST_REQUIRE(session.call(h, 5000).status == PMIX_SUCCESS);
        BOOST_REQUIRE(session.notify(msg::Commit{
            {"ns", 0}, {}, {}, msg::Blob{'p', 'l', 'a', 'i', 'n', 'c', 'a', 'r', 'd'}}));
        BOOST_REQUIRE(session.call(msg::JobInfoQuery{"ns"}, 5000).status == PMIX_SUCCESS);
        const std::string wire = sniffer.bytes();
        BOOST_TEST(wire.size() > 400u);
        BOOST_TEST(wire.find("s3cret-of-the-job") == std::string::npos);
        BOOST_TEST(wire.find("plaincard") == std::string::npos);
        BOOST_TEST(wire.find("session.hello") == std::string::npos);
        BOOST_TEST(wire.find("CURVE") != std::string::npos);
    }
    ClientStore store;
    try {
        Session keyless(store, broker.tcp_uri(), 5000);
        BOOST_FAIL("a client without keys was served");
    } catch (const ZmtpError &e) {
        BOOST_TEST(e.refused);
        BOOST_TEST(std::string(e.what()).find("$ZPMIX_TCP_KEYS") != std::string::npos, e.what());
    }
    BOOST_TEST(log->wait_for("does not speak CURVE", 10s));
    try {
        Session wrong(store, broker.tcp_uri(), 5000, false,
                      CurveKeypair::parse(CurveKeypair::generate().text()));
        BOOST_FAIL("a client with other keys was served");
    } catch (const ZmtpError &e) {
        BOOST_TEST(e.refused);
        BOOST_TEST(std::string(e.what()).find("CURVE handshake failed") != std::string::npos,
                   e.what());
    }
    BOOST_TEST(log->wait_for("its CURVE handshake failed", 10s));
    // Nothing but a handshake for a peer that says something else: not a byte of an answer.
    {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        const int raw = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        BOOST_REQUIRE(::connect(raw, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
        char g[zmtp::kGreetingSize];
        zmtp::greeting(g);
        const std::string ready = zmtp::ready("DEALER");
        unsigned char h[zmtp::kMaxHeader];
        const auto hl = zmtp::put_header(h, zmtp::kCommand, ready.size());
        std::string out(g, sizeof g);
        out.append(reinterpret_cast<char *>(h), hl);
        out += ready;
        BOOST_REQUIRE(::write(raw, out.data(), out.size()) == static_cast<ssize_t>(out.size()));
        std::string in;
        char buf[4096];
        pollfd p{raw, POLLIN, 0};
        while (::poll(&p, 1, 10000) == 1) {
            const ssize_t n = ::read(raw, buf, sizeof buf);
            if (n <= 0) break;
            in.append(buf, static_cast<std::size_t>(n));
        }
        BOOST_TEST(in.size() <= zmtp::kGreetingSize, "the broker answered a NULL peer");
        ::close(raw);
    }
    // Still serving, the right keys.
    Session again(store, broker.tcp_uri(), 5000, false, keys);
    msg::Hello h = hello(1);
    h.secret = "s3cret-of-the-job";
    BOOST_TEST(again.call(h, 5000).status == PMIX_SUCCESS);
}

// Over ipc (the broker's uid only), any client may read any registered namespace's job.
// A broker that stops reading: a write waits no longer than its call's timeout, else the
// connection's write timeout, and no other sending thread hangs behind it.
BOOST_AUTO_TEST_CASE(writes_to_a_stopped_broker_time_out) {
    DeafBroker deaf;
    ClientStore store;
    ::setenv("ZPMIX_WRITE_TIMEOUT_MS", "200", 1);
    Session session(store, deaf.uri, 5000);
    ::unsetenv("ZPMIX_WRITE_TIMEOUT_MS");
    // A request that waits for ever: it must fail only when the connection does.
    auto p = std::make_shared<std::promise<pmix_status_t>>();
    auto pending = p->get_future();
    session.request(msg::ModexGet{{"ns", 1}, "k", 0, {}}, 0,
                    [p](pmix_status_t s, const Envelope *) { p->set_value(s); });
    // Small messages go whole into the socket or not at all, until its buffer is full.
    const msg::Commit small{};
    int sent = 0;
    while (session.notify(small)) BOOST_REQUIRE(++sent < 1000000);
    BOOST_TEST(sent > 0);
    // Four threads sending at once: each gets its answer by its own deadline.
    std::vector<std::future<pmix_status_t>> callers;
    for (int i = 0; i < 2; ++i) {
        callers.push_back(std::async(std::launch::async, [&] {
            return session.notify(small) ? PMIX_SUCCESS : PMIX_ERR_TIMEOUT;
        }));
        callers.push_back(std::async(std::launch::async, [&] {
            return session.call(msg::ModexGet{{"ns", 1}, "k", 0, {}}, 300).status;
        }));
    }
    for (auto &c : callers) {
        BOOST_REQUIRE(c.wait_for(10s) == std::future_status::ready);
        BOOST_TEST(c.get() == PMIX_ERR_TIMEOUT);
    }
    // Nothing was left half written: the connection and its pending request are intact.
    BOOST_TEST((pending.wait_for(0ms) == std::future_status::timeout));
    BOOST_TEST(session.broker_alive());
}

// A message bigger than the socket's buffer is left half written at its deadline: the call times
// out, and the connection, unusable, fails what is pending rather than desynchronise the stream.
BOOST_AUTO_TEST_CASE(a_write_left_half_done_ends_the_connection) {
    DeafBroker deaf;
    ClientStore store;
    ::setenv("ZPMIX_WRITE_TIMEOUT_MS", "200", 1);
    Session session(store, deaf.uri, 5000);
    ::unsetenv("ZPMIX_WRITE_TIMEOUT_MS");
    auto p = std::make_shared<std::promise<pmix_status_t>>();
    auto pending = p->get_future();
    session.request(msg::ModexGet{{"ns", 1}, "k", 0, {}}, 0,
                    [p](pmix_status_t s, const Envelope *) { p->set_value(s); });
    msg::Commit big;
    big.local.assign(4 << 20, 'x');
    auto half = std::async(std::launch::async, [&] { return session.call(big, 300).status; });
    BOOST_REQUIRE(half.wait_for(10s) == std::future_status::ready);
    BOOST_TEST(half.get() == PMIX_ERR_TIMEOUT);
    BOOST_REQUIRE(pending.wait_for(10s) == std::future_status::ready);
    BOOST_TEST(pending.get() == PMIX_ERR_LOST_CONNECTION);
    BOOST_TEST(session.call(msg::ModexGet{{"ns", 1}, "k", 0, {}}, 300).status ==
               PMIX_ERR_LOST_CONNECTION);
    BOOST_TEST(deaf.client_closed());
}

// Whether the other end ends the stream on fd within 5 s (what it sent before is not read).
bool ended_within_5s(int fd) {
    pollfd p{fd, POLLRDHUP, 0};
    return ::poll(&p, 1, 5000) == 1 && (p.revents & (POLLRDHUP | POLLHUP)) != 0;
}

// On tcp the broker PINGs its peers and drops one it hears nothing from: one that never
// completes its handshake, one that completes it and goes silent. A client that is idle but
// alive PINGs the broker itself and stays.
BOOST_AUTO_TEST_CASE(silent_tcp_peers_are_dropped_and_idle_clients_stay) {
    // A handshake may take 1 s: well inside the 5 s the test gives the broker to drop the peer
    // that never starts one (at the default 5 s, the two raced).
    TwoRankBroker b("tcp://127.0.0.1:*", "s3cret", 50, 300, 1000);
    const std::string uri = b.broker->tcp_uri();
    ClientStore store;
    const auto keys = CurveKeypair::parse(b.broker->tcp_keys());
    ::setenv("ZPMIX_HEARTBEAT_IVL_MS", "50", 1);
    Session idle(store, uri, 5000, false, keys);
    ::unsetenv("ZPMIX_HEARTBEAT_IVL_MS");

    const auto colon = uri.rfind(':');
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(std::stoi(uri.substr(colon + 1))));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int raw = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    BOOST_REQUIRE(::connect(raw, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
    BOOST_TEST(ended_within_5s(raw));
    ::close(raw);

    ZmtpConnection silent(uri, ZmtpConnection::Role::dealer, ZmtpConnection::Clock::now() + 5s,
                          1 << 20, false, keys);
    BOOST_TEST(ended_within_5s(silent.fd()));

    // Idle all the while (more than the broker's timeout), and still served.
    msg::Hello h = hello(0);
    h.secret = "s3cret";
    BOOST_TEST(idle.call(h, 5000).status == PMIX_SUCCESS);
}

BOOST_AUTO_TEST_CASE(job_information_of_another_namespace) {
    TwoRankBroker b;
    ClientStore store;
    Session session(store, b.broker->uri(), 5000);
    // Not before a Hello: the broker tells its peers' jobs only to sessions.
    BOOST_TEST(session.call(msg::JobInfoQuery{"other"}, 5000).status == PMIX_ERR_NO_PERMISSIONS);
    BOOST_REQUIRE(session.call(hello(1), 5000).status == PMIX_SUCCESS);
    auto other = session.call(msg::JobInfoQuery{"other"}, 5000);
    BOOST_REQUIRE(other.status == PMIX_SUCCESS);
    const msg::JobInfo job = other.env.as<msg::JobInfoReply>().job;
    BOOST_TEST(job.nspace == "other");
    BOOST_TEST(job.size == 1u);
    BOOST_TEST(session.call(msg::JobInfoQuery{"nobody"}, 5000).status == PMIX_ERR_NOT_FOUND);
    // A process aborts only its own job's processes, and only ranks the job has; the refusal
    // says nothing of whether another namespace exists.
    BOOST_TEST(session.call(msg::Abort{1, "", {{"other", 0}}}, 5000).status ==
               PMIX_ERR_NO_PERMISSIONS);
    BOOST_TEST(session.call(msg::Abort{1, "", {{"nobody", 0}}}, 5000).status ==
               PMIX_ERR_NO_PERMISSIONS);
    BOOST_TEST(session.call(msg::Abort{1, "", {{"ns", 5}}}, 5000).status == PMIX_ERR_BAD_PARAM);
}

BOOST_AUTO_TEST_CASE(no_broker_at_the_uri_fails_fast) {
    TempDir tmp;
    ClientStore store;
    BOOST_CHECK_THROW(Session(store, "ipc://" + tmp.path + "/nobody.sock", 1000),
                      zpmix::client::ZmtpError);
    BOOST_CHECK_THROW(Session(store, "tcp://127.0.0.1:1", 1000), zpmix::client::ZmtpError);
    BOOST_CHECK_THROW(Session(store, "udp://nowhere", 1000), zpmix::client::ZmtpError);
}

BOOST_AUTO_TEST_CASE(store_serves_job_info_and_data) {
    ClientStore store;
    store.set_job(two_ranks(), 0);
    pmix_value_t *v = nullptr;
    BOOST_REQUIRE(store.get("ns", PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &v) == PMIX_SUCCESS);
    BOOST_TEST(v->type == PMIX_UINT32);
    BOOST_TEST(v->data.uint32 == 2u);
    PMIX_VALUE_RELEASE(v);
    BOOST_REQUIRE(store.get("ns", 1, PMIX_LOCAL_RANK, &v) == PMIX_SUCCESS);
    BOOST_TEST(v->type == PMIX_UINT16);
    BOOST_TEST(v->data.uint16 == 1u);
    PMIX_VALUE_RELEASE(v);
    BOOST_REQUIRE(store.get("ns", PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS, &v) == PMIX_SUCCESS);
    BOOST_TEST(std::string(v->data.string) == "0,1");
    PMIX_VALUE_RELEASE(v);
    BOOST_TEST(store.get("ns", 5, PMIX_LOCAL_RANK, &v) == PMIX_ERR_NOT_FOUND);
    BOOST_TEST(store.get("other", 0, PMIX_JOB_SIZE, &v) == PMIX_ERR_NOT_FOUND);
    // Own puts: readable at once, committed by scope; INTERNAL stays here.
    pmix_value_t x;
    std::uint64_t n = 99;
    PMIx_Value_load(&x, &n, PMIX_UINT64);
    BOOST_TEST(store.put(PMIX_GLOBAL, "g", &x) == PMIX_SUCCESS);
    BOOST_TEST(store.put(PMIX_INTERNAL, "i", &x) == PMIX_SUCCESS);
    BOOST_TEST(store.put(static_cast<pmix_scope_t>(9), "bad", &x) == PMIX_ERR_BAD_PARAM);
    PMIx_Value_destruct(&x);
    BOOST_REQUIRE(store.get("ns", 0, "i", &v) == PMIX_SUCCESS);
    BOOST_TEST(v->data.uint64 == 99u);
    PMIX_VALUE_RELEASE(v);
    msg::Commit commit;
    store.commit_blobs(commit);
    BOOST_TEST(commit.local.empty());
    BOOST_TEST(commit.remote.empty());
    BOOST_TEST(!commit.global.empty());
    // What a fence brings in for another rank; a malformed blob is reported, not fatal.
    msg::ProcData d{{"ns", 1}, {commit.global, msg::Blob{'\xc1'}}, {PMIX_GLOBAL, PMIX_LOCAL}};
    BOOST_TEST(store.add(d) == PMIX_ERR_UNPACK_FAILURE);
    BOOST_REQUIRE(store.get("ns", 1, "g", &v) == PMIX_SUCCESS);
    BOOST_TEST(v->type == PMIX_UINT64);
    BOOST_TEST(v->data.uint64 == 99u);
    PMIX_VALUE_RELEASE(v);
    BOOST_TEST(store.get("ns", 1, "i", &v) == PMIX_ERR_NOT_FOUND);
}

// PMIX_DATA_SCOPE: a value is found only under the scope it was put with (as the broker tagged
// another process's blobs; PMIX_INTERNAL for the caller's own internal puts and Store_internal).
BOOST_AUTO_TEST_CASE(store_finds_data_by_scope) {
    ClientStore store;
    store.set_job(two_ranks(), 0);
    pmix_value_t x;
    std::uint32_t n = 7;
    PMIx_Value_load(&x, &n, PMIX_UINT32);
    BOOST_TEST(store.put(PMIX_LOCAL, "l", &x) == PMIX_SUCCESS);
    BOOST_TEST(store.put(PMIX_INTERNAL, "i", &x) == PMIX_SUCCESS);
    BOOST_TEST(store.store("ns", 1, "kept", &x) == PMIX_SUCCESS);
    BOOST_TEST(store.put(PMIX_REMOTE, "moved", &x) == PMIX_SUCCESS);
    BOOST_TEST(store.put(PMIX_GLOBAL, "moved", &x) == PMIX_SUCCESS);  // a key lives in one scope
    msg::Commit commit;
    store.commit_blobs(commit);
    PMIx_Value_destruct(&x);
    pmix_value_t *v = nullptr;
    auto found = [&](std::uint32_t rank, const char *key, pmix_scope_t scope) {
        const bool ok = store.get_scoped("ns", rank, key, scope, &v) == PMIX_SUCCESS;
        if (v) PMIX_VALUE_RELEASE(v);
        v = nullptr;
        return ok;
    };
    BOOST_TEST(found(0, "l", PMIX_LOCAL));
    BOOST_TEST(!found(0, "l", PMIX_GLOBAL));
    BOOST_TEST(!found(0, "l", PMIX_REMOTE));
    BOOST_TEST(found(0, "i", PMIX_INTERNAL));
    BOOST_TEST(!found(0, "i", PMIX_LOCAL));
    BOOST_TEST(found(0, "moved", PMIX_GLOBAL));
    BOOST_TEST(!found(0, "moved", PMIX_REMOTE));
    BOOST_TEST(found(1, "kept", PMIX_INTERNAL));
    BOOST_TEST(!found(1, "kept", PMIX_GLOBAL));
    // Another rank's data, as a fence on its node brings it: local and global blobs, tagged.
    store.add(msg::ProcData{{"ns", 1}, {commit.local, commit.global}, {PMIX_LOCAL, PMIX_GLOBAL}});
    BOOST_TEST(found(1, "l", PMIX_LOCAL));
    BOOST_TEST(!found(1, "l", PMIX_REMOTE));
    BOOST_TEST(found(1, "moved", PMIX_GLOBAL));
    BOOST_TEST(!found(1, "nothing", PMIX_GLOBAL));
    BOOST_TEST(!found(7, "l", PMIX_LOCAL));
    // Without a scope, everything the caller holds.
    BOOST_REQUIRE(store.get("ns", 1, "l", &v) == PMIX_SUCCESS);
    PMIX_VALUE_RELEASE(v);
}

// Another namespace's job, as the broker hands it: served like the own job, with the node-level
// keys of the caller's node.
BOOST_AUTO_TEST_CASE(store_serves_another_namespaces_job) {
    ClientStore store;
    msg::JobInfo mine = two_ranks();
    for (auto &p : mine.procs) p.hostname = "here";
    mine.nodes = {"here"};
    store.set_job(mine, 0);
    msg::JobInfo other;
    other.nspace = "other";
    other.size = 3;
    other.nodes = {"there", "here"};
    other.procs.resize(3);
    for (std::uint32_t r = 0; r < 3; ++r) {
        other.procs[r].rank = r;
        other.procs[r].node_id = r == 2 ? 1 : 0;
        other.procs[r].hostname = other.nodes[other.procs[r].node_id];
        other.procs[r].local_rank = r == 2 ? 0 : static_cast<std::uint16_t>(r);
    }
    BOOST_TEST(!store.has_job("other"));
    store.add_job(other);
    BOOST_TEST(store.has_job("other"));
    pmix_value_t *v = nullptr;
    BOOST_REQUIRE(store.get("other", PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &v) == PMIX_SUCCESS);
    BOOST_TEST(v->data.uint32 == 3u);
    PMIX_VALUE_RELEASE(v);
    BOOST_REQUIRE(store.get("other", 1, PMIX_HOSTNAME, &v) == PMIX_SUCCESS);
    BOOST_TEST(std::string(v->data.string) == "there");
    PMIX_VALUE_RELEASE(v);
    BOOST_REQUIRE(store.get("other", 2, PMIX_LOCAL_RANK, &v) == PMIX_SUCCESS);
    BOOST_TEST(v->data.uint16 == 0u);
    PMIX_VALUE_RELEASE(v);
    // Node-level: the caller's node ("here") holds rank 2 of that job.
    BOOST_REQUIRE(store.get("other", PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS, &v) == PMIX_SUCCESS);
    BOOST_TEST(std::string(v->data.string) == "2");
    PMIX_VALUE_RELEASE(v);
    // The own job is untouched, and is never replaced by add_job.
    BOOST_REQUIRE(store.get("ns", PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &v) == PMIX_SUCCESS);
    BOOST_TEST(v->data.uint32 == 2u);
    PMIX_VALUE_RELEASE(v);
    msg::JobInfo fake = other;
    fake.nspace = "ns";
    store.add_job(fake);
    BOOST_REQUIRE(store.get("ns", PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &v) == PMIX_SUCCESS);
    BOOST_TEST(v->data.uint32 == 2u);
    PMIX_VALUE_RELEASE(v);
}
