#pragma once
// The allocation's CURVE keypair sealed with MUNGE, for the brokers srun starts. srun's input
// reaches them through Slurm's I/O streams, which are authenticated but not encrypted: the
// keypair crosses the network inside a MUNGE credential instead, whose payload is encrypted with
// the cluster's MUNGE key and which only this uid may decode. One credential per broker: a
// node's munged decodes a credential once (its replay check), and nodes may share one munged.
#include <string>

namespace zpmix::tree {

// A credential (one line of text) carrying the keypair, through munged's `socket` ("": MUNGE's
// default); throws std::runtime_error with MUNGE's reason (no munged, no key ...).
std::string seal_keys(const std::string &public_key, const std::string &secret_key,
                      const std::string &socket);

// The keypair from a credential that this uid made; throws std::runtime_error with the reason.
void open_keys(const std::string &credential, const std::string &socket, std::string &public_key,
               std::string &secret_key);

}  // namespace zpmix::tree
