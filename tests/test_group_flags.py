# SPDX-License-Identifier: BSD-3-Clause
"""The initial groups a walkers program is asked for on its command line (--mcmclb-group-size, --mcmclb-groups,
--mcmclb-group-sizes): a bad value, a count the ranks cannot hold, or two of them at once is refused as any bad option
is, in one line on rank 0 with exit 2, before the trace or the checkpoint folder is written. examples/minimal at 2
ranks, four launches: about 2 s. Needs MINIMAL, MPIEXEC, MCMCLB_BIN and MCMCLB_COMMBENCH (ctest sets them)."""
import os
import unittest

from test_inputs import InputCase, snapshot

MINIMAL = os.environ["MINIMAL"]
MPIEXEC = os.environ.get("MPIEXEC", "mpiexec")


class GroupFlags(InputCase):
    def test_bad_groups_are_refused_in_one_line_before_anything_is_written(self):
        cases = ((["--mcmclb-groups", "0"],
                  "--mcmclb-groups: '0' is not a number of groups (allowed: an integer in [1, "),
                 (["--mcmclb-group-sizes", "1,,1"],
                  "--mcmclb-group-sizes: '1,,1' is not allowed (allowed: sizes >= 1 in rank order, e.g. 3,2,2)"),
                 (["--mcmclb-groups", "3"], "key groups.count: 3 groups but nprocs=2 (allowed: 1 to nprocs groups)"),
                 (["--mcmclb-group-size", "2", "--mcmclb-groups", "1"],
                  "--mcmclb-groups: given with --mcmclb-group-size (allowed: one of group-size, groups, group-sizes)"))
        for flags, line in cases:
            with self.subTest(flags=flags):
                out = self.fresh("out")
                os.mkdir(out)
                r = self.launch([MPIEXEC, "-n", "2", MINIMAL, *flags, "--mcmclb-record", os.path.join(out, "t.csv"),
                                 "--mcmclb-checkpoint", os.path.join(out, "ck")])
                self.assert_one_line_error(r, line, program="minimal")
                self.assertEqual(os.listdir(out), [], "written before the check")
                self.assertEqual(snapshot(out), {})


if __name__ == "__main__":
    unittest.main()
