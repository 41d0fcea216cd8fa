#include "actors/topology/node_topology.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>

namespace zpmix {

namespace {

bool read_file(const std::string &path, std::string &out) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return false;
    out.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    return !out.empty();
}

}  // namespace

hwloc_topology_t load_node_topology() {
    hwloc_topology_t t = nullptr;
    if (hwloc_topology_init(&t) != 0) return nullptr;
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(t) != 0) {
        hwloc_topology_destroy(t);
        return nullptr;
    }
    return t;
}

bool shared_topology_xml(const std::string &dir, std::string &xml,
                         const std::function<hwloc_topology_t()> &discover) {
    const std::string path = dir + "/topology.xml";
    if (read_file(path, xml)) return true;
    const int lock = ::open((dir + "/topology.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock < 0) return false;
    bool ok = false;
    if (::flock(lock, LOCK_EX) == 0) {
        if (read_file(path, xml)) {
            ok = true;
        } else if (hwloc_topology_t topo = discover()) {
            char *buf = nullptr;
            int len = 0;
            if (hwloc_topology_export_xmlbuffer(topo, &buf, &len, 0) == 0 && len > 1) {
                xml.assign(buf, static_cast<std::size_t>(len - 1));  // without its NUL
                hwloc_free_xmlbuffer(topo, buf);
                // Whole or not at all: a reader never sees a part of it.
                const std::string tmp = path + "." + std::to_string(::getpid());
                if (std::FILE *f = std::fopen(tmp.c_str(), "wb")) {
                    const bool written = std::fwrite(xml.data(), 1, xml.size(), f) == xml.size();
                    if (std::fclose(f) == 0 && written) ::rename(tmp.c_str(), path.c_str());
                    ::unlink(tmp.c_str());
                }
                ok = true;
            }
        }
    }
    ::close(lock);
    return ok;
}

}  // namespace zpmix
