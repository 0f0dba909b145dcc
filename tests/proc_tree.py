# SPDX-License-Identifier: BSD-3-Clause
"""Run a command with a hard time limit and leave nothing of it running (shared by the tests that launch mpiexec).

MPICH's Hydra puts its proxy and every rank in a session of their own, so killing mpiexec's process group, or
mpiexec itself, can leave ranks running (and spinning) after a hang. A launch is therefore ended through /proc:
the whole tree of descendants is frozen with SIGSTOP first (so nothing in it can start a new process or be
reparented away while we look), rescanned until no new process appears, and then killed with SIGKILL. Each pid is
checked by its start time before it is signalled, so a pid reused by an unrelated process is never hit.
Standard library only.
"""
import os
import signal
import subprocess
import time
from dataclasses import dataclass


def _stat(pid):
    """(parent pid, start time) of pid, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[1]), fields[19]
    except (OSError, IndexError, ValueError):
        return None


def process_tree(root):
    """{pid: start time} of root and all its descendants now."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(int(entry))
            if st:
                children.setdefault(st[0], []).append((int(entry), st[1]))
    root_stat = _stat(root)
    tree, todo = {}, [(root, root_stat[1])] if root_stat else []
    while todo:
        pid, start = todo.pop()
        tree[pid] = start
        todo += children.get(pid, [])
    return tree


def _signal(pid, start, sig):
    st = _stat(pid)
    if st and st[1] == start:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def kill_tree(proc):
    """Ends proc (a subprocess.Popen) and every process it started, however deep; reaps proc."""
    frozen = {}
    for _ in range(50):  # freeze top-down until the tree stops growing
        tree = {pid: start for pid, start in process_tree(proc.pid).items() if pid not in frozen}
        if not tree:
            break
        for pid, start in tree.items():
            _signal(pid, start, signal.SIGSTOP)
        frozen.update(tree)
        time.sleep(0.01)
    for pid, start in frozen.items():
        _signal(pid, start, signal.SIGKILL)
    if proc.poll() is None:
        proc.kill()


@dataclass
class Finished:
    command: list
    returncode: int  # None when it was killed at the time limit
    stdout: bytes
    stderr: bytes
    seconds: float
    timed_out: bool


def run(command, timeout, cwd=None, env=None):
    """Runs command (stdin closed, output captured as bytes); after timeout seconds it and all its descendants are
    killed and timed_out is True. Ctrl-C of the caller also leaves nothing running."""
    start = time.monotonic()
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        kill_tree(proc)
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:  # a process that left the tree (double fork) still holds the pipes
            out, err = b"", b"(output lost: a process outside the killed tree kept the pipes open)"
        timed_out = True
    except BaseException:
        kill_tree(proc)
        proc.communicate()
        raise
    return Finished(command, None if timed_out else proc.returncode, out, err, time.monotonic() - start, timed_out)
