#!/usr/bin/python3
"""Strangers retrying CURVE with the wrong keys (test_faults.sh, "wrong keys"; tests/bench/
run_strangers): CLIENTS libzmq DEALERs connect to HOST:PORT with CURVE, each with a keypair of its
own and, as server key, PUBLIC (the broker's public key is no secret: the handshake goes all the
way to the broker's ZAP handler, which refuses the keys; "-": a key that is not the broker's, which
fails at the HELLO). libzmq retries each every 100 ms, its default, as a client with a bad key file
would; one whose keys the server refused at the end of the handshake (its ZAP handler's ERROR),
which libzmq then gives up, connects again at once, as a tool restarted by a supervisor would.
For SECONDS. Prints "ready" once they are connecting, then "connected <c> refused <r> closed
<x> in <s> s", as each socket's monitor saw them: TCP connections made, handshakes the server went
through to the end and refused (its ZAP handler's ERROR), and connections it closed in the
handshake (a HELLO it could not open, or shed before). --source ADDRESS: every connection from
that local address (127.0.0.2: a stranger apart from this machine's own clients on 127.0.0.1).
usage: wrongkeys.py HOST:PORT PUBLIC|- [--clients 200] [--seconds 12] [--source ADDRESS]"""
import sys
import time

import zmq
from zmq.utils.monitor import recv_monitor_message


def main():
    args = sys.argv[1:]
    address, public = args[0], args[1]
    clients = int(args[args.index("--clients") + 1]) if "--clients" in args else 200
    seconds = float(args[args.index("--seconds") + 1]) if "--seconds" in args else 12
    source = args[args.index("--source") + 1] + ":0;" if "--source" in args else ""
    server_key = zmq.curve_keypair()[0] if public == "-" else public.encode()
    ctx = zmq.Context()
    ctx.setsockopt(zmq.MAX_SOCKETS, 4 * clients + 64)
    poller = zmq.Poller()
    sockets, monitors = [], []
    failed = (zmq.EVENT_HANDSHAKE_FAILED_AUTH | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
              | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL)
    for _ in range(clients):
        s = ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        pub, sec = zmq.curve_keypair()
        s.curve_serverkey, s.curve_publickey, s.curve_secretkey = server_key, pub, sec
        m = s.get_monitor_socket(zmq.EVENT_CONNECTED | failed)
        poller.register(m, zmq.POLLIN)
        s.connect(f"tcp://{source}{address}")
        sockets.append(s)
        monitors.append(m)
    again = {m: s for s, m in zip(sockets, monitors)}
    endpoint = f"tcp://{source}{address}"
    print("ready", flush=True)
    connected = refused = closed = 0
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        for m, _ in poller.poll(100):
            while True:
                try:
                    ev = recv_monitor_message(m, zmq.NOBLOCK)
                except zmq.Again:
                    break
                if ev["event"] == zmq.EVENT_CONNECTED:
                    connected += 1
                elif ev["event"] == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
                    refused += 1
                    again[m].disconnect(endpoint)
                    again[m].connect(endpoint)
                elif ev["event"] & failed:
                    closed += 1
    elapsed = time.monotonic() - start
    for s in sockets:
        s.disable_monitor()
        s.close()
    for m in monitors:
        m.close()
    ctx.term()
    print(f"connected {connected} refused {refused} closed {closed} in {elapsed:.1f} s",
          flush=True)


if __name__ == "__main__":
    main()
