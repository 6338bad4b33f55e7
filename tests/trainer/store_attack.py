#!/usr/bin/env python3
"""Attacks a rendezvous store (trainer/cluster/tcp_store.h) served by the process PID on
HOST:PORT, sampling PID's resident memory all along, and prints one JSON object.

  store_attack.py HOST PORT PID DONE_FILE
  store_attack.py outsider HOST PORT [--wait KEY]... [--overwrite KEY]... [--guess SECRET]
  store_attack.py relay PORT_FILE HOST PORT CAPTURE_FILE

The first form, against an open store (no job token):
0. Forgeries from a peer that claimed no rank: SETs of fp/1, arrive/1, gloo/addr/1 and
   verdict must be denied, and a claim of a rank outside the job refused.
1. 16 peers at once, each declaring a 64 MiB value in an 80-byte request (issue 15: this
   took the chief to 1 GB), then 16 declaring 1 GB: each must be disconnected.
2. 16 peers declaring 4 MiB values, sending 1 KB of them, then stalling: held open.
3. A flood of FLOOD connections held open (most must be refused: the store serves
   2 x tasks + 32); then closed, and DONE_FILE is written: honest workers may come.
4. The stalled peers of 2 must be disconnected: by the store's I/O timeout (10 s), or
   when the chief is done and stops its store; stalled_seconds says when.
"""
import argparse
import hashlib
import hmac
import json
import os
import socket
import struct
import sys
import threading
import time

FLOOD = 300
HELLO, CLAIM = 5, 6


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


def recv_exact(sock, n):
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("closed by the store")
        out += chunk
    return out


def recv_text(sock):
    (n,) = struct.unpack("<I", recv_exact(sock, 4))
    return recv_exact(sock, n).decode("utf-8", "replace")


def store_set(sock, key, value):
    """A SET: (status, message); status 0 stored, 1 exists, 2 denied."""
    k, v = key.encode(), value.encode()
    sock.sendall(b"\x01" + struct.pack("<I", len(k)) + k + struct.pack("<I", len(v)) + v)
    status = recv_exact(sock, 1)[0]
    return status, (recv_text(sock) if status else "")


def store_get(sock, key):
    k = key.encode()
    sock.sendall(b"\x02" + struct.pack("<I", len(k)) + k)
    if recv_exact(sock, 1)[0] == 0:
        return None
    return recv_text(sock)


def store_wait(sock, keys, timeout_ms):
    req = b"\x04" + struct.pack("<I", len(keys))
    for key in keys:
        req += struct.pack("<I", len(key)) + key.encode()
    sock.sendall(req + struct.pack("<I", timeout_ms))
    return list(recv_exact(sock, len(keys)))


def hello(sock):
    """HELLO: (mode, the server's nonce); mode 1 means a job token is required."""
    sock.sendall(bytes([HELLO]))
    reply = recv_exact(sock, 33)
    return reply[0], reply[1:]


def claim(sock, rank, server_nonce, secret=None, who=b"pid 0 on an outsider"):
    """CLAIM rank, with a proof under `secret` (store_auth.cc's ClaimMessage) or none:
    (status, text); status 0 granted."""
    nonce = os.urandom(32)
    proof = b""
    if secret is not None:
        message = (b"imgtool rendezvous store v1: claim\0" + server_nonce + nonce + struct.pack("<I", rank) +
                   struct.pack("<I", len(who)) + who)
        proof = hmac.new(secret.encode(), message, hashlib.sha256).digest()
    sock.sendall(bytes([CLAIM]) + struct.pack("<I", rank) + struct.pack("<I", len(who)) + who + nonce +
                 struct.pack("<I", len(proof)) + proof)
    status = recv_exact(sock, 1)[0]
    text = recv_text(sock)
    return status, text if status else ""


def forgeries(host, port):
    """Step 0: writes by a peer that claimed nothing, and a claim outside the job."""
    s = connect(host, port)
    denied = 0
    for key in ("fp/1", "arrive/1", "gloo/addr/1", "verdict"):
        status, _ = store_set(s, key, "forged")
        denied += status == 2
    s.close()
    s = connect(host, port)
    _, nonce = hello(s)
    status, _ = claim(s, 100000, nonce)
    s.close()
    return denied, status == 1


def outsider(argv):
    """A process outside the job at the chief's port. Open store: waits for --wait keys,
    then overwrites each --overwrite key with fp/0's value (the chief's digest: the red
    team's attack), claims a rank outside the job, then the chief's rank. Store with a token: claims rank 1
    without a proof and with one made from --guess, and reads without claiming. Prints
    what the store answered, as JSON."""
    ap = argparse.ArgumentParser(prog="store_attack.py outsider")
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("--wait", action="append", default=[])
    ap.add_argument("--overwrite", action="append", default=[])
    ap.add_argument("--guess")
    a = ap.parse_args(argv)
    s = connect(a.host, a.port)
    mode, nonce = hello(s)
    out = {"mode": "token" if mode == 1 else "open"}
    if mode == 0:
        if a.wait:
            out["waited"] = store_wait(s, a.wait, 60000)
        chiefs = store_get(s, "fp/0") or "sha256:" + "0" * 64
        out["writes"] = {key: store_set(s, key, chiefs) for key in a.overwrite}
        s.close()
        s = connect(a.host, a.port)
        _, nonce = hello(s)
        out["outside_claim"] = claim(s, 100000, nonce)
        s.close()
        s = connect(a.host, a.port)
        _, nonce = hello(s)
        out["chief_claim"] = claim(s, 0, nonce)
    else:
        out["claim_without_proof"] = claim(s, 1, nonce)
        s.close()
        if a.guess:
            s = connect(a.host, a.port)
            _, nonce = hello(s)
            out["claim_with_guess"] = claim(s, 1, nonce, a.guess)
            s.close()
        s = connect(a.host, a.port)
        k = b"fp/0"
        s.sendall(b"\x02" + struct.pack("<I", len(k)) + k)
        out["read_dropped"] = closed_within(s, 5)
    s.close()
    print(json.dumps(out))


def relay(argv):
    """A TCP relay on 127.0.0.1 (its port written to PORT_FILE) to HOST:PORT that appends
    every byte, both ways, to CAPTURE_FILE: what an eavesdropper on the job's network
    sees. Serves connections until it is killed."""
    port_file, host, port, capture = argv[0], argv[1], int(argv[2]), argv[3]
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    lock = threading.Lock()

    def pump(src, dst):
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            if not data:
                for sock in (src, dst):
                    try:
                        sock.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                return
            with lock, open(capture, "ab") as f:
                f.write(data)
            dst.sendall(data)

    with open(port_file + ".tmp", "w") as f:
        f.write(str(listener.getsockname()[1]))
    os.rename(port_file + ".tmp", port_file)
    while True:
        client, _ = listener.accept()
        upstream = connect(host, port)
        threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
        threading.Thread(target=pump, args=(upstream, client), daemon=True).start()


def main():
    if sys.argv[1] == "outsider":
        return outsider(sys.argv[2:])
    if sys.argv[1] == "relay":
        return relay(sys.argv[2:])
    host, port, pid, done_file = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    probe = connect(host, port)  # the store is up
    probe.sendall(b"\x03" + struct.pack("<I", 1) + b"x")  # a CHECK, as a worker would
    probe.recv(1)
    out = {"rss_before": rss_bytes(pid)}
    out["forgeries_denied"], out["outside_claim_refused"] = forgeries(host, port)
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
