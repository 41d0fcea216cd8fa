#define BOOST_TEST_MODULE cpp_api
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdlib>

#include "zpmix/pmix.hpp"

// The C++ API over the C API, in a singleton (no broker): values of every variant type round-trip
// through put/get, fences over self complete, errors carry their PMIx status.
using namespace std::chrono_literals;

namespace {
struct Singleton {
    Singleton() {
        ::unsetenv("ZPMIX_URI");
        ::unsetenv("PMIX_NAMESPACE");
    }
};
}  // namespace

BOOST_FIXTURE_TEST_CASE(put_commit_fence_get, Singleton) {
    BOOST_TEST(!PMIx_Initialized());
    {
        zpmix::Client pmix;
        BOOST_TEST(PMIx_Initialized());
        BOOST_TEST(pmix.self().rank == 0u);
        BOOST_TEST(pmix.self().nspace == "singleton." + std::to_string(::getpid()));
        BOOST_TEST(pmix.get<std::uint32_t>(pmix.job(), PMIX_JOB_SIZE) == 1u);
        BOOST_TEST(pmix.get<std::uint16_t>(pmix.self(), PMIX_LOCAL_RANK) == 0u);

        const std::vector<zpmix::Value> values = {true,
                                                  std::uint8_t{7},
                                                  std::uint16_t{65000},
                                                  std::uint32_t{4000000000u},
                                                  std::uint64_t{1} << 60,
                                                  std::int32_t{-5},
                                                  std::int64_t{-1} << 50,
                                                  2.5,
                                                  std::string("text"),
                                                  zpmix::Bytes{std::byte{0}, std::byte{255}},
                                                  zpmix::Proc{"other", 3}};
        for (std::size_t i = 0; i < values.size(); ++i)
            pmix.put(PMIX_GLOBAL, "k" + std::to_string(i), values[i]);
        pmix.commit();
        pmix.fence({}, true);
        pmix.fence({pmix.self()});
        pmix.fence_async().get();
        for (std::size_t i = 0; i < values.size(); ++i) {
            auto got = pmix.get(pmix.self(), "k" + std::to_string(i));
            BOOST_TEST((got.variant() == values[i].variant()), "value " << i);
        }
        auto async = pmix.get_async(pmix.self(), "k8");
        BOOST_REQUIRE(async.wait_for(5s) == std::future_status::ready);
        BOOST_TEST(async.get().as<std::string>() == "text");

        BOOST_TEST(!pmix.try_get(pmix.self(), "absent"));
        try {
            pmix.get(pmix.self(), "absent");
            BOOST_FAIL("no error");
        } catch (const zpmix::Error &e) {
            BOOST_TEST(e.status == PMIX_ERR_NOT_FOUND);
        }
        auto missing = pmix.get_async(pmix.self(), "absent");
        BOOST_REQUIRE(missing.wait_for(5s) == std::future_status::ready);
        BOOST_CHECK_THROW(missing.get(), zpmix::Error);
        // A singleton has no one else to fence with.
        try {
            pmix.fence({pmix.self(), {"other.job", 0}});
            BOOST_FAIL("no error");
        } catch (const zpmix::Error &e) {
            BOOST_TEST(e.status == PMIX_ERR_UNREACH);
        }
        BOOST_CHECK_THROW(pmix.get<std::string>(pmix.job(), PMIX_JOB_SIZE), zpmix::Error);
    }
    BOOST_TEST(!PMIx_Initialized());
    pmix_value_t *v = nullptr;
    BOOST_TEST(PMIx_Get(nullptr, PMIX_JOB_SIZE, nullptr, 0, &v) == PMIX_ERR_INIT);
}
