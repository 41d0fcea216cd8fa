#pragma once
// Writes the node's topology file (actors/topology/node_topology.hpp) once, on a thread of its
// own, when the first job of Open MPI starts here: its ranks then read the file in MPI_Init
// instead of one of them discovering the node (40-170 ms) while the others wait for it. A thread,
// because the launcher's reactor must not stop for the discovery while it spawns ranks; it
// touches nothing but hwloc and the file.
#include <string>
#include <thread>

namespace zpmix {

class TopologyWriter {
  public:
    TopologyWriter() = default;
    TopologyWriter(const TopologyWriter &) = delete;
    TopologyWriter &operator=(const TopologyWriter &) = delete;
    ~TopologyWriter() { wait(); }

    // Writes <dir>/topology.xml unless this writer started already (or a process wrote it).
    void start(const std::string &dir);
    // Returns once the file is written or given up.
    void wait();

  private:
    std::thread thread_;
    bool started_ = false;
};

}  // namespace zpmix
