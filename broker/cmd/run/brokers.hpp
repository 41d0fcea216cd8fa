#pragma once
// Which broker runs `zpmix run`'s job, in this order:
// - --broker URI: that one.
// - A standing tree's broker on this node (found by its rendezvous file under the base
//   directory), when every node of the job is a host of the tree, one on this node alone too
//   (the tree's coordinator numbers every job's node ranks there): the layout becomes the tree's,
//   and no broker is started.
// - A job across nodes: a tree of brokers for this job alone, one per node, whose root this
//   process embeds; the root starts the others (as one srun step inside a Slurm allocation, else
//   through the rsh agent: --launcher, --rsh-agent), with CURVE keys made here, and they stop
//   with it.
// - A job on this node: the standalone broker of <base>/broker.json, else one embedded in this
//   process, in a private directory nobody else looks in.
//
// Invariants and limits: an embedded broker runs until stop() (or the JobBroker's end); one that
// cannot start is stopped before the error comes back. Booting the tree waits at most its boot
// timeout ([tree] boot_timeout_ms) and 5 s more.
#include <memory>
#include <string>

#include "actors/launcher/allocation.hpp"
#include "broker/broker.hpp"
#include "broker/cmd/run/layout.hpp"
#include "broker/cmd/run/options.hpp"

namespace zpmix::cli::run {

struct JobBroker {
    std::string uri;                   // where `zpmix run` talks to it
    std::unique_ptr<Broker> embedded;  // when this process runs it

    void stop() {
        if (embedded) embedded->stop();
    }
};

// The broker of the job laid out as `layout` (which a standing tree renames); an error when none
// can be started.
alloc::Result<JobBroker> job_broker(const RunOptions &o, Layout &layout);

}  // namespace zpmix::cli::run
