#!/usr/bin/python3
"""Memory before authentication (test_faults.sh, "pre-auth memory"): CONNS connections to a
broker's tcp port, each announcing one frame of CLAIM bytes before it authenticates and sending
it (zeros) without ever finishing it, while PID's resident memory is read from /proc. Stops early
once PID has grown by STOP_AT, so that a broker without the bound is measured without running the
machine out of memory. Prints "grew <MiB> MiB (...) closed <n>/<conns> in <max ms> ms" (and
"welcomed <n>": HELLOs the broker answered).
usage: preauth.py HOST:PORT PID [--conns 30] [--claim-mib 60] [--stop-at-mib 256]
                  [--after-hello PUBLIC_KEY_Z85]
  --after-hello  first a valid CURVE HELLO (the broker's public key is no secret), then the
                 claim, as an INITIATE: the stage after the broker answered with its WELCOME"""
import ctypes
import os
import socket
import struct
import sys
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        fields = dict(line.split(":", 1) for line in f if ":" in line)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def greeting():
    return (b"\xff" + b"\x00" * 8 + b"\x7f" + b"\x03\x00" + b"CURVE".ljust(20, b"\x00") + b"\x00"
            + b"\x00" * 31)


def command_header(size):
    return b"\x06" + struct.pack(">Q", size)  # a long command frame


Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"


def z85_decode(text):
    out = b""
    for i in range(0, len(text), 5):
        v = 0
        for c in text[i:i + 5]:
            v = v * 85 + Z85.index(c)
        out += struct.pack(">I", v)
    return out


def curve_hello(server_public):
    """A valid CURVE HELLO command body (RFC 26) from a fresh transient key."""
    sodium = ctypes.CDLL("libsodium.so.23")
    assert sodium.sodium_init() >= 0
    pk, sk = ctypes.create_string_buffer(32), ctypes.create_string_buffer(32)
    sodium.crypto_box_keypair(pk, sk)
    short_nonce = os.urandom(8)
    nonce = b"CurveZMQHELLO---" + short_nonce
    zeros = b"\x00" * 64
    box = ctypes.create_string_buffer(64 + 16)
    rc = sodium.crypto_box_easy(box, zeros, ctypes.c_ulonglong(64), nonce, server_public, sk)
    assert rc == 0
    return b"\x05HELLO" + b"\x01\x00" + b"\x00" * 72 + pk.raw + short_nonce + box.raw


def main():
    args = sys.argv[1:]
    host, port = args[0].rsplit(":", 1)
    pid = int(args[1])
    opt = {k: args[args.index(k) + 1] for k in
           ("--conns", "--claim-mib", "--stop-at-mib", "--after-hello") if k in args}
    conns = int(opt.get("--conns", 30))
    claim = int(opt.get("--claim-mib", 60)) << 20
    stop_at = int(opt.get("--stop-at-mib", 256)) << 10
    hello_key = z85_decode(opt["--after-hello"]) if "--after-hello" in opt else None
    base, _ = rss_kib(pid)
    peak = base
    closed, slowest_ms, welcomed = 0, 0, 0
    chunk = b"\x00" * (1 << 20)
    socks = []
    for _ in range(conns):
        s = socket.create_connection((host, int(port)), timeout=5)
        s.sendall(greeting())
        if hello_key:
            body = curve_hello(hello_key)
            s.sendall(b"\x04" + bytes([len(body)]) + body)
            got = b""
            while len(got) < 64 + 2 + 168:  # its greeting, then WELCOME (a short command)
                part = s.recv(4096)
                if not part:
                    break
                got += part
            welcomed += got[64 + 2:64 + 2 + 8] == b"\x07WELCOME"
        sent_header = time.monotonic()
        try:
            s.sendall(command_header(claim))
            for _ in range(claim // len(chunk) - 1):
                s.sendall(chunk)
                now, _ = rss_kib(pid)
                peak = max(peak, now)
                if now - base > stop_at:
                    break
            # The broker took the claim (it never closed): wait here as a half-open peer would.
            s.settimeout(1.0)
            if s.recv(1) == b"":
                raise ConnectionResetError
        except (ConnectionResetError, BrokenPipeError, socket.timeout, OSError) as e:
            if not isinstance(e, socket.timeout):
                closed += 1
                slowest_ms = max(slowest_ms, int((time.monotonic() - sent_header) * 1000))
        socks.append(s)
        now, _ = rss_kib(pid)
        peak = max(peak, now)
        if now - base > stop_at:
            break
    _, hwm = rss_kib(pid)
    for s in socks:
        s.close()
    print(f"grew {(peak - base) / 1024:.1f} MiB (rss {base / 1024:.0f} MiB before, hwm "
          f"{hwm / 1024:.0f} MiB) closed {closed}/{len(socks)} in {slowest_ms} ms"
          + (f" welcomed {welcomed}" if hello_key else ""), flush=True)


if __name__ == "__main__":
    main()
