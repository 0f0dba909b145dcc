#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# A network link of known one-way latency and bandwidth, in user space, for tests/calibrate_netns.sh. The kernel
# here has no netem (no qdisc that delays), so the delay is made here: two TUN devices, one in this network
# namespace and one in the namespace named, and this process between them. Each IP packet read from one device is
# written to the other as a link of RATE bit/s and one-way delay DELAY would deliver it: its transmission ends at
#   end = max(read time, previous end in that direction) + bits / RATE,
# and it is written DELAY seconds after that. Each direction has its own queue (a full-duplex link), unbounded (no
# drop), so TCP meets the rate and the delay and nothing else.
#   calibrate_relay.py HOST_DEV NETNS NETNS_DEV DELAY_S RATE_BPS READY_FILE
# The devices exist while this runs (not persistent): when it ends, both go. READY_FILE is written once both are
# open; on SIGTERM it writes to stderr how late it wrote packets (its own overhead) and exits.
# Stdlib only, and run by the system's python3: it needs root and real-time priority (chrt), not a virtualenv.
import collections
import ctypes
import fcntl
import os
import select
import signal
import struct
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1


def open_tun(name):
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    return fd


def enter_netns(name):
    # Python 3.11 has no os.setns; libc's does the same (this process has one thread, which is all setns moves).
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/var/run/netns/{name}", os.O_RDONLY)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), f"setns into {name}")
    os.close(fd)


def main():
    host_dev, netns, ns_dev, delay, rate, ready = sys.argv[1:7]
    delay, rate = float(delay), float(rate)
    # Ends with the test that started it, even one killed outright (no trap runs then): its devices go with it.
    parent = os.getppid()
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        sys.exit(0)
    a = open_tun(host_dev)
    enter_netns(netns)
    b = open_tun(ns_dev)
    with open(ready, "w") as f:
        f.write(f"{os.getpid()}\n")
    other = {a: b, b: a}
    queue = {a: collections.deque(), b: collections.deque()}  # (due time, packet) read from the key, for the other
    busy_until = {a: 0.0, b: 0.0}  # when the link in that direction ends its last transmission
    late = []  # how long after its due time each packet was written

    def report(*_):
        late.sort()
        n = len(late)
        if n:
            print(f"relay: {n} packets written, late by median {late[n // 2] * 1e6:.0f} us, "
                  f"99th percentile {late[int(n * 0.99)] * 1e6:.0f} us, max {late[-1] * 1e6:.0f} us", file=sys.stderr)
        sys.exit(0)

    signal.signal(signal.SIGTERM, report)
    clock = time.monotonic
    fds = [a, b]
    while True:
        now = clock()
        next_due = None
        for src in fds:
            q = queue[src]
            while q and q[0][0] <= now:
                due, packet = q.popleft()
                try:
                    os.write(other[src], packet)
                except OSError:
                    pass  # a device going down: the packet is lost, as on a link being unplugged
                late.append(clock() - due)
                now = clock()
            if q and (next_due is None or q[0][0] < next_due):
                next_due = q[0][0]
        timeout = None if next_due is None else max(0.0, next_due - clock())
        readable, _, _ = select.select(fds, [], [], timeout)
        now = clock()
        for src in readable:
            q = queue[src]
            for _ in range(64):  # a bounded batch, so that the other direction's due packets wait little
                try:
                    packet = os.read(src, 65536)
                except BlockingIOError:
                    break
                end = max(now, busy_until[src]) + len(packet) * 8 / rate
                busy_until[src] = end
                q.append((end + delay, packet))


if __name__ == "__main__":
    main()
