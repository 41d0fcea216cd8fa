#define BOOST_TEST_MODULE peer_log_limit
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "actors/runtime/peer_log_limit.hpp"

using namespace zpmix;
using namespace std::chrono_literals;

namespace {

// A logger whose lines land in a string.
struct Captured {
    std::ostringstream out;
    std::shared_ptr<spdlog::logger> log = std::make_shared<spdlog::logger>(
        "captured", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
    Captured() { log->set_pattern("%v"); }
};

}  // namespace

// One peer gets `lines` lines an interval; the next it may have says how many were left out.
// Another peer has its own count meanwhile.
BOOST_AUTO_TEST_CASE(a_peer_gets_its_lines_then_the_count_of_those_left_out) {
    PeerLogLimit limit({.lines = 3, .overall = 100, .interval = 100ms});
    std::uint64_t suppressed = 99;
    for (int i = 0; i < 3; ++i) {
        BOOST_TEST(limit.allow("pid 1", suppressed));
        BOOST_TEST(suppressed == 0u);
    }
    for (int i = 0; i < 1000; ++i) BOOST_TEST(!limit.allow("pid 1", suppressed));
    BOOST_TEST(limit.allow("pid 2", suppressed));
    std::this_thread::sleep_for(120ms);  // its interval is over
    BOOST_TEST(limit.allow("pid 1", suppressed));
    BOOST_TEST(suppressed == 1000u);
    BOOST_TEST(PeerLogLimit::suffix(suppressed) == " (1000 more suppressed)");
    BOOST_TEST(PeerLogLimit::suffix(0).empty());
}

// A peer that fell silent after its lines were cut short: the sweep says how many, once; a peer
// quiet for an interval is forgotten.
BOOST_AUTO_TEST_CASE(the_sweep_counts_what_a_silent_peer_left_out) {
    Captured c;
    PeerLogLimit limit({.lines = 2, .overall = 100, .interval = 100ms});
    std::uint64_t suppressed = 0;
    for (int i = 0; i < 7; ++i) limit.allow("tcp 10.0.0.9", suppressed);
    limit.allow("pid 5", suppressed);
    limit.sweep(*c.log);
    BOOST_TEST(c.out.str().empty());  // its interval is not over
    std::this_thread::sleep_for(120ms);
    limit.sweep(*c.log);
    limit.sweep(*c.log);
    const std::string said = c.out.str();
    BOOST_TEST(said ==
               "tcp 10.0.0.9: 5 more log lines it caused were suppressed (at most 2 every "
               "100 ms)\n");
    // Said: its next line carries no count again.
    BOOST_TEST(limit.allow("tcp 10.0.0.9", suppressed));
    BOOST_TEST(suppressed == 0u);
}

// Many peers (or one under many pids) get `overall` lines an interval together; beyond
// `max_peers` they are counted together.
BOOST_AUTO_TEST_CASE(all_peers_together_are_bounded) {
    PeerLogLimit limit({.lines = 10, .overall = 5, .interval = 10s, .max_peers = 3});
    std::uint64_t suppressed = 0;
    int allowed = 0;
    for (int pid = 1; pid <= 50; ++pid)
        allowed += limit.allow("pid " + std::to_string(pid), suppressed);
    BOOST_TEST(allowed == 5);
    Captured c;
    PeerLogLimit few({.lines = 1, .overall = 100, .interval = 100ms, .max_peers = 2});
    for (int pid = 1; pid <= 10; ++pid) few.allow("pid " + std::to_string(pid), suppressed);
    // pids 1 and 2 apart; 3..10 as one "other peers", whose first line was allowed.
    for (int pid = 1; pid <= 10; ++pid)
        BOOST_TEST(!few.allow("pid " + std::to_string(pid), suppressed));
    std::this_thread::sleep_for(120ms);
    few.sweep(*c.log);
    BOOST_TEST(c.out.str().find("other peers: 15 more log lines") != std::string::npos,
               c.out.str());
}

BOOST_AUTO_TEST_CASE(peers_are_named_by_what_the_kernel_or_libzmq_vouch_for) {
    PeerCredentials ipc;
    ipc.ipc = true;
    ipc.pid = 42;
    BOOST_TEST(peer_key(ipc, "x") == "pid 42");
    PeerCredentials tcp;
    tcp.tcp = true;
    tcp.address = "192.0.2.7";
    BOOST_TEST(peer_key(tcp, "x") == "tcp 192.0.2.7");
    BOOST_TEST(peer_key({}, std::string("\x01\xab", 2)) == "peer 01ab");
}
