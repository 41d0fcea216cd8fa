#!/usr/bin/python3
"""Descriptors (test_faults.sh, "descriptors"): holds HOLD silent (half-open: connected, nothing
sent) connections to a broker's tcp port for SECONDS, opening a new one for each the broker
closes, as an attacker who wants its descriptors would. Prints "ready" once HOLD were opened
(or after a second of trying), then at the end "opened <n> closed-by-broker <m> max-held <k>".
usage: flood.py HOST:PORT [--hold 1000] [--seconds 15]"""
import resource
import selectors
import socket
import sys
import time


def main():
    args = sys.argv[1:]
    host, port = args[0].rsplit(":", 1)
    hold = int(args[args.index("--hold") + 1]) if "--hold" in args else 1000
    seconds = float(args[args.index("--seconds") + 1]) if "--seconds" in args else 15
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hold + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, hold + 64), hard))
    sel = selectors.DefaultSelector()
    held, opened, closed, max_held = 0, 0, 0, 0
    said_ready = False
    start = time.monotonic()
    end = start + seconds

    def connect():
        nonlocal held, opened
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect((host, int(port)))
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            return
        sel.register(s, selectors.EVENT_READ)
        held += 1
        opened += 1

    while time.monotonic() < end:
        while held < hold and time.monotonic() < end:
            connect()
            if opened % 100 == 0:
                break  # let closes be seen too
        max_held = max(max_held, held)
        if not said_ready and (held >= hold or time.monotonic() - start > 1):
            print("ready", flush=True)
            said_ready = True
        for key, _ in sel.select(timeout=0.05):
            s = key.fileobj
            try:
                data = s.recv(4096)  # the broker's greeting is read and ignored
            except OSError:
                data = b""
            if data:
                continue
            sel.unregister(s)
            s.close()
            held -= 1
            closed += 1
    if not said_ready:
        print("ready", flush=True)
    print(f"opened {opened} closed-by-broker {closed} max-held {max_held}", flush=True)


if __name__ == "__main__":
    main()
