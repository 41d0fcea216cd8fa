#define BOOST_TEST_MODULE fence_board
#include <boost/test/unit_test.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <pmix_common.h>

#include "actors/protocol/shm/fence_board.hpp"

// The fence board by itself: ranks are forked processes of this test, the broker's part is
// played by calls on the board.
using namespace zpmix;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

struct Board {
    std::string dir = [] {
        char tmpl[] = "/tmp/zpmix-board-XXXXXX";
        return std::string(::mkdtemp(tmpl));
    }();
    std::string path = dir + "/fence-board";
    explicit Board(std::uint32_t ranks) {
        BOOST_REQUIRE_EQUAL(FenceBoard::create(path, ranks), "");
    }
    ~Board() { fs::remove_all(dir); }
    std::unique_ptr<FenceBoard> map() const {
        std::string error;
        auto b = FenceBoard::open(path, error);
        BOOST_REQUIRE_MESSAGE(b, error);
        return b;
    }
};

bool alive() {
    return true;
}

FenceBoard::Clock::time_point in(std::chrono::milliseconds d) {
    return FenceBoard::Clock::now() + d;
}

// Rank r's card of its c-th commit: its size varies, up to beyond what the board holds.
std::string card(std::uint32_t r, std::uint32_t c) {
    const std::size_t size = c % 7 == 0 ? FenceBoard::kCardMax + 1 : 1 + (r * 977 + c * 131) % 9000;
    return std::string(size, static_cast<char>('a' + (r + c) % 26));
}

// Runs fn(rank) in `n` forked processes; true when every one exited 0.
template <class Fn>
bool in_processes(std::uint32_t n, Fn fn) {
    std::vector<pid_t> pids;
    for (std::uint32_t r = 0; r < n; ++r) {
        const pid_t pid = ::fork();
        if (pid == 0) ::_exit(fn(r) ? 0 : 1);
        pids.push_back(pid);
    }
    bool ok = true;
    for (pid_t pid : pids) {
        int status = 0;
        ::waitpid(pid, &status, 0);
        ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    return ok;
}

}  // namespace

// Four processes, 300 fences: each posts a new card before every fence and, after it, finds every
// other rank's card of that round or a later one, whole (the owners post their next card while
// the others still read).
BOOST_AUTO_TEST_CASE(ranks_fence_and_read_each_others_cards) {
    constexpr std::uint32_t n = 4, rounds = 300;
    Board board(n);
    BOOST_TEST(in_processes(n, [&](std::uint32_t me) {
        auto b = board.map();
        for (std::uint32_t k = 0; k < rounds; ++k) {
            const std::string mine = card(me, k + 1);
            b->post_card(me, k + 1, {mine});
            if (b->arrive(me, k) != PMIX_SUCCESS) return false;
            if (b->wait(k, in(10s), alive) != PMIX_SUCCESS) return false;
            for (std::uint32_t r = 0; r < n; ++r) {
                std::string got;
                const FenceBoard::Card c = b->read_card(r, got);
                if (c.commits < k + 1) return false;
                if (c.too_big != (card(r, c.commits).size() > FenceBoard::kCardMax)) return false;
                if (!c.too_big && got != card(r, c.commits)) return false;
            }
        }
        return true;
    }));
}

BOOST_AUTO_TEST_CASE(a_fence_waits_for_every_rank_and_times_out_without_one) {
    Board board(3);
    auto b = board.map();
    BOOST_TEST(b->ranks() == 3u);
    BOOST_TEST(b->arrive(0, 0) == PMIX_SUCCESS);
    BOOST_TEST(b->arrive(1, 0) == PMIX_SUCCESS);
    BOOST_TEST(b->wait(0, in(50ms), alive) == PMIX_ERR_TIMEOUT);
    BOOST_TEST(b->arrive(2, 0) == PMIX_SUCCESS);
    BOOST_TEST(b->wait(0, in(5s), alive) == PMIX_SUCCESS);
    BOOST_TEST(b->peek(1).commits == 0u);  // nothing committed
}

// A rank that arrived at fence 1 and then ended does not fail it; it fails fence 2.
BOOST_AUTO_TEST_CASE(a_rank_that_ends_fails_the_fences_it_did_not_arrive_at) {
    Board board(3);
    auto b = board.map();
    for (std::uint32_t r = 0; r < 3; ++r) BOOST_TEST(b->arrive(r, 0) == PMIX_SUCCESS);
    BOOST_TEST(b->arrive(2, 1) == PMIX_SUCCESS);
    b->rank_ended(2, PMIX_ERR_PROC_TERM_WO_SYNC);
    BOOST_TEST(b->wait(0, in(5s), alive) == PMIX_SUCCESS);
    BOOST_TEST(b->arrive(0, 1) == PMIX_SUCCESS);
    BOOST_TEST(b->wait(1, in(50ms), alive) == PMIX_ERR_TIMEOUT);  // rank 1 still to come
    BOOST_TEST(b->arrive(1, 1) == PMIX_SUCCESS);
    BOOST_TEST(b->wait(1, in(5s), alive) == PMIX_SUCCESS);
    BOOST_TEST(b->arrive(0, 2) == PMIX_SUCCESS);
    BOOST_TEST(b->wait(2, in(5s), alive) == PMIX_ERR_PROC_TERM_WO_SYNC);
}

// A rank waiting when the broker marks the board failed returns that status.
BOOST_AUTO_TEST_CASE(a_waiting_rank_learns_of_a_failure) {
    Board board(2);
    auto b = board.map();
    BOOST_TEST(b->arrive(0, 0) == PMIX_SUCCESS);
    std::atomic<std::int32_t> status{1};
    std::thread waiter([&] { status = b->wait(0, in(60s), alive); });
    auto broker = board.map();
    broker->fail_all(PMIX_ERR_NOT_SUPPORTED);
    waiter.join();
    BOOST_TEST(status.load() == PMIX_ERR_NOT_SUPPORTED);
}

BOOST_AUTO_TEST_CASE(a_waiter_notices_a_lost_broker_or_a_stop) {
    Board board(2);
    auto b = board.map();
    BOOST_TEST(b->arrive(0, 0) == PMIX_SUCCESS);
    BOOST_TEST(b->wait(0, in(60s), [] { return false; }) == PMIX_ERR_LOST_CONNECTION);
    std::atomic<bool> stop{true};
    BOOST_TEST(b->wait(0, in(60s), alive, &stop) == PMIX_ERR_LOST_CONNECTION);
}

// A rank more than a ring's length of fences ahead of the others is told so; it does not count
// for a fence it has not reached.
BOOST_AUTO_TEST_CASE(a_rank_too_far_ahead_is_refused) {
    Board board(2);
    auto b = board.map();
    for (std::uint32_t k = 0; k < FenceBoard::kRing; ++k)
        BOOST_TEST(b->arrive(0, k) == PMIX_SUCCESS);
    BOOST_TEST(b->arrive(0, FenceBoard::kRing) == PMIX_ERR_OUT_OF_RESOURCE);
    BOOST_TEST(b->arrive(1, 0) == PMIX_SUCCESS);
    BOOST_TEST(b->wait(0, in(5s), alive) == PMIX_SUCCESS);
    BOOST_TEST(b->arrive(0, FenceBoard::kRing) == PMIX_SUCCESS);
}

BOOST_AUTO_TEST_CASE(cards_too_big_for_the_board_are_marked) {
    Board board(2);
    auto b = board.map();
    const std::string big(FenceBoard::kCardMax + 1, 'x');
    b->post_card(1, 1, {"ab", "cd"});
    std::string got = "keep:";
    FenceBoard::Card c = b->read_card(1, got);
    BOOST_TEST((c.commits == 1u && !c.too_big && got == "keep:abcd"));
    b->post_card(1, 2, {big});
    got.clear();
    c = b->read_card(1, got);
    BOOST_TEST((c.commits == 2u && c.too_big && got.empty()));
    BOOST_TEST((b->peek(1).commits == 2u && b->peek(1).too_big));
}

BOOST_AUTO_TEST_CASE(what_is_not_a_board_is_not_mapped) {
    Board board(2);
    std::string error;
    bool missing = false;
    BOOST_TEST(!FenceBoard::open(board.dir + "/none", error, &missing));
    BOOST_TEST(error.find("none") != std::string::npos);
    BOOST_TEST(missing);  // no file at all: a job's board its launcher removed
    std::ofstream(board.dir + "/junk") << "not a board";
    error.clear();
    BOOST_TEST(!FenceBoard::open(board.dir + "/junk", error, &missing));
    BOOST_TEST(error.find("not a fence board") != std::string::npos);
    BOOST_TEST(!missing);
    BOOST_TEST(FenceBoard::create(board.path, 2) != "");  // never over an existing one
}

// Held collectives: four processes, 100 of them in a row; the last to arrive at each publishes
// its number as the value, which every rank reads.
BOOST_AUTO_TEST_CASE(a_held_collective_gives_every_rank_its_completers_outcome) {
    Board b(4);
    BOOST_TEST(in_processes(4, [&](std::uint32_t r) {
        auto board = b.map();
        for (std::uint32_t k = 0; k < 100; ++k) {
            bool completer = false;
            if (board->arrive_held(r, k, 7, false, completer) != PMIX_SUCCESS) return false;
            if (completer) {
                if (!board->claim(k) || board->ids(k, 7) != FenceBoard::Ids::same) return false;
                board->publish(k, PMIX_SUCCESS, 1000 + k);
            }
            std::uint64_t value = 0;
            if (board->wait_held(k, in(10s), alive, nullptr, value) != PMIX_SUCCESS ||
                value != 1000 + k)
                return false;
        }
        return true;
    }));
}

// A waiter whose deadline passes claims the collective and publishes PMIX_ERR_TIMEOUT: the
// latecomer, last to arrive, cannot claim it and gets that status at once.
BOOST_AUTO_TEST_CASE(a_held_collective_times_out_and_its_latecomer_is_refused) {
    Board b(2);
    auto board = b.map();
    bool completer = true;
    BOOST_TEST(board->arrive_held(0, 0, 7, false, completer) == PMIX_SUCCESS);
    BOOST_TEST(!completer);
    std::uint64_t value = 0;
    BOOST_TEST(board->wait_held(0, in(50ms), alive, nullptr, value) == PMIX_ERR_TIMEOUT);
    BOOST_TEST(board->arrive_held(1, 0, 7, false, completer) == PMIX_SUCCESS);
    BOOST_TEST(completer);
    BOOST_TEST(!board->claim(0));
    const auto t0 = FenceBoard::Clock::now();
    BOOST_TEST(board->wait_held(0, in(10s), alive, nullptr, value) == PMIX_ERR_TIMEOUT);
    BOOST_TEST((FenceBoard::Clock::now() - t0 < 1s));
}

// What the ranks named: different collectives, or the same with one needing the broker.
BOOST_AUTO_TEST_CASE(a_held_collective_knows_what_its_ranks_named) {
    Board b(2);
    auto board = b.map();
    bool completer = false;
    BOOST_TEST(board->arrive_held(0, 0, 7, false, completer) == PMIX_SUCCESS);
    BOOST_TEST(board->arrive_held(1, 0, 8, false, completer) == PMIX_SUCCESS);
    BOOST_TEST((board->ids(0, 8) == FenceBoard::Ids::different));
    BOOST_TEST(board->arrive_held(0, 1, 7, true, completer) == PMIX_SUCCESS);
    BOOST_TEST(board->arrive_held(1, 1, 7, false, completer) == PMIX_SUCCESS);
    BOOST_TEST((board->ids(1, 7) == FenceBoard::Ids::same_by_broker));
}

// A rank that ends before arriving fails the held collectives from there; a completer that ends
// before publishing fails its own.
BOOST_AUTO_TEST_CASE(a_rank_that_ends_fails_the_held_collectives_it_left) {
    Board b(3);
    auto board = b.map();
    bool completer = false;
    BOOST_TEST(board->arrive_held(0, 0, 7, false, completer) == PMIX_SUCCESS);
    BOOST_TEST(board->arrive_held(1, 0, 7, false, completer) == PMIX_SUCCESS);
    BOOST_TEST(board->arrive_held(2, 0, 7, false, completer) == PMIX_SUCCESS);
    BOOST_TEST(completer);
    board->rank_ended(2, PMIX_ERR_PROC_TERM_WO_SYNC);  // it claimed nothing, published nothing
    std::uint64_t value = 0;
    BOOST_TEST(board->wait_held(0, in(10s), alive, nullptr, value) == PMIX_ERR_PROC_TERM_WO_SYNC);
    BOOST_TEST(board->arrive_held(0, 1, 7, false, completer) == PMIX_SUCCESS);
    BOOST_TEST(board->wait_held(1, in(10s), alive, nullptr, value) == PMIX_ERR_PROC_TERM_WO_SYNC);
}
