#include "actors/tree/munge_keys.hpp"

#include <munge.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>

namespace zpmix::tree {

namespace {

using Context = std::unique_ptr<std::remove_pointer_t<munge_ctx_t>, decltype(&munge_ctx_destroy)>;

[[noreturn]] void fail(const char *what, munge_err_t err, munge_ctx_t ctx) {
    const char *why = ctx ? munge_ctx_strerror(ctx) : nullptr;
    throw std::runtime_error(std::string("MUNGE ") + what + ": " +
                             (why ? why : munge_strerror(err)));
}

Context new_context(const std::string &socket) {
    Context ctx(munge_ctx_create(), &munge_ctx_destroy);
    if (!ctx) throw std::runtime_error("MUNGE: out of memory");
    if (!socket.empty())
        if (munge_err_t err = munge_ctx_set(ctx.get(), MUNGE_OPT_SOCKET, socket.c_str());
            err != EMUNGE_SUCCESS)
            fail("socket", err, ctx.get());
    return ctx;
}

}  // namespace

std::string seal_keys(const std::string &public_key, const std::string &secret_key,
                      const std::string &socket) {
    Context ctx = new_context(socket);
    // Only this uid may decode it (root's munged would decode any otherwise).
    if (munge_err_t err = munge_ctx_set(ctx.get(), MUNGE_OPT_UID_RESTRICTION, ::getuid());
        err != EMUNGE_SUCCESS)
        fail("context", err, ctx.get());
    const std::string payload = public_key + "\n" + secret_key;
    char *cred = nullptr;
    if (munge_err_t err =
            munge_encode(&cred, ctx.get(), payload.data(), static_cast<int>(payload.size()));
        err != EMUNGE_SUCCESS)
        fail("encode", err, ctx.get());
    std::string out(cred);
    std::free(cred);
    return out;
}

void open_keys(const std::string &credential, const std::string &socket, std::string &public_key,
               std::string &secret_key) {
    Context ctx = new_context(socket);
    void *data = nullptr;
    int len = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    const munge_err_t err = munge_decode(credential.c_str(), ctx.get(), &data, &len, &uid, &gid);
    // A payload may come with an error (an expired or replayed credential): it is not used.
    std::unique_ptr<void, decltype(&std::free)> owned(data, &std::free);
    if (err != EMUNGE_SUCCESS) fail("decode", err, ctx.get());
    if (uid != ::getuid())
        throw std::runtime_error("the keys' MUNGE credential was made by uid " +
                                 std::to_string(uid) + ", not this broker's");
    const std::string payload(static_cast<const char *>(data), static_cast<std::size_t>(len));
    const auto nl = payload.find('\n');
    if (nl == std::string::npos || nl == 0 || nl + 1 == payload.size())
        throw std::runtime_error("the keys' MUNGE credential carries no keypair");
    public_key = payload.substr(0, nl);
    secret_key = payload.substr(nl + 1);
}

}  // namespace zpmix::tree
