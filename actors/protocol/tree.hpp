#pragma once
// The broker tree as the actors see it (the link itself is actors/tree/link.hpp): which brokers
// were lost. Messages between brokers are the actors' own types, addressed "@<rank>/<actor>"
// (actors/tree/broker_map.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include <msgpack.hpp>

#include "actors/protocol/compat.hpp"
#include "actors/protocol/map.hpp"

namespace zpmix::msg {

// tree link -> every actor that handles it (broadcast): brokers this one can no longer reach,
// because a child's subtree or its parent went silent (heartbeats) or away. `parent`: the parent
// is lost, and with it every broker outside this one's subtree (`brokers` lists the children's
// subtrees lost). Status for what waited on them: PMIX_ERR_UNREACH (or _LOST_CONNECTION).
// The broker that finds a child's subtree lost tells every other broker (TreeLostElsewhere), whose
// link broadcasts the same TreeLost: every broker's actors hear of every lost broker.
struct TreeLost {
    static constexpr const char *type = "tree.lost";
    std::vector<std::uint32_t> brokers;  // lost brokers (a subtree), ascending
    bool parent = false;
    std::vector<std::string> nodes = {};  // the nodes of `brokers`, as the jobs name them
    ZPMIX_MSG_MAP(brokers, parent, nodes);
};
// A broker's link -> every other broker's link: the subtree under one of its children is lost.
struct TreeLostElsewhere {
    static constexpr const char *type = "tree.lost_elsewhere";
    std::vector<std::uint32_t> brokers;
    ZPMIX_MSG_MAP(brokers);
};
// A standing tree (actors/tree/link.hpp): broker `rank` joined the tree (at its start, or again
// after it was lost). The root's link tells every broker's link (tree.joined_elsewhere), which
// tells its actors (tree.joined).
struct TreeJoined {
    static constexpr const char *type = "tree.joined";
    std::uint32_t rank = 0;
    ZPMIX_MSG_MAP(rank);
};
struct TreeJoinedElsewhere {
    static constexpr const char *type = "tree.joined_elsewhere";
    std::uint32_t rank = 0;
    ZPMIX_MSG_MAP(rank);
};
// A standing tree's broker that lost its parent and was welcomed again (its parent came back,
// maybe a restarted root): its link tells its children's links (tree.rejoin), each of which tells
// the root it is up (tree.online) and passes it on down; and every link of that subtree tells its
// own actors (tree.rejoined), which tell the root what they hold (the launcher: its parts of jobs
// across the tree, msg::PartsHeld), for a restarted root knows nothing of them.
struct TreeRejoin {
    static constexpr const char *type = "tree.rejoin";
    std::uint32_t rank = 0;  // the broker that joined again
    ZPMIX_MSG_MAP(rank);
};
struct TreeRejoined {
    static constexpr const char *type = "tree.rejoined";
    std::uint32_t rank = 0;  // as TreeRejoin's
    ZPMIX_MSG_MAP(rank);
};

// The link's own frames (actors/tree/link.hpp), each one envelope: a child's hello and the
// parent's answer, heartbeats, the parent's order to stop, and a hop (its next frame is the
// envelope it carries).
struct TreeHello {
    static constexpr const char *type = "tree.hello";
    std::uint32_t rank = 0;
    std::string node;
    std::vector<std::string> addresses;
    std::string release{kRelease};                       // the child's zpmix release
    std::vector<std::string> features = own_features();  // its protocol features (compat.hpp)
    ZPMIX_MSG_MAP(rank, node, addresses, release, features);
};
struct TreeWelcome {
    static constexpr const char *type = "tree.welcome";
    bool ok = true;
    std::string why;
    std::string release{kRelease};  // the parent's
    std::vector<std::string> features = own_features();
    ZPMIX_MSG_MAP(ok, why, release, features);
};
struct TreeBeat {
    static constexpr const char *type = "tree.beat";
    std::uint32_t rank = 0;  // the sender's
    ZPMIX_MSG_MAP(rank);
};
struct TreeStop {
    static constexpr const char *type = "tree.stop";
    std::string why;
    ZPMIX_MSG_MAP(why);
};
// Followed by a frame holding the envelope to deliver.
struct TreeHop {
    static constexpr const char *type = "tree.hop";
    std::uint32_t to = 0;  // 0xffffffff: every broker
    std::uint32_t from = 0;
    std::string address;
    ZPMIX_MSG_MAP(to, from, address);
};

// A broker joined its parent (relayed to the root, which starts its children).
struct TreeOnline {
    static constexpr const char *type = "tree.online";
    std::uint32_t rank = 0;
    std::vector<std::string> addresses;
    ZPMIX_MSG_MAP(rank, addresses);
};
// root -> every broker once all are up: the brokers' nodes by rank.
struct TreeMembers {
    static constexpr const char *type = "tree.members";
    std::uint32_t radix = 2;
    std::vector<std::string> nodes;
    ZPMIX_MSG_MAP(radix, nodes);
};

}  // namespace zpmix::msg
