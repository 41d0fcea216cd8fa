#define BOOST_TEST_MODULE tree_boot
#include <boost/test/unit_test.hpp>

#include <string>

#include "actors/tree/boot.hpp"

// Which way the brokers start: srun inside a Slurm allocation with srun at hand, rsh otherwise,
// unless asked; srun asked where it cannot work is refused with why.
using zpmix::tree::resolve_launcher;

BOOST_AUTO_TEST_CASE(auto_is_srun_inside_an_allocation_only) {
    std::string error;
    BOOST_TEST(resolve_launcher("auto", true, true, error) == "srun");
    BOOST_TEST(error.empty());
    BOOST_TEST(resolve_launcher("auto", false, true, error) == "rsh");
    BOOST_TEST(resolve_launcher("auto", true, false, error) == "rsh");
    BOOST_TEST(resolve_launcher("", true, true, error) == "srun");
    BOOST_TEST(error.empty());
}

BOOST_AUTO_TEST_CASE(asked_launchers) {
    std::string error;
    BOOST_TEST(resolve_launcher("rsh", true, true, error) == "rsh");
    BOOST_TEST(error.empty());
    BOOST_TEST(resolve_launcher("srun", true, true, error) == "srun");
    BOOST_TEST(error.empty());
    resolve_launcher("srun", false, true, error);
    BOOST_TEST(error.find("SLURM_JOB_ID is not set") != std::string::npos, error);
    resolve_launcher("srun", true, false, error);
    BOOST_TEST(error.find("srun is not on the PATH") != std::string::npos, error);
    resolve_launcher("ssh", true, true, error);
    BOOST_TEST(error.find("auto, rsh or srun") != std::string::npos, error);
}
