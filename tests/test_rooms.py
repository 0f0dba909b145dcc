# SPDX-License-Identifier: BSD-3-Clause
"""The house's rooms and their arrows: each library (a folder with include/mcmclb/) may include the public headers
of the rooms below it only (ROOMS), no room reaches into another's private headers, and the launchers are one
room with one table (launch/src/launchers.def names each launcher's file). docs/contributing/extending.md draws
the same map; a new arrow is a decision, made here and there together."""
import os
import re
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Each room and the rooms whose public headers (mcmclb/...) it may include, as the CMake targets link them.
ROOMS = {
    "comm/base": set(),
    "comm": {"comm/base"},
    "kernel": {"comm", "comm/base"},
    "balancers": {"kernel", "comm", "comm/base"},
    "stats": set(),
    "study": {"stats", "kernel", "comm/base"},
    "launch": {"study", "stats", "balancers", "kernel", "comm", "comm/base"},
    "walkers": {"balancers", "study", "kernel", "comm", "comm/base"},
    # One run end to end, and its rows: what the MPI test suites and the commands run.
    "driver": {"balancers", "study", "kernel", "comm", "comm/base"},
    # The engine of mcmclb advise: no I/O, no launcher.
    "advice": {"study", "stats", "balancers", "kernel", "comm", "comm/base"},
    # advise's orchestration: the plan, the race, --check and the search, run through the launchers.
    "advise": {"launch", "advice", "driver", "study", "stats", "balancers", "kernel", "comm", "comm/base"},
    # What mcmclb-commbench measures and its rows: no flags, no printing.
    "commbench": {"study", "stats", "kernel", "comm", "comm/base"},
    # The commands: they call every library, and no library calls them.
    "apps": {"commbench", "launch", "advise", "advice", "driver", "study", "stats", "balancers", "kernel", "comm", "comm/base"},
}
SOURCE = (".cpp", ".hpp", ".h", ".c")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def room_of(path):
    """The room a repository path lies in: the longest ROOMS folder that holds it; None outside every room."""
    found = None
    for room in ROOMS:
        if path.startswith(room + "/") and (found is None or len(room) > len(found)):
            found = room
    return found


def public_headers():
    """{"mcmclb/x.hpp": room} for every room's include/mcmclb/ folder."""
    headers = {}
    for room in ROOMS:
        folder = os.path.join(ROOT, room, "include", "mcmclb")
        for name in os.listdir(folder) if os.path.isdir(folder) else []:
            headers["mcmclb/" + name] = room
    return headers


def sources():
    """Every source file of every room, as repository paths."""
    for room in ROOMS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, room)):
            rel = os.path.relpath(dirpath, ROOT)
            # a room's sub-room (comm/base inside comm) is walked as its own room
            dirnames[:] = [d for d in dirnames if os.path.join(rel, d) not in ROOMS]
            for name in filenames:
                if name.endswith(SOURCE):
                    yield os.path.join(rel, name)


class Rooms(unittest.TestCase):
    def test_each_room_includes_only_the_rooms_below_it(self):
        headers = public_headers()
        wrong = []
        for path in sources():
            room = room_of(path)
            with open(os.path.join(ROOT, path), encoding="utf-8") as f:
                text = f.read()
            for included in INCLUDE.findall(text):
                if included in headers:
                    other = headers[included]
                    if other != room and other not in ROOMS[room]:
                        wrong.append(f"{path}: {included} is {other}'s (allowed for {room}: "
                                     f"{', '.join(sorted(ROOMS[room])) or 'none'})")
                    continue
                # A private header: beside the file, or in its own room's src/ or generated files.
                beside = os.path.join(ROOT, os.path.dirname(path), included)
                if os.path.exists(beside) and room_of(os.path.relpath(os.path.realpath(beside), ROOT)) != room:
                    wrong.append(f"{path}: {included} is another room's private header")
                if "/" in included and not included.startswith("mcmclb/") and ".." in included:
                    wrong.append(f"{path}: {included} reaches out of its folder")
        self.assertEqual(wrong, [])

    def test_the_rules_have_no_circle(self):
        def below(room, seen=()):
            self.assertNotIn(room, seen, f"a circle through {' -> '.join(seen + (room,))}")
            for other in ROOMS[room]:
                below(other, seen + (room,))
        for room in ROOMS:
            below(room)

    def test_every_launcher_is_one_file_and_one_line(self):
        with open(os.path.join(ROOT, "launch/src/launchers.def"), encoding="utf-8") as f:
            names = re.findall(r"^MCMCLB_LAUNCHER\((\w+)\)", f.read(), re.M)
        self.assertEqual(names, ["local", "slurm", "smpi"])
        for name in names:
            with open(os.path.join(ROOT, "launch/src", name + ".cpp"), encoding="utf-8") as f:
                self.assertIn(f"std::unique_ptr<Launcher> {name}_launcher()", f.read())
        # The commands choose a launcher; none is defined among them.
        for path in sources():
            if path.startswith("apps/"):
                with open(os.path.join(ROOT, path), encoding="utf-8") as f:
                    self.assertNotIn("public Launcher", f.read(), path)


if __name__ == "__main__":
    unittest.main()
