#pragma once
// The broker's `jobctl` actor (RFC0015 job control): PMIx_Job_control from the job's own
// processes and from tools of the job owner's uid, `zpmix ctl|ps|preempt`.
//
// It reads the jobs, their ranks' pids and ends, from the namespace table; it keeps what job
// control adds to them (paused ranks, preemptibility, checkpoint methods) and asks the launcher,
// by message, to signal ranks: pause/resume are SIGSTOP/SIGCONT, kill SIGKILL, terminate SIGTERM.
// A checkpoint uses the first method the job registered (a signal, or the PMIX_JCTRL_CHECKPOINT
// event) and completes when every target has notified PMIX_JCTRL_CHECKPOINT_COMPLETE, which it
// sees as a subscriber of the broker's event publisher, like any external monitor. Pending
// checkpoints are what CANCEL cancels; the other requests complete at once, and cancelling one of
// them by its id is refused as not supported. Terminated processes that outlive the grace
// period get SIGKILL (from their node's launcher). Every action is logged with who asked.
//
// Across a broker tree (actors/tree/broker_map.hpp), a request through any broker reaches the
// ranks on every node: the ranks of this node through its launcher, the others through their
// brokers' jobctl (which keeps their paused state, for the process table), and the answer is the
// union of what every broker reached. A broker that answers with an error, is lost (tree.lost) or
// does not answer within `remote_timeout` counts as having reached none of its ranks, and the
// answer says so. The process table is gathered the same way. What a rank registers (preemptible,
// checkpoint method) is told to every broker; a checkpoint completion is too, as the checkpoint
// may wait on another broker. Limit: a checkpoint target on another node that ends before it
// completes fails the checkpoint only at its timeout.
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "actors/protocol/events.hpp"
#include "actors/protocol/job.hpp"
#include "actors/protocol/jobctl.hpp"
#include "actors/protocol/tree.hpp"
#include "actors/registry/namespace_table.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/tree/broker_map.hpp"

namespace zpmix {

class JobControl : public Actor {
  public:
    struct Settings {
        std::string broker;  // the broker's name: the source of the events it raises
        std::chrono::milliseconds checkpoint_timeout{10000};  // without PMIX_TIMEOUT
        // TERMINATE (and preemption): SIGTERM, then SIGKILL to whoever is still alive after it.
        std::chrono::milliseconds kill_grace{2000};
        // How long another broker's answer may take (a broker that is lost answers at once).
        std::chrono::milliseconds remote_timeout{5000};
        // How long `zpmix ps` still lists a finished job ([broker] keep_finished_s).
        std::chrono::seconds keep_finished{300};
    };
    JobControl(Reactor &reactor, Bus &bus, const NamespaceTable &namespaces,
               const BrokerMap &brokers, Settings settings);

  private:
    // Finished jobs for `zpmix ps`, oldest first, each until keep_finished after its end (their
    // rows come from the registry: msg::JobFinished).
    std::deque<msg::JobRow> finished_;
    std::map<std::string, std::uint64_t> ended_;  // jobs ended here, by outcome (msg::JobList)
    msg::JobRow row_of(const std::string &nspace, const NamespaceRecord &job) const;
    // What job control adds to a job of the table.
    struct Job {
        std::set<std::uint32_t> paused;  // ranks stopped by SIGSTOP, not continued since
        bool preemptible = false;
        std::int32_t ckpt_signal = 0;  // the registered checkpoint method: a signal, or
        bool ckpt_event = false;       // the event; neither: none registered
    };
    struct Checkpoint {
        Envelope req;
        std::string requester;  // who may cancel it
        std::string id;
        std::string nspace;
        std::set<std::uint32_t> waiting;  // targets that have not completed yet
        Reactor::TimerId timer = 0;
    };

    // A request this actor sent (to its launcher, events, another broker): its answer, or null
    // when none came (the broker is lost, or did not answer in time).
    using Answer = std::function<void(std::int32_t, const Envelope *)>;
    struct Awaiting {
        std::uint32_t broker = 0;  // who answers
        Answer then;
    };
    // The ranks a signal reached, and what went wrong (empty when every broker answered).
    using Reached = std::function<void(std::int32_t, std::vector<std::uint32_t>, std::string)>;

    const NamespaceTable &namespaces_;
    const BrokerMap &brokers_;
    Settings settings_;
    std::map<std::string, Job> jobs_;                  // by namespace, while in the table
    std::map<std::uint64_t, Checkpoint> checkpoints_;  // by our own request number
    std::map<std::uint64_t, Awaiting> awaiting_;       // by our own request number
    std::set<std::uint32_t> lost_;                     // brokers the tree lost
    // Ids of requests that completed at once (requester, id, action), the last kNamedDone: to
    // tell "cannot be cancelled" from "no such request".
    static constexpr std::size_t kNamedDone = 1024;
    static constexpr std::size_t kMaxFinished = 1024;  // finished jobs kept, whatever their age
    struct NamedDone {
        std::string requester, id, action;
    };
    std::deque<NamedDone> named_done_;
    std::uint64_t next_id_ = 1;

    void request(const Envelope &env, msg::JobControl &m);
    void preempt(const Envelope &env, msg::Preempt &m);
    void jobs(const Envelope &env, msg::JobsQuery &m);
    void proc_table(const Envelope &env, msg::ProcTableQuery &m);
    void terminate_ranks(const Envelope &env, msg::TerminateRanks &m);
    void namespace_ended(const Envelope &env, msg::NamespaceEnded &m);
    void job_finished(const Envelope &env, msg::JobFinished &m);
    void proc_ended(const Envelope &env, msg::ProcEnded &m);
    void signalled(const Envelope &env, msg::SignalledRanks &m);
    void ok(const Envelope &env, msg::Ok &m);
    void error(const Envelope &env, msg::ErrorReply &m);
    void signal_here(const Envelope &env, msg::SignalRanks &m);
    void table_part(const Envelope &env, msg::ProcTable &m);
    void marks(const Envelope &env, msg::JobMarks &m);
    void tree_lost(const Envelope &env, msg::TreeLost &m);
    void tree_joined(const Envelope &env, msg::TreeJoined &m);

    // Signals the ranks wherever they run; then(status, ranks that got it, what was not reached):
    // success when any rank got it, else the first failure.
    void signal_ranks(const std::string &nspace, std::vector<std::uint32_t> ranks, int sig,
                      bool on_request, Reached then, std::uint32_t kill_after_ms = 0,
                      std::string requested_by = {});
    // SIGTERM (and SIGCONT) to the ranks; SIGKILL after the grace period to those still alive.
    // on_request: their end was asked for (by requested_by, which `zpmix run` reports) and does not
    // fail the rest of the job.
    void terminate(const std::string &nspace, std::vector<std::uint32_t> ranks, bool on_request,
                   Reached then, std::string requested_by = {});
    // The ranks of a job by the broker whose node runs them (this one when no broker serves it).
    std::map<std::uint32_t, std::vector<std::uint32_t>> by_broker(
        const NamespaceRecord &job, const std::vector<std::uint32_t> &ranks) const;
    // Sends one request per broker (send(broker, request id)) and calls each(broker, status,
    // answer or null) as they come, then done() once every broker answered or failed.
    void ask_brokers(const std::set<std::uint32_t> &brokers,
                     const std::function<void(std::uint32_t, std::uint64_t)> &send,
                     std::function<void(std::uint32_t, std::int32_t, const Envelope *)> each,
                     std::function<void()> done);
    void give_up(std::uint64_t id, std::int32_t status);
    // "<node>: why" for a broker's failed answer (answer null: none came).
    std::string failure(std::uint32_t broker, std::int32_t status, const Envelope *answer) const;
    void answered(const Envelope &env, std::int32_t status, const Envelope *answer);
    // The process table's rows of the ranks this broker's node runs (of one job, or all).
    void table_rows(const std::string &nspace, msg::ProcTable &out) const;
    void share_marks(const std::string &nspace, const Job &job);
    void cancel(const Envelope &env, const msg::JobControl &m, const std::string &requester,
                const std::string &who);
    void raise_event(std::int32_t code, std::vector<msg::Proc> range,
                     std::vector<msg::Proc> affected, std::string text);
    void checkpoint(const Envelope &env, const msg::JobControl &m, const std::string &who,
                    const std::string &nspace, std::vector<std::uint32_t> ranks);
    void finish_checkpoint(std::uint64_t key, std::int32_t status, const std::string &message);
    void checkpoint_completed(const Envelope &env, msg::CheckpointCompleted &m);
    void answer(const Envelope &env, std::int32_t status, std::string message,
                std::vector<msg::Proc> affected = {});
};

}  // namespace zpmix
