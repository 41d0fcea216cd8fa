#include "client/node_fence.hpp"

#include <vector>

#include <spdlog/spdlog.h>

namespace zpmix::client {

namespace {
std::string_view view(const msg::Blob &b) {
    return {b.data(), b.size()};
}
}  // namespace

NodeFence::NodeFence(std::unique_ptr<FenceBoard> board, Session &session, ClientStore &store,
                     msg::Proc me)
    : board_(std::move(board)), session_(session), store_(store), me_(std::move(me)) {}

NodeFence::~NodeFence() {
    if (!waiter_.joinable()) return;
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    queued_.notify_all();
    board_->wake();  // the waiter sleeps on the board's word, shared by the job
    waiter_.join();
}

void NodeFence::commit(const msg::Commit &m) {
    // The card is one fence-segment entry as a reader on this node gets it: [[scope, blob]...].
    const char scope_local[2] = {'\x92', static_cast<char>(PMIX_LOCAL)};
    const char scope_global[2] = {'\x92', static_cast<char>(PMIX_GLOBAL)};
    const bool local = !m.local.empty(), global = !m.global.empty();
    const char header = static_cast<char>(0x90 + (local ? 1 : 0) + (global ? 1 : 0));
    std::lock_guard lock(commit_mu_);
    session_.notify(m);
    board_->post_card(me_.rank, ++commits_,
                      {{&header, 1},
                       local ? std::string_view(scope_local, 2) : std::string_view(),
                       view(m.local),
                       global ? std::string_view(scope_global, 2) : std::string_view(),
                       view(m.global)});
}

pmix_status_t NodeFence::wait(std::uint32_t k, FenceBoard::Clock::time_point deadline) {
    return board_->wait(
        k, deadline, [this] { return session_.broker_alive(); }, &stop_);
}

pmix_status_t NodeFence::fence(std::uint32_t k, bool collect, std::uint32_t timeout_ms) {
    const auto deadline = deadline_after(timeout_ms);
    pmix_status_t status = board_->arrive(me_.rank, k);
    if (status == PMIX_SUCCESS) status = wait(k, deadline);
    if (status == PMIX_SUCCESS && collect) status = gather(timeout_ms);
    return status;
}

void NodeFence::fence_nb(std::uint32_t k, bool collect, std::uint32_t timeout_ms,
                         std::function<void(pmix_status_t)> done) {
    if (pmix_status_t status = board_->arrive(me_.rank, k); status != PMIX_SUCCESS) {
        session_.post([done = std::move(done), status] { done(status); });
        return;
    }
    {
        std::lock_guard lock(mu_);
        queue_.push_back({.k = k,
                          .collect = collect,
                          .timeout_ms = timeout_ms,
                          .deadline = deadline_after(timeout_ms),
                          .done = std::move(done)});
        if (!waiter_.joinable()) waiter_ = std::thread([this] { run_waiter(); });
    }
    queued_.notify_one();
}

void NodeFence::complete_held(std::uint32_t k, std::uint32_t id, const Completer &complete) {
    if (!board_->claim(k)) return;
    switch (board_->ids(k, id)) {
        case FenceBoard::Ids::different:
            spdlog::error("pmix client: the ranks of {} called different group operations at once",
                          me_.nspace);
            return board_->publish(k, PMIX_ERR_BAD_PARAM, 0);
        case FenceBoard::Ids::same_by_broker:
            return board_->publish(k, FenceBoard::kByBroker, 0);
        case FenceBoard::Ids::same:
            break;
    }
    const auto [status, value] = complete();
    board_->publish(k, status, value);
}

pmix_status_t NodeFence::collective(std::uint32_t k, std::uint32_t id, bool by_broker,
                                    std::uint32_t timeout_ms, const Completer &complete,
                                    std::uint64_t &value) {
    const auto deadline = deadline_after(timeout_ms);
    bool completer = false;
    if (pmix_status_t status = board_->arrive_held(me_.rank, k, id, by_broker, completer);
        status != PMIX_SUCCESS)
        return status;
    if (completer) complete_held(k, id, complete);
    return board_->wait_held(
        k, deadline, [this] { return session_.broker_alive(); }, &stop_, value);
}

void NodeFence::collective_nb(std::uint32_t k, std::uint32_t id, bool by_broker,
                              std::uint32_t timeout_ms, Completer complete,
                              std::function<void(pmix_status_t, std::uint64_t)> done) {
    bool completer = false;
    if (pmix_status_t status = board_->arrive_held(me_.rank, k, id, by_broker, completer);
        status != PMIX_SUCCESS) {
        session_.post([done = std::move(done), status] { done(status, 0); });
        return;
    }
    {
        std::lock_guard lock(mu_);
        queue_.push_back({.k = k,
                          .timeout_ms = timeout_ms,
                          .deadline = deadline_after(timeout_ms),
                          .held = true,
                          .completer = completer,
                          .id = id,
                          .complete = std::move(complete),
                          .held_done = std::move(done)});
        if (!waiter_.joinable()) waiter_ = std::thread([this] { run_waiter(); });
    }
    queued_.notify_one();
}

void NodeFence::run_waiter() {
    std::unique_lock lock(mu_);
    for (;;) {
        queued_.wait(lock, [this] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping
        Waiting w = std::move(queue_.front());
        queue_.pop_front();
        lock.unlock();
        if (w.held) {
            if (w.completer) complete_held(w.k, w.id, w.complete);
            std::uint64_t value = 0;
            const pmix_status_t status = board_->wait_held(
                w.k, w.deadline, [this] { return session_.broker_alive(); }, &stop_, value);
            session_.post([done = std::move(w.held_done), status, value] { done(status, value); });
        } else {
            pmix_status_t status = wait(w.k, w.deadline);
            if (status == PMIX_SUCCESS && w.collect) status = gather(w.timeout_ms);
            session_.post([done = std::move(w.done), status] { done(status); });
        }
        lock.lock();
    }
}

bool NodeFence::offer_card(std::uint32_t rank) {
    if (rank == me_.rank || rank >= board_->ranks()) return false;
    const FenceBoard::Card card = board_->peek(rank);
    if (card.too_big || card.commits == 0) return false;
    store_.add_cards(board_, {rank});
    return true;
}

pmix_status_t NodeFence::gather(std::uint32_t timeout_ms) {
    std::vector<std::uint32_t> cards;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> too_big;  // rank, its commits
    for (std::uint32_t r = 0; r < board_->ranks(); ++r) {
        if (r == me_.rank) continue;
        const FenceBoard::Card card = board_->peek(r);
        if (card.too_big)
            too_big.emplace_back(r, card.commits);
        else if (card.commits > 0)
            cards.push_back(r);
    }
    store_.add_cards(board_, cards);
    for (const auto &[rank, commits] : too_big) {
        const msg::ModexGet m{{me_.nspace, rank}, "", timeout_ms, me_, commits};
        auto reply = session_.call(m, timeout_ms);
        if (reply.status == PMIX_SUCCESS) reply.status = store_.add_modex_data(reply.env);
        if (reply.status != PMIX_SUCCESS) return reply.status;
    }
    return PMIX_SUCCESS;
}

}  // namespace zpmix::client
