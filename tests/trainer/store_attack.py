#!/usr/bin/env python3
"""Attacks a rendezvous store (trainer/cluster/tcp_store.h) served by the process PID on
HOST:PORT, sampling PID's resident memory all along, and prints one JSON object.

  store_attack.py HOST PORT PID DONE_FILE

1. 16 peers at once, each declaring a 64 MiB value in an 80-byte request (issue 15: this
   took the chief to 1 GB), then 16 declaring 1 GB: each must be disconnected.
2. 16 peers declaring 4 MiB values, sending 1 KB of them, then stalling: held open.
3. A flood of FLOOD connections held open (most must be refused: the store serves
   2 x tasks + 32); then closed, and DONE_FILE is written: honest workers may come.
4. The stalled peers of 2 must be disconnected: by the store's I/O timeout (10 s), or
   when the chief is done and stops its store; stalled_seconds says when.
"""
import json
import socket
import struct
import sys
import threading
import time

FLOOD = 300


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def connect(host, port, timeout=60):
    deadline = time.time() + timeout
    while True:
        try:
            return socket.create_connection((host, port), timeout=5)
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.05)


def closed_within(sock, seconds):
    """True once the server has closed (EOF or reset) within `seconds`."""
    sock.settimeout(0.1)
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if not sock.recv(4096):
                return True
        except socket.timeout:
            continue
        except OSError:
            return True
    return False


def set_request(key, declared_len):
    k = key.encode()
    return b"\x01" + struct.pack("<I", len(k)) + k + struct.pack("<I", declared_len)


def main():
    host, port, pid, done_file = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    probe = connect(host, port)  # the store is up
    probe.sendall(b"\x03" + struct.pack("<I", 1) + b"x")  # a CHECK, as a worker would
    probe.recv(1)
    out = {"rss_before": rss_bytes(pid)}
    peak = [out["rss_before"]]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            try:
                peak[0] = max(peak[0], rss_bytes(pid))
            except OSError:
                return
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()

    # 1. Declared lengths: 64 MiB (the old limit: 16 of these took the old chief to 1 GB)
    # and 1 GB, 16 peers of each at once.
    for name, length in (("mega64_dropped", 64 << 20), ("giga_dropped", 1 << 30)):
        peers = [connect(host, port) for _ in range(16)]
        for i, s in enumerate(peers):
            req = set_request(f"fp/{10000 + i}", length)
            s.sendall(req + b"x" * (80 - len(req)))
        out[name] = sum(closed_within(s, 5) for s in peers)

    # 2. Stalled mid-value.
    stalled = [connect(host, port) for _ in range(16)]
    for i, s in enumerate(stalled):
        s.sendall(set_request(f"stall/{i}", 4 << 20) + b"y" * 1024)
    stalled_at = time.time()
    time.sleep(0.5)

    # 3. The flood.
    flood, refused = [], 0
    for _ in range(FLOOD):
        try:
            flood.append(connect(host, port, timeout=5))
        except OSError:
            refused += 1
    time.sleep(0.5)
    refused += sum(closed_within(s, 0.01) for s in flood)
    out["flood_refused"] = refused
    out["rss_during"] = peak[0]
    for s in flood:
        s.close()
    time.sleep(1)
    open(done_file, "w").close()

    # 4. The stalled peers go at the I/O timeout.
    out["stalled_dropped"] = sum(closed_within(s, 20) for s in stalled)
    out["stalled_seconds"] = round(time.time() - stalled_at, 1)  # until the last was closed
    stop.set()
    sampler.join()
    out["rss_peak"] = peak[0]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
