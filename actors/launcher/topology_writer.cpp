#include "actors/launcher/topology_writer.hpp"

#include <spdlog/spdlog.h>

#include "actors/topology/node_topology.hpp"

namespace zpmix {

void TopologyWriter::start(const std::string &dir) {
    if (std::exchange(started_, true)) return;
    thread_ = std::thread([dir] {
        hwloc_topology_t topo = nullptr;
        std::string xml;
        if (!shared_topology_xml(dir, xml, [&] { return topo = load_node_topology(); }))
            spdlog::warn(
                "cannot write the node's topology to {}: each Open MPI job finds it "
                "itself",
                dir);
        if (topo) hwloc_topology_destroy(topo);
    });
}

void TopologyWriter::wait() {
    if (thread_.joinable()) thread_.join();
}

}  // namespace zpmix
