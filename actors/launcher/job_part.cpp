#include "actors/launcher/job_part.hpp"

#include <chrono>

#include <pmix_common.h>

#include "actors/runtime/address.hpp"

namespace zpmix {

namespace {

constexpr double kSpawnForever = 1e9;  // s: a longer spawn timeout is none (and fits a timer)
// s: a spawn across brokers without PMIX_SPAWN_TIMEOUT has its parts started within this (as long
// as brokers have to boot, [tree] boot_timeout_ms's default); the relay waits a margin longer for
// the coordinator's verdict.
constexpr double kSpawnAcrossBound = 60;
constexpr double kRelayMargin = 5;

}  // namespace

SpawnRelays::SpawnRelays(Reactor &reactor, Wiring wiring)
    : reactor_(reactor), wiring_(std::move(wiring)) {}

void SpawnRelays::relay(const Envelope &env, msg::SpawnAcross m) {
    if (!(m.spawn.timeout_s >= 0) || !(m.spawn.spawn_timeout_s >= 0))
        return wiring_.refuse(env, PMIX_ERR_BAD_PARAM, "negative timeout");
    if (m.spawn.spawn_timeout_s == 0 || m.spawn.spawn_timeout_s > kSpawnForever)
        m.spawn.spawn_timeout_s = kSpawnAcrossBound;
    const double bound = m.spawn.spawn_timeout_s + kRelayMargin;
    const std::uint64_t id = wiring_.relay_id();
    Relay &relay = relays_[id];
    relay.request = env;
    relay.timer = reactor_.after(
        std::chrono::duration_cast<Reactor::Clock::duration>(std::chrono::duration<double>(bound)),
        [this, id] {
            auto node = relays_.extract(id);
            if (node.empty()) return;
            wiring_.refuse(node.mapped().request, PMIX_ERR_TIMEOUT,
                           "the job coordinator did not answer the spawn");
        });
    wiring_.pass_on(m, id);
}

void SpawnRelays::answered(const Envelope &env, msg::LaunchReply &m) {
    auto node = relays_.extract(env.id);
    if (node.empty()) return;  // timed out
    reactor_.cancel(node.mapped().timer);
    wiring_.answer(node.mapped().request, m);
}

void SpawnRelays::refused(const Envelope &env, msg::ErrorReply &m) {
    auto node = relays_.extract(env.id);
    if (node.empty()) return;
    reactor_.cancel(node.mapped().timer);
    wiring_.refuse(node.mapped().request, m.status, std::move(m.message));
}

}  // namespace zpmix
