#pragma once
// The node's hardware topology as the processes of a node share it: hwloc v2 XML in
// <dir>/topology.xml, dir being the broker's session directory (PMIX_TMPDIR). Discovering a
// node costs hwloc 40-170 ms on a small VM (it reads /sys), loading the XML 0.2 ms; Open MPI asks
// for it (PMIX_HWLOC_XML_V2) in every rank's MPI_Init. The first process to take
// <dir>/topology.lock discovers the node and writes the file; the others wait on the lock and
// read it. The broker's launcher takes it first when a job of Open MPI starts
// (actors/launcher/topology_writer.hpp), so that its ranks find the file ready.
#include <hwloc.h>

#include <functional>
#include <string>

namespace zpmix {

// This node's topology with its important I/O devices (network, OpenFabrics, GPUs), as PMIx
// hands it out; null when hwloc cannot load it. The caller destroys it.
hwloc_topology_t load_node_topology();

// The XML of <dir>/topology.xml into xml, writing it first (from `discover`'s topology, which
// stays the caller's) when no process did. False when there is none and it cannot be made.
bool shared_topology_xml(const std::string &dir, std::string &xml,
                         const std::function<hwloc_topology_t()> &discover);

}  // namespace zpmix
