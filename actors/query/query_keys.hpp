#pragma once
// The one table of the query keys the broker answers (query_keys.cpp): a key, and the function
// that answers it. Adding a key is adding one entry there (and, if its answer asks another
// actor, one expect<Reply>() line in QueryActor's constructor).
#include <span>
#include <string_view>

#include "actors/protocol/query.hpp"
#include "actors/query/query_actor.hpp"

namespace zpmix::query {

// Answers one key of one query; calls done exactly once (now or later, on the actor's thread).
using Answerer = void (*)(QueryActor &q, const Envelope &req, const msg::Query &query,
                          const QueryActor::Answer &done);

struct Key {
    std::string_view key;
    Answerer answer;
};

std::span<const Key> keys();

}  // namespace zpmix::query
