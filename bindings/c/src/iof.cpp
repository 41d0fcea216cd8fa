// zpmix: I/O forwarding (PMIx_IOF_pull, PMIx_IOF_deregister, PMIx_IOF_push), for clients and
// tools, through the broker's `iof` actor (actors/iof/iof_actor.hpp). A pull is a stream of the
// attached Session: its deliveries come under the pull's envelope id, which is also the
// handler's reference; each is formatted here (tag, timestamp, XML), handed to the handler on the
// progress thread, then acknowledged so that the broker sends more.
#include "attributes.hpp"
#include "process.hpp"

#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "actors/protocol/iof.hpp"
#include "info_values.hpp"
#include "pmix_tool.h"

namespace zpmix::c {

namespace {

const Honours kPullAttributes(Role::tool, "PMIx_IOF_pull",
                              {ZPMIX_ATTR(PMIX_IOF_TAG_OUTPUT),
                               ZPMIX_ATTR(PMIX_IOF_TIMESTAMP_OUTPUT),
                               ZPMIX_ATTR(PMIX_IOF_XML_OUTPUT), ZPMIX_ATTR(PMIX_IOF_CACHE_SIZE),
                               ZPMIX_ATTR(PMIX_IOF_DROP_OLDEST), ZPMIX_ATTR(PMIX_IOF_DROP_NEWEST),
                               ZPMIX_ATTR(PMIX_IOF_BUFFERING_SIZE),
                               ZPMIX_ATTR(PMIX_IOF_BUFFERING_TIME)});
const Honours kPushAttributes(Role::tool, "PMIx_IOF_push",
                              {ZPMIX_ATTR(PMIX_IOF_COMPLETE), ZPMIX_ATTR(PMIX_IOF_PUSH_STDIN)});

constexpr std::uint32_t kTimeoutMs = 35000;  // the broker's own bound on a push is 30 s
// The bytes dropped for this pull (a full cache) since the handler was last called (size_t).
constexpr const char *kDroppedKey = "zpmix.iof.dropped";

struct Format {
    bool tag = false, timestamp = false, xml = false;
};

// An open pull: the session it streams on and what its handler wants.
struct Registration {
    client::Session *session = nullptr;
    pmix_iof_cbfunc_t handler = nullptr;
    Format format;
};
std::mutex reg_mu;
std::map<std::size_t, Registration> registrations;

std::uint32_t u32_of(const pmix_info_t &i) {
    switch (i.value.type) {
        case PMIX_UINT32:
            return i.value.data.uint32;
        case PMIX_INT:
            return i.value.data.integer > 0 ? static_cast<std::uint32_t>(i.value.data.integer) : 0;
        case PMIX_SIZE:
            return static_cast<std::uint32_t>(i.value.data.size);
        case PMIX_UINT64:
            return static_cast<std::uint32_t>(i.value.data.uint64);
        default:
            return 0;
    }
}

const char *channel_name(std::uint16_t channel) {
    return channel == msg::kIofStderr    ? "stderr"
           : channel == msg::kIofStddiag ? "stddiag"
                                         : "stdout";
}

std::string stamp(std::int64_t us) {
    const std::time_t s = static_cast<std::time_t>(us / 1000000);
    std::tm tm{};
    ::gmtime_r(&s, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    return fmt::format("{}.{:06}Z", buf, us % 1000000);
}

std::string xml_escape(std::string_view s) {
    std::string out;
    for (char c : s) switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out += c;
        }
    return out;
}

// The chunk as the handler gets it: `[nspace,rank]<stdout>: ` before each tagged line, an ISO
// time before each timestamped one, an element per line in XML. A chunk holds whole lines (or a
// piece of a long one): each is formatted as it would be alone.
std::string formatted(const msg::IofChunk &c, const Format &f) {
    if (!f.xml && !f.timestamp && !f.tag) return c.data;
    std::string out;
    std::string_view rest = c.data;
    while (!rest.empty()) {
        const auto nl = rest.find('\n');
        const std::string_view line =
            rest.substr(0, nl == std::string_view::npos ? rest.size() : nl + 1);
        rest.remove_prefix(line.size());
        if (f.xml) {
            std::string_view body = line;
            if (body.back() == '\n') body.remove_suffix(1);
            out +=
                fmt::format("<{} nspace=\"{}\" rank=\"{}\"{}>{}</{}>\n", channel_name(c.channel),
                            xml_escape(c.source.nspace), c.source.rank,
                            f.timestamp ? fmt::format(" timestamp=\"{}\"", stamp(c.time_us)) : "",
                            xml_escape(body), channel_name(c.channel));
            continue;
        }
        if (f.timestamp) out += stamp(c.time_us) + " ";
        if (f.tag)
            out += fmt::format("[{},{}]<{}>: ", c.source.nspace, c.source.rank,
                               channel_name(c.channel));
        out += line;
    }
    return out;
}

// Progress thread: one delivery of pull `ref`.
void deliver(std::size_t ref, const Envelope &env) {
    Registration reg;
    {
        std::lock_guard lock(reg_mu);
        auto it = registrations.find(ref);
        if (it == registrations.end()) return;  // deregistered meanwhile
        reg = it->second;
    }
    msg::IofDeliver d;
    try {
        d = env.as<msg::IofDeliver>();
    } catch (const DecodeError &e) {
        spdlog::error("pmix iof: a malformed delivery: {}", e.what());
        return;
    }
    pmix_info_t dropped;
    std::size_t ndropped = 0;
    if (d.dropped) {
        spdlog::warn("pmix iof: {} bytes of output dropped for pull {} (a full cache)", d.dropped,
                     ref);
        std::size_t n = d.dropped;
        PMIX_INFO_LOAD(&dropped, kDroppedKey, &n, PMIX_SIZE);
        ndropped = 1;
    }
    if (d.chunks.empty() && ndropped) {
        pmix_proc_t none;
        PMIX_LOAD_PROCID(&none, "", PMIX_RANK_UNDEF);
        pmix_byte_object_t bo{nullptr, 0};
        reg.handler(ref, PMIX_FWD_STDOUT_CHANNEL, &none, &bo, &dropped, ndropped);
    }
    for (std::size_t i = 0; i < d.chunks.size(); ++i) {
        const auto &c = d.chunks[i];
        std::string text = formatted(c, reg.format);
        pmix_proc_t source;
        PMIX_LOAD_PROCID(&source, c.source.nspace.c_str(), c.source.rank);
        pmix_byte_object_t bo{text.data(), text.size()};
        reg.handler(ref, c.channel, &source, &bo, i == 0 && ndropped ? &dropped : nullptr,
                    i == 0 ? ndropped : 0);
    }
    if (ndropped) PMIX_INFO_DESTRUCT(&dropped);
    reg.session->notify(msg::IofAck{ref});
}

// Ends pull `ref` here after what was delivered before the broker's answer (already posted to
// the progress thread) has reached the handler, then calls done.
void forget(client::Session &session, std::size_t ref, std::function<void()> done) {
    auto drop = [&session, ref, done = std::move(done)] {
        {
            std::lock_guard lock(reg_mu);
            registrations.erase(ref);
        }
        session.close_stream(ref);
        if (done) done();
    };
    if (session.reactor().on_reactor_thread()) return drop();
    session.post(std::move(drop));
}

struct StdinForward;
std::mutex stdin_mu;
std::shared_ptr<StdinForward> stdin_forward;  // PMIX_IOF_PUSH_STDIN's, until stdin ends

// PMIX_IOF_PUSH_STDIN: this process's stdin, read on the progress thread and pushed piece by
// piece (the next once the broker took the last), then its end.
struct StdinForward : std::enable_shared_from_this<StdinForward> {
    client::Session *session = nullptr;
    std::vector<msg::Proc> targets;
    bool stopped = false;

    void start() {
        session->post([self = shared_from_this()] { self->watch(); });
    }
    void watch() {
        if (stopped) return;
        session->reactor().watch_fd(STDIN_FILENO,
                                    [self = shared_from_this()] { self->readable(); });
    }
    void readable() {
        session->reactor().unwatch_fd(STDIN_FILENO);
        if (stopped) return;
        char buf[16384];
        ssize_t n;
        do n = ::read(STDIN_FILENO, buf, sizeof buf);
        while (n < 0 && errno == EINTR);
        msg::IofPush m{targets, n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "", n <= 0};
        if (n <= 0) stopped = true;
        session->request(
            m, kTimeoutMs, [self = shared_from_this()](pmix_status_t rc, const Envelope *) {
                if (rc != PMIX_SUCCESS) {
                    spdlog::warn("pmix iof: forwarding stdin failed: {}", PMIx_Error_string(rc));
                    self->stopped = true;
                }
                self->watch();
            });
    }
};

}  // namespace

}  // namespace zpmix::c

using namespace zpmix;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_IOF_pull(const pmix_proc_t procs[], size_t nprocs,
                                        const pmix_info_t directives[], size_t ndirs,
                                        pmix_iof_channel_t channel, pmix_iof_cbfunc_t cbfunc,
                                        pmix_hdlr_reg_cbfunc_t regcbfunc, void *regcbdata) {
    if (procs == nullptr || nprocs == 0 || cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    msg::IofPull m;
    m.channels = channel & (msg::kIofStdout | msg::kIofStderr | msg::kIofStddiag);
    if (m.channels == 0) return PMIX_ERR_BAD_PARAM;  // stdin is pushed, not pulled
    for (size_t i = 0; i < nprocs; ++i) m.procs.push_back(c::to_msg(procs[i]));
    c::Registration reg;
    reg.handler = cbfunc;
    for (size_t i = 0; directives && i < ndirs; ++i) {
        const pmix_info_t &d = directives[i];
        if (c::is_key(d, PMIX_IOF_TAG_OUTPUT))
            reg.format.tag = PMIX_INFO_TRUE(&d);
        else if (c::is_key(d, PMIX_IOF_TIMESTAMP_OUTPUT))
            reg.format.timestamp = PMIX_INFO_TRUE(&d);
        else if (c::is_key(d, PMIX_IOF_XML_OUTPUT))
            reg.format.xml = PMIX_INFO_TRUE(&d);
        else if (c::is_key(d, PMIX_IOF_CACHE_SIZE))
            m.cache_bytes = c::u32_of(d);
        else if (c::is_key(d, PMIX_IOF_DROP_NEWEST) && PMIX_INFO_TRUE(&d))
            m.policy = msg::kIofDropNewest;
        else if (c::is_key(d, PMIX_IOF_DROP_OLDEST) && PMIX_INFO_TRUE(&d))
            m.policy = msg::kIofDropOldest;
        else if (c::is_key(d, PMIX_IOF_BUFFERING_SIZE))
            m.buffering_bytes = c::u32_of(d);
        else if (c::is_key(d, PMIX_IOF_BUFFERING_TIME))  // seconds, as the standard has it
            m.buffering_ms = c::u32_of(d) * 1000u;
    }
    client::Session *session = nullptr;
    if (pmix_status_t rc =
            c::with_client(true, [&](client::Session &a, const pmix_proc_t &) { session = &a; });
        rc != PMIX_SUCCESS)
        return rc;
    reg.session = session;
    const std::uint64_t ref = session->new_id();
    {
        std::lock_guard lock(c::reg_mu);
        c::registrations[ref] = reg;
    }
    session->open_stream(ref, msg::IofDeliver::type,
                         [ref](const Envelope &env) { c::deliver(ref, env); });
    auto refused = [session, ref](const client::Session::Reply &reply) {
        {
            std::lock_guard lock(c::reg_mu);
            c::registrations.erase(ref);
        }
        session->close_stream(ref);
        if (!reply.message.empty()) spdlog::debug("pmix iof: pull refused: {}", reply.message);
    };
    if (regcbfunc == nullptr) {
        const auto reply = session->call_as(ref, m, c::kTimeoutMs);
        if (reply.status != PMIX_SUCCESS) refused(reply);
        return reply.status == PMIX_SUCCESS ? static_cast<pmix_status_t>(ref) : reply.status;
    }
    // Answered on the progress thread, so regcbfunc runs before the handler's first call.
    session->request_as(
        ref, m, c::kTimeoutMs,
        [refused, regcbfunc, regcbdata, ref](pmix_status_t status, const Envelope *) {
            if (status != PMIX_SUCCESS) refused({status, {}, {}});
            regcbfunc(status, status == PMIX_SUCCESS ? ref : 0, regcbdata);
        });
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_IOF_deregister(size_t iofhdlr, const pmix_info_t directives[],
                                              size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)directives;
    (void)ndirs;
    client::Session *session = nullptr;
    {
        std::lock_guard lock(c::reg_mu);
        auto it = c::registrations.find(iofhdlr);
        if (it == c::registrations.end()) return PMIX_ERR_NOT_FOUND;
        session = it->second.session;
    }
    if (pmix_status_t rc = c::with_client(true,
                                          [&](client::Session &a, const pmix_proc_t &) {
                                              if (&a != session) session = nullptr;
                                          });
        rc != PMIX_SUCCESS || session == nullptr)
        return rc != PMIX_SUCCESS ? rc : PMIX_ERR_NOT_FOUND;  // of a session since finalized
    // What waits in the broker is delivered before its answer; the handler gets it, then no more.
    const auto reply = session->call(msg::IofDeregister{iofhdlr}, c::kTimeoutMs);
    // A broker that is gone (the job ended, its broker with it) took the pull with it: the
    // registration is gone either way, and the handler hears nothing more.
    const pmix_status_t status =
        reply.status == PMIX_ERR_LOST_CONNECTION ? PMIX_SUCCESS : reply.status;
    if (cbfunc) {
        c::forget(*session, iofhdlr, [cbfunc, cbdata, status] { cbfunc(status, cbdata); });
        return PMIX_SUCCESS;
    }
    if (session->reactor().on_reactor_thread()) {
        c::forget(*session, iofhdlr, nullptr);
        return status;
    }
    auto done = std::make_shared<std::promise<void>>();
    auto over = done->get_future();
    c::forget(*session, iofhdlr, [done] { done->set_value(); });
    over.wait();
    return status;
}

PMIX_EXPORT pmix_status_t PMIx_IOF_push(const pmix_proc_t targets[], size_t ntargets,
                                        pmix_byte_object_t *bo, const pmix_info_t directives[],
                                        size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    bool complete = false, from_stdin = false;
    for (size_t i = 0; directives && i < ndirs; ++i) {
        if (c::is_key(directives[i], PMIX_IOF_COMPLETE)) complete = PMIX_INFO_TRUE(&directives[i]);
        if (c::is_key(directives[i], PMIX_IOF_PUSH_STDIN))
            from_stdin = PMIX_INFO_TRUE(&directives[i]);
    }
    if (complete) {  // ends this process's stdin forwarding too
        std::lock_guard lock(c::stdin_mu);
        if (c::stdin_forward) {
            auto f = std::exchange(c::stdin_forward, nullptr);
            f->session->post([f] { f->stopped = true; });
        }
    }
    if (targets == nullptr || ntargets == 0) return complete ? PMIX_SUCCESS : PMIX_ERR_BAD_PARAM;
    msg::IofPush m;
    for (size_t i = 0; i < ntargets; ++i) m.targets.push_back(c::to_msg(targets[i]));
    client::Session *session = nullptr;
    if (pmix_status_t rc =
            c::with_client(true, [&](client::Session &a, const pmix_proc_t &) { session = &a; });
        rc != PMIX_SUCCESS)
        return rc;
    if (from_stdin && !complete) {
        std::lock_guard lock(c::stdin_mu);
        if (c::stdin_forward) return PMIX_ERR_BAD_PARAM;  // one forwarding at a time
        auto f = std::make_shared<c::StdinForward>();
        f->session = session;
        f->targets = std::move(m.targets);
        c::stdin_forward = f;
        f->start();
        if (cbfunc) session->post([cbfunc, cbdata] { cbfunc(PMIX_SUCCESS, cbdata); });
        return PMIX_SUCCESS;
    }
    // A buffer, or none: the end of the input (as PMIX_IOF_COMPLETE says with one).
    if (bo && bo->size > 0) m.data.assign(bo->bytes, bo->size);
    m.eof = complete || bo == nullptr;
    if (cbfunc == nullptr) return session->call(m, c::kTimeoutMs).status;
    session->request(m, c::kTimeoutMs,
                     [cbfunc, cbdata](pmix_status_t rc, const Envelope *) { cbfunc(rc, cbdata); });
    return PMIX_SUCCESS;
}

}  // extern "C"
