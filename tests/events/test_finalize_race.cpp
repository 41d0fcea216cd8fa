#define BOOST_TEST_MODULE finalize_race
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <pmix.h>

// PMIx_Finalize while an event handler calls PMIx_Notify_event (in a singleton: no broker): the
// handler's calls keep taking the library's events object while the main thread finalizes, so
// one of them holds it across the moment Finalize lets it go. Finalize returns, the handler's
// calls end with PMIX_ERR_INIT, nothing waits on the thread it runs on.
using namespace std::chrono_literals;

namespace {

constexpr pmix_status_t kGo = PMIX_EXTERNAL_ERR_BASE - 11;    // starts the handler
constexpr pmix_status_t kEcho = PMIX_EXTERNAL_ERR_BASE - 12;  // what the handler notifies
constexpr auto kDeadline = 5s;
constexpr int kRounds = 40;

std::mutex g_mu;
std::condition_variable g_cv;
bool g_entered = false;          // the handler runs
bool g_returned = false;         // the handler returned
pmix_status_t g_last = 0;        // its last PMIx_Notify_event's status
long g_calls = 0;                // how many it made
std::vector<pmix_info_t> g_big;  // a large payload: each call holds the events object longer

void notify_until_finalized(size_t, pmix_status_t, const pmix_proc_t *, pmix_info_t[], size_t,
                            pmix_info_t[], size_t, pmix_event_notification_cbfunc_fn_t cbfunc,
                            void *cbdata) {
    {
        std::lock_guard lock(g_mu);
        g_entered = true;
    }
    g_cv.notify_all();
    const auto until = std::chrono::steady_clock::now() + kDeadline;
    pmix_status_t rc = PMIX_SUCCESS;
    long calls = 0;
    // Bounded: without a finalize under way, the deadline ends it (and the test fails below).
    while (rc == PMIX_SUCCESS && std::chrono::steady_clock::now() < until) {
        rc = PMIx_Notify_event(kEcho, nullptr, PMIX_RANGE_PROC_LOCAL, g_big.data(), g_big.size(),
                               nullptr, nullptr);
        ++calls;
    }
    cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
    {
        std::lock_guard lock(g_mu);
        g_last = rc;
        g_calls = calls;
        g_returned = true;
    }
    g_cv.notify_all();
}

// One round: init, a handler that notifies until finalized, finalize while it runs.
void round(int i) {
    BOOST_TEST_INFO("round " << i);
    {
        std::lock_guard lock(g_mu);
        g_entered = g_returned = false;
        g_last = 0;
        g_calls = 0;
    }
    BOOST_REQUIRE_EQUAL(PMIx_Init(nullptr, nullptr, 0), PMIX_SUCCESS);
    pmix_status_t code = kGo;
    const pmix_status_t id =
        PMIx_Register_event_handler(&code, 1, nullptr, 0, notify_until_finalized, nullptr, nullptr);
    BOOST_REQUIRE_GE(id, 0);
    // With a callback: the main thread goes on while the handler runs on the progress thread.
    BOOST_REQUIRE_EQUAL(
        PMIx_Notify_event(
            kGo, nullptr, PMIX_RANGE_PROC_LOCAL, nullptr, 0, [](pmix_status_t, void *) {}, nullptr),
        PMIX_SUCCESS);
    {
        std::unique_lock lock(g_mu);
        BOOST_REQUIRE(g_cv.wait_for(lock, kDeadline, [] { return g_entered; }));
    }
    BOOST_REQUIRE_EQUAL(PMIx_Finalize(nullptr, 0), PMIX_SUCCESS);
    std::unique_lock lock(g_mu);
    BOOST_REQUIRE(g_cv.wait_for(lock, kDeadline, [] { return g_returned; }));
    BOOST_TEST(g_last == PMIX_ERR_INIT);  // not a timeout: finalize ended its calls
    BOOST_TEST(g_calls >= 1);
}

// A hang is the bug: the watchdog fails the test at once when the rounds do not end in time (the
// hung threads cannot be joined).
class Watchdog {
  public:
    Watchdog()
        : thread_([this] {
              std::unique_lock lock(mu_);
              if (cv_.wait_for(lock, kDeadline * 4, [this] { return done_; })) return;
              std::fprintf(stderr, "finalize_while_a_handler_notifies: a round hung\n");
              std::fflush(stderr);
              std::_Exit(1);
          }) {}
    ~Watchdog() {
        {
            std::lock_guard lock(mu_);
            done_ = true;
        }
        cv_.notify_all();
        thread_.join();
    }

  private:
    std::mutex mu_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread thread_;
};

}  // namespace

BOOST_AUTO_TEST_CASE(finalize_while_a_handler_notifies) {
    ::unsetenv("ZPMIX_URI");
    ::unsetenv("PMIX_NAMESPACE");
    g_big.resize(200);
    for (std::size_t i = 0; i < g_big.size(); ++i) {
        const std::string key = "big." + std::to_string(i);
        const std::string value(256, 'x');
        PMIX_INFO_LOAD(&g_big[i], key.c_str(), value.c_str(), PMIX_STRING);
    }
    {
        Watchdog watchdog;
        for (int i = 0; i < kRounds; ++i) round(i);
    }
    BOOST_TEST(!PMIx_Initialized());
    for (auto &info : g_big) PMIX_INFO_DESTRUCT(&info);
}
