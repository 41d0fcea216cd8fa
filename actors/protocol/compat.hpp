#pragma once
// Cross-release compatibility (docs/compatibility.md): the release a peer runs and the protocol
// features it has, which Hello and Welcome (and the tree's TreeHello and TreeWelcome) state.
// Within one protocol version (the envelope's "v") the wire only grows: new message types and
// new optional fields, never a changed meaning. A session uses what both ends have: a request
// the other end lacks is answered at once with PMIX_ERR_NOT_SUPPORTED, and a broker never sends
// a peer a message of a feature the peer did not state.
//
// A message type needs the feature of its family (the type up to its first '.', "fence" for
// "fence.contribute"), unless kAddedTypes names another: a type added to a family after 0.9.0 is
// listed there with a feature of its own, so that a peer of an earlier release is never sent it.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <pmix_version.h>

#include "actors/protocol/map.hpp"
#include "zpmix/build_config.hpp"

namespace zpmix::msg {

// This release, as `zpmix --version` says it.
inline constexpr std::string_view kRelease = build::version;

// The first release of this protocol version: it and the releases after it, up to the next
// protocol version, work together.
inline constexpr std::string_view kFirstReleaseOfProtocol = "0.9.0";

// The protocol features of this release: the message families of 0.9.0, and those added since
// (kAddedTypes).
inline constexpr std::array<std::string_view, 19> kFeatures = {
    "ev",  "event", "fence", "group", "host",  "iof",   "jctl",    "job",  "log",   "modex",
    "mon", "ns",    "proc",  "pset",  "query", "reply", "session", "tree", "rejoin"};

// The level of the standard's ABI this release implements (pmix_version.h), "MAJOR.MINOR".
inline std::string abi_level() {
    return std::to_string(PMIX_VERSION_MAJOR) + "." + std::to_string(PMIX_VERSION_MINOR);
}

// Message types added to a family after 0.9.0, each with the feature that brought it.
struct AddedType {
    std::string_view type, feature;
};
inline constexpr std::array<AddedType, 3> kAddedTypes = {{
    // A standing tree's broker that rejoins its parent, and a restarted root adopting the jobs
    // of the brokers that rejoin it (docs/tree.md, "A root that starts again").
    {"tree.rejoin", "rejoin"},
    {"tree.rejoined", "rejoin"},
    {"job.parts_held", "rejoin"},
}};

// The feature a message of `type` needs.
inline std::string_view feature_of(std::string_view type) {
    for (const auto &a : kAddedTypes)
        if (a.type == type) return a.feature;
    return type.substr(0, type.find('.'));
}

// The features this process states: kFeatures, less those $ZPMIX_TEST_WITHOUT_FEATURES names
// (comma-separated), with which a test plays a release that lacks them.
inline const std::vector<std::string> &own_features() {
    static const std::vector<std::string> features = [] {
        std::string without = ",";
        if (const char *w = std::getenv("ZPMIX_TEST_WITHOUT_FEATURES")) without += w;
        without += ',';
        std::vector<std::string> out;
        for (auto f : kFeatures)
            if (without.find("," + std::string(f) + ",") == std::string::npos) out.emplace_back(f);
        return out;
    }();
    return features;
}

// Only the release a Hello states, read from a body of any protocol version.
struct ReleaseOnly {
    std::string release;
    ZPMIX_MSG_MAP(release);
};
// The release an envelope's body (a Hello or Welcome) states, if it can be read; else empty.
template <class Envelope>
std::string release_in(const Envelope &env) {
    try {
        return env.template as<ReleaseOnly>().release;
    } catch (...) {
        return {};
    }
}

// Why a peer of protocol version `version` (of release `release`, if known) is refused: who
// runs what, and which releases work together.
inline std::string other_protocol(std::uint32_t version, std::string_view release,
                                  std::string_view peer, std::string_view self) {
    return fmt::format(
        "the {} runs zpmix {} (protocol version {}), this {} zpmix {} (protocol version {}): "
        "releases work together within a protocol version, this one's being zpmix {} and later "
        "{}.x releases (docs/compatibility.md); run a release of protocol version {}",
        peer, release.empty() ? std::string_view("of an unknown release") : release, version, self,
        kRelease, build::protocol_version, kFirstReleaseOfProtocol,
        kFirstReleaseOfProtocol.substr(0, kFirstReleaseOfProtocol.find('.')),
        build::protocol_version);
}

// What the other end of a session stated: its release and features. A peer that stated no
// features (a build before 0.9.0 of the same protocol version) is taken to have 0.9.0's.
class PeerFeatures {
  public:
    PeerFeatures() = default;  // all of ours: an actor, or this process itself
    PeerFeatures(std::string release, std::vector<std::string> features, std::string abi = {})
        : release_(release.empty() ? "of an unknown release" : std::move(release)),
          features_(std::move(features)),
          abi_(std::move(abi)) {
        if (features_.empty())
            for (auto f : kFeatures) features_.emplace_back(f);
        std::sort(features_.begin(), features_.end());
        for (const auto &f : own_features())
            if (!has(f)) missing_ += (missing_.empty() ? "" : ",") + f;
    }
    const std::string &release() const { return release_; }
    // The standard's ABI level the peer stated (a broker's Welcome); empty when not stated.
    const std::string &abi() const { return abi_; }
    bool has(std::string_view feature) const {
        return std::binary_search(features_.begin(), features_.end(), feature, std::less<>{});
    }
    // Whether the peer reads (or serves) messages of `type`: one test when it has all of ours.
    bool serves(std::string_view type) const { return missing_.empty() || has(feature_of(type)); }
    // The features of ours the peer lacks, comma-separated (empty: it has them all).
    const std::string &missing() const { return missing_; }

  private:
    std::string release_{kRelease};
    std::vector<std::string> features_;
    std::string abi_;
    std::string missing_;
};

}  // namespace zpmix::msg
