"""dmlctl's first hour (issue 23): unknown flags are errors, validate with
and without --shape, caps --summary, run CHAIN.json --input-handle, and
every example in client/examples at every rank its README claims."""

import os
import re
import subprocess
import tempfile

import numpy as np

import dmlserve_client as dc
from e2e_server import DMLCTL_CMD, SOURCE_DIR, ServerTestCase
from resident_helpers import random_array

EXAMPLES = os.path.join(SOURCE_DIR, "client", "examples")
TENANT = "dmlctl-first-hour"


def example_ranks():
    """{file: [ranks]} from client/examples/README.md's table."""
    with open(os.path.join(EXAMPLES, "README.md")) as f:
        rows = re.findall(r"^\| `([^`]+\.json)` \|.*\| ([0-9-]+) \|$",
                          f.read(), re.M)
    out = {}
    for name, ranks in rows:
        low, _, high = ranks.partition("-")
        out[name] = list(range(int(low), int(high or low) + 1))
    return out


class DmlctlTest(ServerTestCase):

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def dmlctl(self, *args, expect=0):
        env = dict(os.environ, DMLS_TENANT=TENANT)
        result = subprocess.run(
            DMLCTL_CMD + ["--server=" + self.target] + list(args),
            capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(result.returncode, expect,
                         "dmlctl %s:\n%s%s" % (args, result.stdout,
                                               result.stderr))
        return result

    def test_unknown_flags_are_usage_errors(self):
        celu = os.path.join(EXAMPLES, "celu.json")
        for args, flag in ((("--bogus=1", "caps"), "--bogus"),
                           (("run", celu, "--random=1", "--shapee=3",
                             "--output=" + self.path("y.npy")), "--shapee"),
                           (("validate", celu, "--output=x"), "--output")):
            result = self.dmlctl(*args, expect=2)
            self.assertIn("unknown flag " + flag, result.stderr)
            self.assertFalse(os.path.exists(self.path("y.npy")))
        # A known flag that would be ignored is refused too.
        result = self.dmlctl("run", celu, "--input=" + self.save(
            random_array((2, 3), seed=1)), "--shape=4,4",
            "--output=" + self.path("y.npy"), expect=2)
        self.assertIn("--shape and --data-type describe --random data",
                      result.stderr)

    def test_validate_without_sizes_checks_every_rank(self):
        celu = os.path.join(EXAMPLES, "celu.json")
        out = self.dmlctl("validate", celu).stdout
        self.assertIn("valid at ranks 1,2,3,4,5,6,7,8", out)
        out = self.dmlctl("validate", celu, "--shape=8,1024").stdout
        self.assertRegex(out, r"^valid at feature level 0x[0-9a-f]+\n$")
        bad = self.dmlctl("validate", os.path.join(EXAMPLES,
                                                   "mvn1_bad_axes.json"),
                          expect=1).stdout
        self.assertIn("MVN_AXES_DUPLICATE operator.mvn1.axes[1]", bad)

    def test_validate_shape_and_negative_axes(self):
        op = self.path("mvn.json")
        with open(op, "w") as f:
            f.write('{"mvn1": {"input": {}, "output": {}, "axes": [-1], '
                    '"normalizeVariance": true, "epsilon": 1e-5}}')
        self.assertIn("valid at feature level",
                      self.dmlctl("validate", op, "--shape=8,1024").stdout)
        out = self.dmlctl("validate", op, "--shape=4", "--data-type=INT32",
                          expect=1).stdout
        self.assertIn("DATATYPE_UNSUPPORTED operator.mvn1.input.data_type", out)

    def test_caps_summary_fits_a_screen(self):
        out = self.dmlctl("caps", "--summary").stdout
        lines = out.splitlines()
        self.assertLess(len(lines), 40)
        caps = self.client.capabilities()
        self.assertTrue(lines[0].startswith("dmlserve %s on " %
                                            caps.server_version), lines[0])
        self.assertIn("%d operators at feature level" % len(caps.operators),
                      out)
        self.assertRegex(out, r"\n  mvn1 +MEAN_VARIANCE_NORMALIZATION1 +ranks")

    def test_chain_input_handle(self):
        chain = os.path.join(EXAMPLES, "chain_celu_mvn1_threshold.json")
        x = random_array((8, 1024), seed=9)
        with dc.DmlClient(self.target, tenant=TENANT) as client:
            h = client.upload(x)
            try:
                self.dmlctl("run", chain, "--input-handle=" + h.handle,
                            "--output=" + self.path("by_handle.npy"))
                self.dmlctl("run", chain, "--input=" + self.save(x),
                            "--output=" + self.path("by_data.npy"))
                self.dmlctl("run", chain, "--input-handle=" + h.handle,
                            "--input=" + self.save(x), expect=2)
            finally:
                client.release(h)
        np.testing.assert_array_equal(np.load(self.path("by_handle.npy")),
                                      np.load(self.path("by_data.npy")))

    def save(self, array):
        np.save(self.path("x.npy"), array)
        return self.path("x.npy")

    def test_examples_work_at_every_rank_they_claim(self):
        ranks = example_ranks()
        self.assertEqual(sorted(ranks), sorted(
            f for f in os.listdir(EXAMPLES) if f.endswith(".json")))
        for name, claimed in ranks.items():
            path = os.path.join(EXAMPLES, name)
            expect = 1 if "bad" in name else 0
            for rank in claimed:
                shape = [3, 2, 4, 5, 1, 2, 1, 3][:rank]
                if name.startswith("chain"):
                    self.dmlctl("run", path, "--input=" + self.save(
                        random_array(tuple(shape), seed=rank)),
                        "--output=" + self.path("y.npy"))
                    self.assertEqual(np.load(self.path("y.npy")).shape,
                                     tuple(shape))
                elif "sizes" in open(path).read():
                    self.dmlctl("validate", path, expect=expect)
                else:
                    self.dmlctl("run", path, "--random=%d" % rank,
                                "--shape=" + ",".join(map(str, shape)),
                                "--output=" + self.path("y.npy"))
                    self.assertEqual(np.load(self.path("y.npy")).shape,
                                     tuple(shape))
