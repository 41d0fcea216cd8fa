#pragma once
// Every message struct of actors/protocol/*.hpp with a message type name: fuzz_messages.cpp reads
// bodies as each, corpus_gen.cpp writes a seed of each.
#include <tuple>

#include "actors/protocol/common.hpp"
#include "actors/protocol/events.hpp"
#include "actors/protocol/fence.hpp"
#include "actors/protocol/group.hpp"
#include "actors/protocol/host.hpp"
#include "actors/protocol/host_services.hpp"
#include "actors/protocol/iof.hpp"
#include "actors/protocol/job.hpp"
#include "actors/protocol/jobctl.hpp"
#include "actors/protocol/log.hpp"
#include "actors/protocol/modex.hpp"
#include "actors/protocol/monitor.hpp"
#include "actors/protocol/pset.hpp"
#include "actors/protocol/query.hpp"
#include "actors/protocol/session.hpp"
#include "actors/protocol/tree.hpp"

namespace zpmix::fuzz {

namespace m = zpmix::msg;

using Messages = std::tuple<
    m::ErrorReply, m::Ok, m::Event, m::NotifyEvent, m::EventRegister, m::EventRegistered,
    m::EventStreamsQuery, m::EventStreams, m::EventResend, m::EventResent, m::EventAck,
    m::EventRelay, m::JobsRelated, m::NotifyCompletion, m::EventsSince, m::EventsSinceReply,
    m::JobLifecycle, m::EventStatsQuery, m::EventStats, m::FenceStatsQuery, m::FenceStats,
    m::FenceContribute, m::FenceDone, m::FenceUp, m::FenceDown, m::FenceProcEnded, m::Launch,
    m::Spawn, m::LaunchReply, m::Output, m::OutputAck, m::ProcExit, m::JobEnded, m::SignalJob,
    m::Abort, m::AbortJob, m::RegisterNamespace, m::RankSpawned, m::DeregisterNamespace,
    m::ProcEnded, m::NamespaceEnded, m::JobInfoQuery, m::JobInfoReply, m::JobControl,
    m::JobControlReply, m::Preempt, m::ProcTableQuery, m::ProcTable, m::JobsQuery, m::JobList,
    m::SignalRanks, m::TerminateRanks, m::SignalledRanks, m::CheckpointCompleted,
    m::RegisterCleanup, m::JobMarks, m::Log, m::Commit, m::ModexGet, m::ModexData, m::ModexCollect,
    m::ModexCollected, m::Publish, m::Lookup, m::LookupReply, m::Unpublish, m::MonitorRequest,
    m::MonitorBeat, m::Hello, m::Welcome, m::SessionOpen, m::TreeLost, m::TreeLostElsewhere,
    m::TreeJoined, m::TreeJoinedElsewhere, m::TreeRejoin, m::TreeRejoined, m::TreeHello,
    m::TreeWelcome, m::TreeBeat, m::TreeStop, m::TreeHop, m::TreeOnline, m::TreeMembers,
    m::LaunchAcross, m::JobPart, m::PartLaunched, m::PartStatus, m::PartsHeld, m::EndPart,
    m::SignalParts, m::SpawnAcross, m::PsetDefine, m::PsetDelete, m::PsetChanged, m::PsetLaunched,
    m::PsetQuery, m::PsetList, m::QueryRequest, m::QueryReply, m::Input, m::InputTaken,
    m::RankState, m::Finalize, m::GroupContribute, m::GroupDone, m::GroupUp, m::GroupDown,
    m::GroupList, m::GroupListed, m::GroupInvite, m::GroupJoin, m::GroupLeave, m::GroupLeft,
    m::GroupWatch, m::GroupUnwatch, m::GroupInviteeEnded, m::GroupLeaderAnswer, m::SessionClosed,
    m::IofPull, m::IofPulled, m::IofDeliver, m::IofAck, m::IofDeregister, m::IofKeep, m::IofPush,
    m::StoppedInInit, m::DebuggerReleased, m::JobFinished, m::RegisterClient, m::DeregisterClient,
    m::HostClientConnected, m::HostClientEnded, m::HostAbort, m::HostFence, m::HostFenceDone,
    m::HostDirectModex, m::HostNotify, m::HostPublish, m::HostLookup, m::HostUnpublish,
    m::HostToolConnected, m::HostJobControl, m::HostMonitor, m::HostQuery, m::HostLog,
    m::HostIofPull, m::HostStdin, m::AllocationRequest, m::AllocationReply, m::EventDeregister,
    m::HostRegisterEvents, m::HostDeregisterEvents, m::HostSpawn, m::HostConnect, m::HostGroup,
    m::HostGroupDone, m::HostGroupEvent>;
// CMake counts the message types declared in the headers: a new one must be listed above.
static_assert(std::tuple_size_v<Messages> == ZPMIX_MESSAGE_TYPES,
              "a message type of actors/protocol/*.hpp is missing from the list");

}  // namespace zpmix::fuzz
