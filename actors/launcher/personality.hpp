#pragma once
// Personalities: what a launch adds to the ranks' environment so that a runtime nobody here
// wrote uses zpmix. "ompi": Open MPI 4.1, which reaches its runtime only through libpmix.so.2.
#include <cstddef>
#include <map>
#include <optional>
#include <string>

namespace zpmix::personality {

// Whether the program (a name looked up in PATH like posix_spawnp, or a path relative to cwd)
// is an ELF executable that needs Open MPI's libmpi (a DT_NEEDED entry "libmpi.so..." or
// "libmpi_..."). False for anything else (a script, MPICH's libmpich, an unreadable file).
bool links_libmpi(const std::string &program, const std::string &cwd);

// The directory holding zpmix's libpmix.so.2: the build tree's lib directory when this
// executable runs from the build tree, else the libdir beside the installed binary (../lib).
std::string library_dir();

// The Open MPI personality, applied to a rank's environment (NAME -> "NAME=value"): zpmix's
// library directory first on LD_LIBRARY_PATH, the MCA settings that make Open MPI use the PMIx
// server it finds and never run as a singleton (in a Slurm allocation too), and mpirun's word on
// oversubscription (OMPI_MCA_mpi_oversubscribe, from which Open MPI makes its ranks yield while
// they wait), and the transports the node has no device for excluded (mtl_without_absent_devices).
// Settings the environment already has (the user's -x or their own environment) are kept.
void apply_ompi(std::map<std::string, std::string> &env, const std::string &lib_dir,
                bool oversubscribed);

// Open MPI's mtl setting for a rank of this environment (NAME -> "NAME=value") on a node whose
// devices are in dev_dir: the installation's exclusions (its parameter files: the user's, then the
// system's), plus psm2 without an Omni-Path device (hfi1*) and psm without an InfiniPath one
// (ipath*). nullopt when there is nothing to add, the files set an include list, or no
// parameter file of the installation is found (its setting is unknown).
std::optional<std::string> mtl_without_absent_devices(const std::map<std::string, std::string> &env,
                                                      const std::string &dev_dir);

// Whether n ranks oversubscribe this node: more of them than the CPUs this process may run on.
bool oversubscribes(std::size_t n);

}  // namespace zpmix::personality
