#define BOOST_TEST_MODULE broker
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>

#include <pmix_common.h>

#include "actors/protocol/events.hpp"
#include "actors/protocol/rendezvous.hpp"
#include "actors/protocol/session.hpp"
#include "actors/runtime/curve_keys.hpp"
#include "broker/broker.hpp"
#include "support/process.hpp"
#include "tests/support/log_capture.hpp"

using namespace zpmix;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

extern char **environ;

namespace {

using test::TempDir;  // support/process.hpp

// A raw DEALER: sends whatever bytes a test wants and waits (with a deadline) for a reply.
struct Peer {
    zmq::context_t ctx;
    zmq::socket_t s{ctx, zmq::socket_type::dealer};
    // `tcp_keys`: the broker's keypair ("PUBLIC SECRET"), which tcp needs.
    explicit Peer(const std::string &uri, const std::string &tcp_keys = {}) {
        s.set(zmq::sockopt::linger, 0);
        if (!tcp_keys.empty()) CurveKeypair::parse(tcp_keys)->apply_to_client(s);
        s.connect(uri);
    }
    void send_raw(const std::string &bytes) { s.send(zmq::buffer(bytes), zmq::send_flags::none); }
    template <class M>
    void send(const M &m, std::uint64_t id = 1) {
        s.send(encode(M::type, id, m), zmq::send_flags::none);
    }
    std::optional<Envelope> recv(std::chrono::milliseconds timeout = 5000ms) {
        zmq::pollitem_t item{s.handle(), 0, ZMQ_POLLIN, 0};
        if (zmq::poll(&item, 1, timeout) == 0) return std::nullopt;
        zmq::message_t m;
        (void)s.recv(m);
        return decode(m);
    }
    std::int32_t error_status() {
        auto env = recv();
        BOOST_REQUIRE(env);
        BOOST_REQUIRE_EQUAL(env->type, msg::ErrorReply::type);
        return env->as<msg::ErrorReply>().status;
    }
    msg::Welcome hello(msg::Hello h) {
        send(h);
        auto env = recv();
        BOOST_REQUIRE(env);
        BOOST_REQUIRE_EQUAL(env->type, msg::Welcome::type);
        return env->as<msg::Welcome>();
    }
};

msg::Hello tool_hello() {
    msg::Hello h;
    h.role = "tool";
    h.pid = ::getpid();
    return h;
}

// Registers a namespace with the server as the launcher would.
class Registrar : public Actor {
  public:
    Registrar(Reactor &r, Bus &b, msg::JobInfo job, std::string secret) : Actor("registrar", r, b) {
        send("registry", msg::RegisterNamespace{std::move(job), std::move(secret)});
    }
};

msg::JobInfo two_rank_job() {
    msg::JobInfo job;
    job.nspace = "test.ns";
    job.size = 2;
    job.procs.resize(2);
    job.procs[1].rank = 1;
    job.procs[1].cpuset = "3";
    return job;
}

pid_t dead_pid() {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    ::waitpid(pid, nullptr, 0);
    return pid;
}

struct Nonsense {
    static constexpr const char *type = "no.such.type";
    int x = 1;
    ZPMIX_MSG_MAP(x);
};
struct BadHello {  // the right type, a body of the wrong shape
    static constexpr const char *type = "session.hello";
    std::vector<int> role{1, 2};
    ZPMIX_MSG_MAP(role);
};

Config config_in(const std::string &dir) {
    Config c;
    c.run_dir = dir;
    return c;
}

}  // namespace

BOOST_AUTO_TEST_CASE(rendezvous_written_and_removed) {
    zpmix::test::capture_log();
    TempDir tmp;
    const std::string dir = tmp.path + "/run";
    {
        Broker b(config_in(dir));
        b.start();
        auto info = find_broker(dir);
        BOOST_REQUIRE(info);
        BOOST_TEST(info->pid == ::getpid());
        BOOST_TEST(info->uri == b.uri());
        BOOST_TEST(info->events_uri == b.events_uri());
        BOOST_TEST(info->protocol == kProtocolVersion);
        struct stat st {};
        BOOST_REQUIRE(::stat(dir.c_str(), &st) == 0);
        BOOST_TEST((st.st_mode & 0777) == 0700u);
        b.stop();
        BOOST_TEST(!fs::exists(dir));
    }
    BOOST_TEST(!fs::exists(dir));
}

BOOST_AUTO_TEST_CASE(embedded_brokers_get_private_dirs) {
    zpmix::test::capture_log();
    TempDir tmp;
    ::setenv("XDG_RUNTIME_DIR", tmp.path.c_str(), 1);
    Broker a(Config{}), b(Config{});
    ::unsetenv("XDG_RUNTIME_DIR");
    a.start();
    b.start();
    BOOST_TEST(a.run_dir() != b.run_dir());
    BOOST_TEST(a.run_dir().starts_with(tmp.path + "/zpmix/broker-"));
    BOOST_TEST(!find_broker(tmp.path + "/zpmix"));  // nothing shared for `zpmix run` to find
    Peer p(b.uri());
    p.hello(tool_hello());
    a.stop();
    b.stop();
    BOOST_TEST(!fs::exists(a.run_dir()));
    BOOST_TEST(!fs::exists(b.run_dir()));
}

BOOST_AUTO_TEST_CASE(stale_rendezvous_reclaimed_live_one_refused) {
    auto log = zpmix::test::capture_log();
    TempDir tmp;
    const std::string dir = tmp.path + "/run";
    fs::create_directory(dir);
    const pid_t gone = dead_pid();
    write_rendezvous(rendezvous_path(dir),
                     {"ipc://" + dir + "/broker.sock", "", "", gone, ::getuid(), 1, "h"});
    {
        Broker b(config_in(dir));
        b.start();
        BOOST_TEST(log->contains("reclaiming " + dir));
        BOOST_TEST(find_broker(dir)->pid == ::getpid());
    }
    // A live process owns it (pid 1 never dies): refused.
    fs::create_directory(dir);
    write_rendezvous(rendezvous_path(dir), {"ipc://x", "", "", 1, ::getuid(), 1, "h"});
    {
        Broker b(config_in(dir));
        BOOST_CHECK_THROW(b.start(), BrokerRunning);
    }
    // find_broker drops a stale file.
    write_rendezvous(rendezvous_path(dir), {"ipc://x", "", "", gone, ::getuid(), 1, "h"});
    BOOST_TEST(!find_broker(dir));
    BOOST_TEST(!fs::exists(rendezvous_path(dir)));
}

// What zpmix trusts (rendezvous.hpp): directories and files of this user that no one else can
// change; the rendezvous file agreeing with its place. Each refusal names the path.
BOOST_AUTO_TEST_CASE(untrusted_directories_and_files_are_refused) {
    zpmix::test::capture_log();
    TempDir tmp;
    const std::string dir = tmp.path + "/run";
    auto refused = [](const std::string &path, const std::string &why) {
        try {
            check_trusted_dir(path);
        } catch (const UntrustedPath &e) {
            const std::string what = e.what();
            BOOST_TEST_CONTEXT(what) {
                BOOST_TEST(what.find(path) != std::string::npos);
                BOOST_TEST(what.find(why) != std::string::npos);
            }
            return true;
        }
        return false;
    };
    fs::create_directory(dir);
    for (mode_t ok : {0700, 0755, 0750}) {
        ::chmod(dir.c_str(), ok);
        BOOST_CHECK_NO_THROW(check_trusted_dir(dir));
    }
    ::chmod(dir.c_str(), 0775);
    BOOST_TEST(refused(dir, "mode 0775"));
    ::chmod(dir.c_str(), 0777);
    BOOST_TEST(refused(dir, "mode 0777"));
    ::chmod(dir.c_str(), 0700);
    fs::create_directory_symlink(dir, tmp.path + "/link");
    BOOST_TEST(refused(tmp.path + "/link", "symbolic link"));
    // An ancestor others can write: refused unless it is sticky (as /tmp).
    ::chmod(tmp.path.c_str(), 0777);
    BOOST_TEST(refused(dir, "is not sticky"));
    ::chmod(tmp.path.c_str(), 01777);
    BOOST_CHECK_NO_THROW(check_trusted_dir(dir));
    ::chmod(tmp.path.c_str(), 0700);
    if (::getuid() == 0) {  // another owner: only root can make one
        BOOST_REQUIRE(::chown(dir.c_str(), 65534, 65534) == 0);
        BOOST_TEST(refused(dir, "belongs to uid 65534"));
        BOOST_TEST(::chown(dir.c_str(), 0, 0) == 0);
        ::chmod(tmp.path.c_str(), 0755);
        BOOST_REQUIRE(::chown(tmp.path.c_str(), 65534, 65534) == 0);
        BOOST_TEST(refused(dir, "belongs to uid 65534, neither root nor this user"));
        BOOST_TEST(::chown(tmp.path.c_str(), 0, 0) == 0);
    }

    // The rendezvous file: ours, mode 0600, naming this user and the sockets beside it.
    const std::string rdv = rendezvous_path(dir);
    const auto self = static_cast<std::int64_t>(::getpid());
    const auto uid = static_cast<std::int64_t>(::getuid());
    write_rendezvous(rdv, {"ipc://" + dir + "/broker.sock", "ipc://" + dir + "/events.sock", "",
                           self, uid, 1, "h"});
    BOOST_TEST(find_broker(dir)->pid == self);
    BOOST_TEST(find_brokers(dir).size() == 1u);
    ::chmod(rdv.c_str(), 0622);
    BOOST_CHECK_THROW(find_broker(dir), UntrustedPath);
    ::chmod(rdv.c_str(), 0600);
    write_rendezvous(rdv, {"ipc:///elsewhere/broker.sock", "", "", self, uid, 1, "h"});
    BOOST_CHECK_THROW(find_broker(dir), UntrustedPath);
    write_rendezvous(rdv, {"ipc://" + dir + "/broker.sock", "", "", self, uid + 1, 1, "h"});
    BOOST_CHECK_THROW(find_broker(dir), UntrustedPath);
    fs::remove(rdv);
    { std::ofstream(tmp.path + "/other.json") << "{}"; }
    fs::create_symlink(tmp.path + "/other.json", rdv);
    BOOST_CHECK_THROW(find_broker(dir), UntrustedPath);
    fs::remove(rdv);
    BOOST_TEST(!find_broker(dir));                    // nothing there: no broker
    BOOST_TEST(!find_broker(tmp.path + "/missing"));  // nor when the directory is missing
    // A directory of ours others could write, with nothing of theirs in it, is made private.
    ::chmod(dir.c_str(), 0777);
    {
        Broker b(config_in(dir));
        struct stat st {};
        BOOST_REQUIRE(::stat(dir.c_str(), &st) == 0);
        BOOST_TEST((st.st_mode & 0777) == 0700u);
    }
}

BOOST_AUTO_TEST_CASE(hello_and_welcome) {
    zpmix::test::capture_log();
    TempDir tmp;
    Broker b(config_in(tmp.path + "/run"));
    b.add_actor<Registrar>(two_rank_job(), "s3cret");
    b.start();
    Peer p(b.uri());
    const auto w = p.hello(tool_hello());
    BOOST_TEST(w.events_uri == b.events_uri());
    BOOST_TEST(w.broker == b.name());
    BOOST_TEST(w.job.nspace.empty());

    // One Hello per connection: a session does not turn into another.
    msg::Hello client;
    client.nspace = "test.ns";
    client.rank = 1;
    p.send(client);
    BOOST_TEST(p.error_status() == PMIX_ERR_NO_PERMISSIONS);
    Peer q(b.uri());
    const auto cw = q.hello(client);
    BOOST_TEST(cw.job.size == 2u);
    BOOST_REQUIRE(cw.job.procs.size() == 2u);
    BOOST_TEST(cw.job.procs[1].cpuset == "3");

    // A refused Hello opens no session: the peer may try again.
    Peer r(b.uri());
    client.nspace = "no.such.ns";
    r.send(client);
    BOOST_TEST(r.error_status() == PMIX_ERR_NOT_FOUND);
    client.nspace = "test.ns";
    client.rank = 2;
    r.send(client);
    BOOST_TEST(r.error_status() == PMIX_ERR_BAD_PARAM);
    // Messages only the broker's actors may send are refused from peers.
    p.send(msg::RegisterNamespace{two_rank_job(), ""});
    BOOST_TEST(p.error_status() == PMIX_ERR_NO_PERMISSIONS);
}

// A peer's Launch runs on the launcher's own reactor thread (under TSan, a handler run on the
// broker's thread races the launcher's timers and jobs), and the job runs to its end.
BOOST_AUTO_TEST_CASE(a_peer_launch_runs_on_the_launchers_thread) {
    zpmix::test::capture_log();
    TempDir tmp;
    Broker b(config_in(tmp.path + "/run"));
    b.start();
    Peer p(b.uri());
    msg::Hello h;
    h.role = "launcher";
    h.pid = ::getpid();
    p.hello(h);
    msg::Launch launch;
    launch.argv = {"true"};
    launch.np = 2;
    launch.timeout_s = 60;  // a timer of the launcher's reactor, set by the handler
    p.send(launch, 7);
    auto reply = p.recv();
    BOOST_REQUIRE(reply);
    BOOST_REQUIRE_EQUAL(reply->type, msg::LaunchReply::type);
    BOOST_TEST(reply->id == 7u);
    const std::string nspace = reply->as<msg::LaunchReply>().nspace;
    p.send(msg::SignalJob{nspace, SIGCONT}, 8);  // while it runs, or once it is gone
    for (;;) {
        auto env = p.recv();
        BOOST_REQUIRE(env);
        if (env->type != msg::JobEnded::type) continue;
        BOOST_TEST(env->as<msg::JobEnded>().status == 0);
        break;
    }
}

BOOST_AUTO_TEST_CASE(bad_messages_answered_others_still_served) {
    auto log = zpmix::test::capture_log();
    TempDir tmp;
    Config c = config_in(tmp.path + "/run");
    c.max_message_bytes = 1 << 20;
    Broker b(c);
    b.start();
    Peer bad(b.uri()), good(b.uri());

    bad.send_raw("\xc1garbage");  // 0xc1 is never valid msgpack
    BOOST_TEST(bad.error_status() == PMIX_ERR_BAD_PARAM);
    good.hello(tool_hello());

    const auto whole = encode(msg::Hello::type, 1, tool_hello());
    bad.send_raw(std::string(static_cast<const char *>(whole.data()), whole.size() / 2));
    BOOST_TEST(bad.error_status() == PMIX_ERR_BAD_PARAM);  // truncated

    bad.send_raw("\x81\xa1t\xa5hello");  // no protocol version
    BOOST_TEST(bad.error_status() == PMIX_ERR_BAD_PARAM);

    bad.send(Nonsense{}, 42);
    auto env = bad.recv();
    BOOST_REQUIRE(env);
    BOOST_TEST(env->id == 42u);
    BOOST_TEST(env->as<msg::ErrorReply>().status == PMIX_ERR_NOT_SUPPORTED);

    bad.send(BadHello{});
    BOOST_TEST(bad.error_status() == PMIX_ERR_BAD_PARAM);

    bad.s.send(zmq::str_buffer("one"), zmq::send_flags::sndmore);
    bad.s.send(zmq::str_buffer("two"), zmq::send_flags::none);
    BOOST_TEST(bad.error_status() == PMIX_ERR_BAD_PARAM);  // multipart

    // Over ZMQ_MAXMSGSIZE: the broker's transport drops the connection, no reply.
    Peer huge(b.uri());
    huge.send_raw(std::string(2 << 20, 'x'));
    BOOST_TEST(!huge.recv(300ms));
    Peer later(b.uri());
    later.hello(tool_hello());
    BOOST_TEST(log->contains("malformed message"));
}

// Releases of another protocol version: a peer of another version is refused at its Hello, and
// any other message of another version too, with a reason that names both releases (the peer's as
// its Hello states it, if that can be read) and which releases work together, before its body is
// read.
BOOST_AUTO_TEST_CASE(a_peer_of_another_protocol_version_is_refused) {
    auto log = zpmix::test::capture_log();
    TempDir tmp;
    Broker b(config_in(tmp.path + "/run"));
    b.start();
    const std::uint32_t other = kProtocolVersion + 6;
    const std::string why = msg::other_protocol(other, "", "peer", "broker");
    BOOST_TEST(why.find("zpmix " + std::string(msg::kRelease)) != std::string::npos);
    BOOST_TEST(why.find("docs/compatibility.md") != std::string::npos);
    msg::Hello newer_hello = tool_hello();
    newer_hello.release = "7.0.0";
    const std::string why_newer = msg::other_protocol(other, "7.0.0", "peer", "broker");
    BOOST_TEST(why_newer.find("the peer runs zpmix 7.0.0 (protocol version " +
                              std::to_string(other) + ")") != std::string::npos);
    auto refusal = [](Peer &p, std::uint64_t id) {
        auto env = p.recv();
        BOOST_REQUIRE(env);
        BOOST_REQUIRE_EQUAL(env->type, msg::ErrorReply::type);
        BOOST_TEST(env->id == id);
        return env->as<msg::ErrorReply>();
    };

    Peer newer(b.uri());
    newer.s.send(encode_versioned(other, msg::Hello::type, 3, newer_hello), zmq::send_flags::none);
    auto e = refusal(newer, 3);
    BOOST_TEST(e.status == PMIX_ERR_NOT_SUPPORTED);
    BOOST_TEST(e.message == why_newer);
    BOOST_TEST(log->contains(why_newer));
    // A Hello of another version whose body this version cannot read: the same refusal.
    newer.s.send(encode_versioned(other, msg::Hello::type, 4, BadHello{}), zmq::send_flags::none);
    e = refusal(newer, 4);
    BOOST_TEST(e.status == PMIX_ERR_NOT_SUPPORTED);
    BOOST_TEST(e.message == why);
    BOOST_TEST(log->contains(why));

    // A message of another version on a session of this one.
    Peer tool(b.uri());
    tool.hello(tool_hello());
    tool.s.send(encode_versioned(other, msg::JobInfoQuery::type, 5, msg::JobInfoQuery{"none"}),
                zmq::send_flags::none);
    e = refusal(tool, 5);
    BOOST_TEST(e.status == PMIX_ERR_NOT_SUPPORTED);
    BOOST_TEST(e.message == why);
    tool.send(msg::JobInfoQuery{"none"}, 6);  // still served
    e = refusal(tool, 6);
    BOOST_TEST(e.status == PMIX_ERR_NOT_FOUND);
}

// Within a protocol version: the Welcome states the broker's release, features and ABI level; a
// peer whose Hello lacks a feature is never sent a message of it: a request whose answer needs
// it is refused with PMIX_ERR_NOT_SUPPORTED (and a log line naming both releases), the rest is
// served.
BOOST_AUTO_TEST_CASE(a_peer_lacking_a_feature_is_not_sent_it) {
    auto log = zpmix::test::capture_log();
    TempDir tmp;
    Broker b(config_in(tmp.path + "/run"));
    b.start();
    Peer full(b.uri());
    const msg::Welcome w = full.hello(tool_hello());
    BOOST_TEST(w.release == std::string(msg::kRelease));
    BOOST_TEST(w.features == msg::own_features());
    BOOST_TEST(w.abi == msg::abi_level());
    full.send(msg::EventStatsQuery{"test"}, 2);
    auto env = full.recv();
    BOOST_REQUIRE(env);
    BOOST_TEST(env->type == msg::EventStats::type);

    Peer older(b.uri());
    msg::Hello h = tool_hello();
    h.release = "0.8.9";
    std::erase(h.features, "ev");
    older.hello(h);
    older.send(msg::EventStatsQuery{"test"}, 3);
    env = older.recv();
    BOOST_REQUIRE(env);
    BOOST_REQUIRE_EQUAL(env->type, msg::ErrorReply::type);
    BOOST_TEST(env->id == 3u);
    const auto e = env->as<msg::ErrorReply>();
    BOOST_TEST(e.status == PMIX_ERR_NOT_SUPPORTED);
    BOOST_TEST(e.message.find("zpmix 0.8.9 lacks") != std::string::npos);
    BOOST_TEST(log->contains("runs zpmix 0.8.9, which lacks 'ev' (this broker zpmix " +
                             std::string(msg::kRelease) + ")"));
    older.send(msg::JobInfoQuery{"none"}, 4);  // what it has is served
    env = older.recv();
    BOOST_REQUIRE(env);
    BOOST_TEST(env->as<msg::ErrorReply>().status == PMIX_ERR_NOT_FOUND);
}

BOOST_AUTO_TEST_CASE(peer_of_another_uid_refused) {
    auto log = zpmix::test::capture_log();
    if (::getuid() != 0) {
        BOOST_TEST_MESSAGE("skipped: needs root to setuid to nobody");
        return;
    }
    TempDir tmp;
    const std::string dir = tmp.path + "/run";
    Broker b(config_in(dir));
    b.start();
    // Open the path for this test only, so the refusal is the broker's, not the file system's.
    ::chmod(tmp.path.c_str(), 0755);
    ::chmod(dir.c_str(), 0755);
    ::chmod((dir + "/broker.sock").c_str(), 0777);

    auto run_peer = [&](std::vector<std::string> args) {
        int pipefd[2];
        BOOST_REQUIRE(::pipe(pipefd) == 0);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
        std::vector<char *> argv;
        for (auto &a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        pid_t pid;
        BOOST_REQUIRE(::posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) == 0);
        posix_spawn_file_actions_destroy(&fa);
        ::close(pipefd[1]);
        std::string out;
        char buf[256];
        for (ssize_t n; (n = ::read(pipefd[0], buf, sizeof buf)) > 0;) out.append(buf, n);
        ::close(pipefd[0]);
        int st = 0;
        ::waitpid(pid, &st, 0);
        return std::make_pair(WEXITSTATUS(st), out);
    };
    const std::string prog = std::string(ZPMIX_BIN_DIR) + "/../tests/zpmix_hello_peer";
    auto [rc_same, same] = run_peer({prog, b.uri()});
    BOOST_TEST(same == "welcome\n");
    auto [rc, out] = run_peer({prog, b.uri(), "--uid", "65534"});
    if (rc == 77) {
        BOOST_TEST_MESSAGE("skipped: setuid to 65534 impossible here");
        return;
    }
    BOOST_TEST(out == "nothing\n");
    BOOST_TEST(log->contains("refused an ipc connection from uid 65534"));
}

BOOST_AUTO_TEST_CASE(tcp_clients_need_the_job_secret) {
    auto log = zpmix::test::capture_log();
    TempDir tmp;
    Config c = config_in(tmp.path + "/run");
    c.tcp = "tcp://127.0.0.1:*";
    Broker b(c);
    b.add_actor<Registrar>(two_rank_job(), "s3cret");
    b.start();
    BOOST_REQUIRE(b.tcp_uri().starts_with("tcp://127.0.0.1:"));
    Peer p(b.tcp_uri(), b.tcp_keys());
    msg::Hello h;
    h.nspace = "test.ns";
    p.send(h);
    BOOST_TEST(p.error_status() == PMIX_ERR_NO_PERMISSIONS);
    h.secret = "guess";
    p.send(h);
    BOOST_TEST(p.error_status() == PMIX_ERR_NO_PERMISSIONS);
    BOOST_TEST(log->contains("wrong job secret"));
    msg::Hello launcher = tool_hello();
    launcher.role = "launcher";  // a launcher is local only
    p.send(launcher);
    BOOST_TEST(p.error_status() == PMIX_ERR_NO_PERMISSIONS);
    h.secret = "s3cret";
    const msg::Welcome w = p.hello(h);
    BOOST_TEST(w.job.nspace == "test.ns");
    // Over tcp, events come from the broker's tcp publisher.
    BOOST_TEST(w.events_uri.starts_with("tcp://127.0.0.1:"), w.events_uri);
    BOOST_TEST(w.events_uri != b.tcp_uri());
}

// A tool over tcp holds the broker's keypair (its CURVE handshake proved it): the operator's
// credential there, so it is welcome, with the tcp publisher for its events.
BOOST_AUTO_TEST_CASE(tools_over_tcp_hold_the_keypair) {
    TempDir tmp;
    Config c = config_in(tmp.path + "/run");
    c.tcp = "tcp://127.0.0.1:*";
    Broker b(c);
    b.start();
    Peer p(b.tcp_uri(), b.tcp_keys());
    BOOST_TEST(p.hello(tool_hello()).events_uri.starts_with("tcp://127.0.0.1:"));
}
