#!/usr/bin/python3
"""A PMIx client written with Debian's python3-pmix (built against OpenPMIx 4.2.2), run by
`zpmix run -n 2` on zpmix's libpmix.so.2: each rank puts a value, fences with data collection,
reads its peer's value and prints "rank R got PEER's VALUE"."""
import sys
import warnings

warnings.simplefilter("ignore", DeprecationWarning)  # python3-pmix's own setDaemon()
import pmix  # noqa: E402


def main():
    client = pmix.PMIxClient()
    rc, me = client.init([])
    if rc != pmix.PMIX_SUCCESS:
        sys.exit(f"init: {rc}")
    rank = me["rank"]
    rc, size = client.get({"nspace": me["nspace"], "rank": pmix.PMIX_RANK_WILDCARD},
                          pmix.PMIX_JOB_SIZE, [])
    size = size["value"] if rc == pmix.PMIX_SUCCESS else None
    if size != 2:
        sys.exit(f"rank {rank}: job size {size} (rc {rc})")
    rc = client.put(pmix.PMIX_GLOBAL, "peer.card", {"value": f"card-of-{rank}", "val_type": pmix.PMIX_STRING})
    if rc != pmix.PMIX_SUCCESS:
        sys.exit(f"rank {rank}: put {rc}")
    client.commit()
    rc = client.fence([], [{"key": pmix.PMIX_COLLECT_DATA, "value": True, "val_type": pmix.PMIX_BOOL}])
    if rc != pmix.PMIX_SUCCESS:
        sys.exit(f"rank {rank}: fence {rc}")
    peer = 1 - rank
    rc, value = client.get({"nspace": me["nspace"], "rank": peer}, "peer.card", [])
    if rc != pmix.PMIX_SUCCESS:
        sys.exit(f"rank {rank}: get {rc}")
    print(f"rank {rank} got {peer}'s {value['value']}", flush=True)
    client.finalize([])


if __name__ == "__main__":
    main()
