// zpmix: PMIx_Get_credential and PMIx_Validate_credential (and their _nb forms).
//
// Two kinds, asked for by PMIX_CRED_TYPE (a comma-separated list in order of preference; default
// "munge,job"):
// - "munge": MUNGE's credential, when libmunge.so.2 is installed (loaded at run time, so that
//   libpmix needs no MUNGE) and munged answers; valid wherever the same MUNGE key is.
// - "job": "zpmix-job:1:<nspace>:<rank>:<uid>:<gid>:<expires>:<hmac>", the HMAC-SHA-256 of what
//   precedes it keyed with the job's secret (ZPMIX_SECRET, which only the job's processes and its
//   broker have). Valid for kJobTtl seconds to processes holding the same secret: the ranks of the
//   job on one node (each node's part of a job has its own secret).
// Validating names the holder's uid and gid (PMIX_USERID, PMIX_GRPID); anything forged, expired,
// of another job or of an unknown kind is PMIX_ERR_INVALID_CRED; a MUNGE credential while munged
// does not answer, PMIX_ERR_NOT_AVAILABLE.
#include <dlfcn.h>
#include <sodium.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "pmix.h"
#include "process.hpp"

namespace {

constexpr std::time_t kJobTtl = 300;  // as MUNGE's default
constexpr std::string_view kJobPrefix = "zpmix-job:1:";
constexpr std::string_view kMungePrefix = "MUNGE:";
constexpr int kMungeSocket = 6, kMungeTimeout = 7;  // munge.h's munge_err_t

// libmunge's two calls (munge.h), resolved at run time; null when it is not installed.
struct Munge {
    using Encode = int (*)(char **cred, void *ctx, const void *buf, int len);
    using Decode = int (*)(const char *cred, void *ctx, void **buf, int *len, uid_t *uid,
                           gid_t *gid);
    Encode encode = nullptr;
    Decode decode = nullptr;
};

const Munge &munge() {
    static Munge m;
    static std::once_flag once;
    std::call_once(once, [] {
        void *lib = dlopen("libmunge.so.2", RTLD_NOW | RTLD_LOCAL);
        if (lib == nullptr) return;
        m.encode = reinterpret_cast<Munge::Encode>(dlsym(lib, "munge_encode"));
        m.decode = reinterpret_cast<Munge::Decode>(dlsym(lib, "munge_decode"));
        if (m.encode == nullptr || m.decode == nullptr) m = Munge{};
    });
    return m;
}

std::string hmac_hex(std::string_view key, std::string_view text) {
    static const int sodium = sodium_init();  // CPU features; idempotent, thread-safe
    (void)sodium;
    unsigned char mac[crypto_auth_hmacsha256_BYTES];
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, reinterpret_cast<const unsigned char *>(key.data()),
                                key.size());
    crypto_auth_hmacsha256_update(&st, reinterpret_cast<const unsigned char *>(text.data()),
                                  text.size());
    crypto_auth_hmacsha256_final(&st, mac);
    char hex[2 * sizeof mac + 1];
    sodium_bin2hex(hex, sizeof hex, mac, sizeof mac);
    return hex;
}

bool initialized() {
    return zpmix::c::with_client(false, [](zpmix::client::Session &, const pmix_proc_t &) {}) ==
           PMIX_SUCCESS;
}

// The caller's job and secret; false before PMIx_Init or for a process without a job's secret.
bool job_identity(pmix_proc_t &me, std::string &secret) {
    const pmix_status_t rc = zpmix::c::with_client(
        false, [&](zpmix::client::Session &, const pmix_proc_t &p) { me = p; });
    const char *s = std::getenv("ZPMIX_SECRET");
    if (rc != PMIX_SUCCESS || s == nullptr || *s == '\0') return false;
    secret = s;
    return true;
}

pmix_status_t job_credential(std::string &out) {
    pmix_proc_t me;
    std::string secret;
    if (!job_identity(me, secret)) return PMIX_ERR_NOT_SUPPORTED;
    const std::string text = std::string(kJobPrefix) + me.nspace + ":" + std::to_string(me.rank) +
                             ":" + std::to_string(geteuid()) + ":" + std::to_string(getegid()) +
                             ":" + std::to_string(std::time(nullptr) + kJobTtl);
    out = text + ":" + hmac_hex(secret, text);
    return PMIX_SUCCESS;
}

pmix_status_t munge_credential(std::string &out) {
    const Munge &m = munge();
    if (m.encode == nullptr) return PMIX_ERR_NOT_SUPPORTED;
    char *cred = nullptr;
    if (m.encode(&cred, nullptr, nullptr, 0) != 0 || cred == nullptr) {
        std::free(cred);
        return PMIX_ERR_NOT_SUPPORTED;  // munged not running, or refusing us
    }
    out = cred;
    std::free(cred);
    return PMIX_SUCCESS;
}

std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> out;
    while (true) {
        const auto at = s.find(sep);
        out.emplace_back(s.substr(0, at));
        if (at == std::string_view::npos) return out;
        s.remove_prefix(at + 1);
    }
}

// The kinds asked for, in order; PMIX_ERR_BAD_PARAM for PMIX_CRED_TYPE that is not a string.
pmix_status_t kinds_of(const pmix_info_t info[], size_t ninfo, std::vector<std::string> &kinds) {
    kinds = {"munge", "job"};
    for (size_t i = 0; info != nullptr && i < ninfo; ++i) {
        if (!PMIX_CHECK_KEY(&info[i], PMIX_CRED_TYPE)) continue;
        if (info[i].value.type != PMIX_STRING || info[i].value.data.string == nullptr)
            return PMIX_ERR_BAD_PARAM;
        kinds = split(info[i].value.data.string, ',');
    }
    return PMIX_SUCCESS;
}

pmix_status_t get_credential(const pmix_info_t info[], size_t ninfo, std::string &cred,
                             std::string &kind) {
    if (!initialized()) return PMIX_ERR_INIT;
    std::vector<std::string> kinds;
    if (pmix_status_t rc = kinds_of(info, ninfo, kinds); rc != PMIX_SUCCESS) return rc;
    for (const auto &k : kinds) {
        const pmix_status_t rc = k == "munge" ? munge_credential(cred)
                                 : k == "job" ? job_credential(cred)
                                              : PMIX_ERR_NOT_SUPPORTED;
        if (rc == PMIX_SUCCESS) {
            kind = k;
            return rc;
        }
    }
    return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t validate_job(std::string_view cred, uid_t &uid, gid_t &gid) {
    // nspace:rank:uid:gid:expires:mac after the prefix; a namespace holds no ':'.
    const auto fields = split(cred.substr(kJobPrefix.size()), ':');
    pmix_proc_t me;
    std::string secret;
    if (fields.size() != 6 || !job_identity(me, secret)) return PMIX_ERR_INVALID_CRED;
    const std::string_view text = cred.substr(0, cred.size() - fields[5].size() - 1);
    const std::string want = hmac_hex(secret, text);
    if (fields[5].size() != want.size() ||
        sodium_memcmp(fields[5].data(), want.data(), want.size()) != 0)
        return PMIX_ERR_INVALID_CRED;
    char *end = nullptr;
    const long long expires = std::strtoll(fields[4].c_str(), &end, 10);
    if (*end != '\0' || expires < std::time(nullptr)) return PMIX_ERR_INVALID_CRED;
    uid = static_cast<uid_t>(std::strtoul(fields[2].c_str(), nullptr, 10));
    gid = static_cast<gid_t>(std::strtoul(fields[3].c_str(), nullptr, 10));
    return PMIX_SUCCESS;
}

pmix_status_t validate_munge(const std::string &cred, uid_t &uid, gid_t &gid) {
    const Munge &m = munge();
    if (m.decode == nullptr) return PMIX_ERR_NOT_SUPPORTED;
    void *payload = nullptr;
    int len = 0;
    const int rc = m.decode(cred.c_str(), nullptr, &payload, &len, &uid, &gid);
    std::free(payload);
    // EMUNGE_SOCKET, EMUNGE_TIMEOUT: munged did not answer, which says nothing of the credential.
    if (rc == kMungeSocket || rc == kMungeTimeout) return PMIX_ERR_NOT_AVAILABLE;
    return rc == 0 ? PMIX_SUCCESS : PMIX_ERR_INVALID_CRED;
}

pmix_status_t validate(const pmix_byte_object_t *bo, uid_t &uid, gid_t &gid) {
    if (bo == nullptr || (bo->bytes == nullptr && bo->size > 0)) return PMIX_ERR_BAD_PARAM;
    if (!initialized()) return PMIX_ERR_INIT;
    std::string cred(bo->bytes ? bo->bytes : "", bo->size);
    while (!cred.empty() && cred.back() == '\0') cred.pop_back();
    if (cred.starts_with(kJobPrefix)) return validate_job(cred, uid, gid);
    if (cred.starts_with(kMungePrefix)) return validate_munge(cred, uid, gid);
    return PMIX_ERR_INVALID_CRED;
}

void load_bytes(pmix_byte_object_t *bo, const std::string &s) {
    bo->bytes = static_cast<char *>(std::malloc(s.size() + 1));
    std::memcpy(bo->bytes, s.c_str(), s.size() + 1);
    bo->size = s.size();
}

pmix_info_t *ids_info(uid_t uid, gid_t gid) {
    pmix_info_t *out = nullptr;
    PMIX_INFO_CREATE(out, 2);
    const std::uint32_t u = uid, g = gid;
    PMIX_INFO_LOAD(&out[0], PMIX_USERID, &u, PMIX_UINT32);
    PMIX_INFO_LOAD(&out[1], PMIX_GRPID, &g, PMIX_UINT32);
    return out;
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Get_credential(const pmix_info_t info[], size_t ninfo,
                                              pmix_byte_object_t *credential) {
    if (credential == nullptr) return PMIX_ERR_BAD_PARAM;
    std::string cred, kind;
    const pmix_status_t rc = get_credential(info, ninfo, cred, kind);
    if (rc == PMIX_SUCCESS) load_bytes(credential, cred);
    return rc;
}

// Made at once (MUNGE answers locally); the answer goes to cbfunc on the library's progress
// thread, as every _nb answer does, with PMIX_CRED_TYPE naming the kind.
PMIX_EXPORT pmix_status_t PMIx_Get_credential_nb(const pmix_info_t info[], size_t ninfo,
                                                 pmix_credential_cbfunc_t cbfunc, void *cbdata) {
    if (cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    std::string cred, kind;
    const pmix_status_t rc = get_credential(info, ninfo, cred, kind);
    if (rc != PMIX_SUCCESS) return rc;
    return zpmix::c::with_client(false, [&](zpmix::client::Session &session, const pmix_proc_t &) {
        session.post([cred, kind, cbfunc, cbdata] {
            pmix_byte_object_t bo;
            load_bytes(&bo, cred);
            pmix_info_t type;
            PMIX_INFO_LOAD(&type, PMIX_CRED_TYPE, kind.c_str(), PMIX_STRING);
            cbfunc(PMIX_SUCCESS, &bo, &type, 1, cbdata);
            PMIX_INFO_DESTRUCT(&type);
            std::free(bo.bytes);
        });
    });
}

PMIX_EXPORT pmix_status_t PMIx_Validate_credential(const pmix_byte_object_t *cred,
                                                   const pmix_info_t info[], size_t ninfo,
                                                   pmix_info_t **results, size_t *nresults) {
    (void)info;
    (void)ninfo;
    uid_t uid = 0;
    gid_t gid = 0;
    const pmix_status_t rc = validate(cred, uid, gid);
    if (rc == PMIX_SUCCESS && results != nullptr && nresults != nullptr) {
        *results = ids_info(uid, gid);
        *nresults = 2;
    }
    return rc;
}

PMIX_EXPORT pmix_status_t PMIx_Validate_credential_nb(const pmix_byte_object_t *cred,
                                                      const pmix_info_t info[], size_t ninfo,
                                                      pmix_validation_cbfunc_t cbfunc,
                                                      void *cbdata) {
    (void)info;
    (void)ninfo;
    if (cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    uid_t uid = 0;
    gid_t gid = 0;
    const pmix_status_t rc = validate(cred, uid, gid);
    if (rc == PMIX_ERR_BAD_PARAM || rc == PMIX_ERR_INIT) return rc;
    return zpmix::c::with_client(false, [&](zpmix::client::Session &session, const pmix_proc_t &) {
        session.post([rc, uid, gid, cbfunc, cbdata] {
            if (rc != PMIX_SUCCESS) return cbfunc(rc, nullptr, 0, cbdata);
            pmix_info_t *ids = ids_info(uid, gid);
            cbfunc(rc, ids, 2, cbdata);
            PMIX_INFO_FREE(ids, 2);
        });
    });
}

}  // extern "C"
