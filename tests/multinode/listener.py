"""A one-connection TCP listener for the namespace-node tests: binds ADDR on a free port, writes
the port to READY_FILE (renamed into place, so a reader never sees half of it), answers the first
line it receives with "<hostname> got <line>", and exits. Bounded: gives up after 30 s."""
import os
import socket
import sys

addr, ready = sys.argv[1], sys.argv[2]
with socket.create_server((addr, 0)) as srv:
    srv.settimeout(30)
    with open(ready + ".tmp", "w") as f:
        f.write(f"{srv.getsockname()[1]}\n")
    os.rename(ready + ".tmp", ready)
    conn, _ = srv.accept()
    with conn, conn.makefile("rw") as stream:
        line = stream.readline().strip()
        stream.write(f"{socket.gethostname()} got {line}\n")
