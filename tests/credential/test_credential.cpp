#define BOOST_TEST_MODULE credential
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <string>

#include "support/process.hpp"

// PMIx_Get_credential / PMIx_Validate_credential (bindings/c/src/client_credential.cpp) in ranks
// of real jobs under `zpmix run`: cred_prog gets, validates and tampers with credentials.
namespace {

using namespace zpmix::test;

const std::string kZpmix = std::string(ZPMIX_BIN_DIR) + "/zpmix";
const std::string kProg = ZPMIX_CRED_PROG;

Child run(const TempDir &dir, const std::string &mode, const std::string &file, int n = 1) {
    return Child({kZpmix, "run", "-n", std::to_string(n), kProg, mode, file},
                 {"XDG_RUNTIME_DIR=" + dir.path});
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_job_credential_is_valid_in_its_job_only) {
    TempDir dir{"zpmix-cred"};
    const std::string file = dir.path + "/cred";
    auto a = run(dir, "get", file);
    BOOST_REQUIRE_MESSAGE(a.exit_code() == 0, a.out() + a.err());
    BOOST_TEST(count(a.out(), "got job ") == 1u, a.out());

    // Another job (another secret): the first one's credential is foreign to it; its own is
    // valid, and names this user, to both of its ranks, blocking and _nb.
    auto b = run(dir, "check", file, 2);
    BOOST_REQUIRE_MESSAGE(b.exit_code() == 0, b.out() + b.err());
    const std::string ids =
        " uid " + std::to_string(::geteuid()) + " gid " + std::to_string(::getegid());
    BOOST_TEST(count(b.out(), "foreign PMIX_ERR_INVALID_CRED\n") == 2u, b.out());
    BOOST_TEST(count(b.out(), "foreign-nb PMIX_ERR_INVALID_CRED\n") == 2u, b.out());
    BOOST_TEST(count(b.out(), "get-nb PMIX_SUCCESS type job\n") == 2u, b.out());
    BOOST_TEST(count(b.out(), "own PMIX_SUCCESS" + ids + "\n") == 2u, b.out());
    BOOST_TEST(count(b.out(), "own-nb PMIX_SUCCESS" + ids + "\n") == 2u, b.out());
    for (const char *what : {"forged", "renamed"}) {
        BOOST_TEST(count(b.out(), std::string(what) + " PMIX_ERR_INVALID_CRED\n") == 2u, b.out());
        BOOST_TEST(count(b.out(), std::string(what) + "-nb PMIX_ERR_INVALID_CRED\n") == 2u,
                   b.out());
    }
    BOOST_TEST(count(b.out(), "junk-munge PMIX_SUCCESS") == 0u, b.out());
    BOOST_TEST(count(b.out(), "junk-munge") == 4u, b.out());
}

// MUNGE where munged answers (libmunge loaded at run time); without it, asking for MUNGE only is
// PMIX_ERR_NOT_SUPPORTED, and a MUNGE credential cannot be checked (not available), never valid.
BOOST_AUTO_TEST_CASE(munge_when_munged_answers) {
    TempDir dir{"zpmix-cred"};
    auto p = run(dir, "munge", dir.path + "/unused");
    BOOST_REQUIRE_MESSAGE(p.exit_code() == 0, p.out() + p.err());
    if (count(p.out(), "munge PMIX_SUCCESS\n") == 1u) {
        BOOST_TEST(
            count(p.out(), "munge-own PMIX_SUCCESS uid " + std::to_string(::geteuid())) == 1u,
            p.out());
    } else {
        BOOST_TEST(count(p.out(), "munge PMIX_ERR_NOT_SUPPORTED\n") == 1u, p.out());
    }
}
