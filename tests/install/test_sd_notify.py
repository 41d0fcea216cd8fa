#!/usr/bin/env python3
"""`zpmix broker` under systemd's Type=notify (packaging/zpmix-broker.service.in): it sends
READY=1 (with its pid) to $NOTIFY_SOCKET once it serves (its rendezvous file is there then), and
STOPPING=1 when SIGTERM stops it; for a socket path and an abstract socket name, as sd_notify(3).

usage: test_sd_notify.py ZPMIX"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

zpmix = sys.argv[1]


def fields(datagram):
    return dict(line.split("=", 1) for line in datagram.decode().splitlines() if "=" in line)


def one(tmp, address, env_value):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(address)
    sock.settimeout(20)
    run_dir = os.path.join(tmp, "run-" + env_value.strip("@/").replace("/", "_")[-20:])
    broker = subprocess.Popen([zpmix, "broker", "--run-dir", run_dir, "-q"],
                              env=dict(os.environ, NOTIFY_SOCKET=env_value))
    try:
        ready = fields(sock.recv(4096))
        assert ready.get("READY") == "1", ready
        assert ready.get("MAINPID") == str(broker.pid), ready
        assert os.path.exists(os.path.join(run_dir, "broker.json")), "READY=1 before it serves"
        broker.send_signal(signal.SIGTERM)
        stopping = fields(sock.recv(4096))
        assert stopping.get("STOPPING") == "1", stopping
        assert broker.wait(20) == 0
    finally:
        if broker.poll() is None:
            broker.kill()
            broker.wait()
        sock.close()
    print("ok", env_value)


def main():
    tmp = tempfile.mkdtemp(prefix="zpmix-notify-")
    try:
        path = os.path.join(tmp, "notify.sock")
        one(tmp, path, path)
        name = "zpmix-test-notify-%d" % os.getpid()
        one(tmp, "\0" + name, "@" + name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
