#!/usr/bin/python3
"""Another user's broker, planted where zpmix looks for this user's (test_faults.sh, "another
user"): run as that other user, it makes DIR (mode 0777 unless it exists), binds a ROUTER at
DIR/broker.sock, writes DIR/broker.json naming the victim's uid and its own pid, answers every
Hello with a Welcome and appends every frame it receives to CAPTURED. Prints "ready" once it
listens; runs until killed (or 60 s).
usage: fake_broker.py DIR VICTIM_UID CAPTURED [--socket PATH] [--link]
  --socket PATH  bind there instead (outside DIR), and write no broker.json
  --link         broker.json is a symbolic link to a file of the attacker's"""
import json
import os
import sys
import time

import msgpack
import zmq


def main():
    args = sys.argv[1:]
    run_dir, victim, captured = args[0], int(args[1]), args[2]
    sock = args[args.index("--socket") + 1] if "--socket" in args else None
    os.umask(0)
    if sock is None:
        os.makedirs(run_dir, mode=0o777, exist_ok=True)
        sock = os.path.join(run_dir, "broker.sock")
    ctx = zmq.Context()
    router = ctx.socket(zmq.ROUTER)
    router.setsockopt(zmq.LINGER, 0)
    router.bind("ipc://" + sock)
    if "--socket" not in args:
        info = {"uri": "ipc://" + sock, "events_uri": "ipc://" + run_dir + "/events.sock",
                "tcp_uri": "", "pid": os.getpid(), "uid": victim, "protocol": 1,
                "hostname": os.uname().nodename}
        target = os.path.join(run_dir, "broker.json")
        if "--link" in args:
            real = os.path.join(os.path.dirname(captured), "planted.json")
            with open(real, "w") as f:
                json.dump(info, f)
            os.symlink(real, target)
        else:
            with open(target, "w") as f:
                json.dump(info, f)
            os.chmod(target, 0o666)
    print("ready", flush=True)
    deadline = time.monotonic() + 60
    with open(captured, "ab", buffering=0) as out:
        while time.monotonic() < deadline:
            if not router.poll(500):
                continue
            frames = router.recv_multipart()
            for f in frames[1:]:
                out.write(f + b"\n")
            try:
                env = msgpack.unpackb(frames[-1], raw=False)
            except Exception:
                continue
            if isinstance(env, dict) and env.get("t") == "session.hello":
                welcome = {"v": env.get("v", 1), "t": "session.welcome", "id": env.get("id", 0),
                           "body": {}}
                router.send_multipart([frames[0], msgpack.packb(welcome)])


if __name__ == "__main__":
    main()
