"""dmlctl (the C++ client) on resident tensors, end to end: upload, ls,
download (whole arrays and raw byte ranges), rm, run with handle inputs and
outputs, chains from a JSON file, the tenant rules, and chunked transfers
through a server whose message limit is far below the tensor's size."""

import json
import os
import subprocess
import tempfile
import unittest

import numpy as np

import dmlserve_client as dc
import reference as ref
from e2e_server import DMLCTL_CMD, SOURCE_DIR, ServerTestCase
from resident_helpers import random_array

EXAMPLES = os.path.join(SOURCE_DIR, "client", "examples")
CELU_JSON = os.path.join(EXAMPLES, "celu.json")
CHAIN_JSON = os.path.join(EXAMPLES, "chain_celu_mvn1_threshold.json")


def celu_ref(x):
    """CELU with the examples' alpha of 1."""
    return ref.activation("celu", x, {"alpha": 1.0})


def chain_ref(x):
    """The example chain: CELU, MVN1 over the last axis, THRESHOLD at -1."""
    c = celu_ref(x).astype(np.float64)
    mean = c.mean(axis=-1, keepdims=True)
    var = c.var(axis=-1, keepdims=True)
    return np.maximum((c - mean) / np.sqrt(var + 1e-5), -1.0)


class DmlctlResidentTest(ServerTestCase):

    TENANT = "dmlctl-e2e"

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.tenant_client = dc.DmlClient(self.target, timeout=60,
                                          tenant=self.TENANT)
        self.addCleanup(self.tenant_client.close)
        for t in self.tenant_client.list_tensors().tensors:
            self.tenant_client.release(t)

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def dmlctl(self, *args, tenant=TENANT, check=True):
        cmd = DMLCTL_CMD + ["--server=" + self.target]
        if tenant:
            cmd.append("--tenant=" + tenant)
        env = dict(os.environ)
        env.pop("DMLS_TENANT", None)
        result = subprocess.run(cmd + list(args), capture_output=True,
                                text=True, timeout=120, env=env)
        if check:
            self.assertEqual(result.returncode, 0,
                             "dmlctl %s: %s" % (args, result.stderr))
        return result

    def save(self, name, array):
        np.save(self.path(name), array)
        return self.path(name)

    def upload(self, array, *flags):
        result = self.dmlctl("upload", self.save("up.npy", array), *flags)
        handle = result.stdout.strip()
        self.assertRegex(handle, r"^t-[0-9a-f]{32}$")
        return handle

    def test_upload_ls_download_rm(self):
        x = random_array((3, 5, 7), seed=11)
        handle = self.upload(x, "--chunk-bytes=100", "--ttl=600")
        # The Python client of the same tenant sees it, with dmlctl's layout.
        [info] = self.tenant_client.list_tensors().tensors
        self.assertEqual(info.handle, handle)
        self.assertEqual(list(info.desc.sizes), [3, 5, 7])
        np.testing.assert_array_equal(self.tenant_client.download(handle), x)
        listing = self.dmlctl("ls").stdout
        self.assertIn(handle, listing)
        self.assertIn("FLOAT32 [3, 5, 7]  420 bytes", listing)
        self.assertIn("1 tensors, 420 bytes", listing)
        listed = json.loads(self.dmlctl("ls", "--json").stdout)
        self.assertEqual(listed["tensors"][0]["handle"], handle)
        self.dmlctl("download", handle, "--output", self.path("down.npy"),
                    "--chunk-bytes=64")
        np.testing.assert_array_equal(np.load(self.path("down.npy")), x)
        self.dmlctl("download", handle, "--output", self.path("part.bin"),
                    "--raw", "--offset=8", "--length=40")
        with open(self.path("part.bin"), "rb") as f:
            self.assertEqual(f.read(), x.tobytes()[8:48])
        self.assertIn("released " + handle, self.dmlctl("rm", handle).stdout)
        self.assertEqual(self.tenant_client.list_tensors().tensors, [])
        again = self.dmlctl("rm", handle, check=False)
        self.assertEqual(again.returncode, 1)
        self.assertIn("HANDLE_NOT_FOUND", again.stderr)

    def test_float16_and_integer_arrays_round_trip(self):
        for array in (random_array((4, 6), seed=2).astype(np.float16),
                      np.arange(-50, 50, dtype=np.int32).reshape(10, 10)):
            handle = self.upload(array)
            self.dmlctl("download", handle, "--output", self.path("d.npy"))
            got = np.load(self.path("d.npy"))
            self.assertEqual(got.dtype, array.dtype)
            np.testing.assert_array_equal(got, array)

    def test_other_tenants_and_missing_tenant(self):
        handle = self.upload(random_array((8,), seed=3))
        other = self.dmlctl("download", handle, "--output",
                            self.path("o.npy"), tenant="someone-else",
                            check=False)
        self.assertEqual(other.returncode, 1)
        self.assertIn("NOT_FOUND", other.stderr)
        self.assertNotIn(handle, self.dmlctl("ls", tenant="someone-else").stdout)
        for args in (("ls",), ("upload", self.save("n.npy", np.ones(3))),
                     ("run", CELU_JSON, "--input-handle", handle,
                      "--output", self.path("n.npy")),
                     ("run", CHAIN_JSON, "--input", self.path("n.npy"))):
            result = self.dmlctl(*args, tenant=None, check=False)
            self.assertEqual(result.returncode, 2, args)
            self.assertIn("--tenant", result.stderr)

    def test_run_with_handles(self):
        x = random_array((2, 3, 16), seed=4)
        h = self.upload(x)
        self.dmlctl("run", CELU_JSON, "--input-handle", h, "--output",
                    self.path("c.npy"))
        expected = celu_ref(x)
        np.testing.assert_allclose(np.load(self.path("c.npy")), expected,
                                   rtol=1e-5, atol=1e-6)
        kept = self.dmlctl("run", CELU_JSON, "--input-handle", h,
                           "--keep-output", "--ttl=60").stdout.strip()
        self.assertRegex(kept, r"^t-[0-9a-f]{32}$")
        np.testing.assert_array_equal(self.tenant_client.download(kept),
                                      np.load(self.path("c.npy")))
        # Into an existing tensor, then in place on the input's tensor.
        target = self.tenant_client.create_tensor(
            dc.tensor_desc(np.float32, x.shape))
        self.dmlctl("run", CELU_JSON, "--input-handle", h,
                    "--output-handle", target.handle)
        np.testing.assert_array_equal(self.tenant_client.download(target),
                                      np.load(self.path("c.npy")))
        self.dmlctl("run", CELU_JSON, "--input-handle", h, "--in-place")
        np.testing.assert_array_equal(self.tenant_client.download(h),
                                      np.load(self.path("c.npy")))

    def test_chain_from_json(self):
        x = random_array((2, 3, 4), seed=5)
        result = self.dmlctl("run", CHAIN_JSON, "--input",
                             self.save("x.npy", x), "--output",
                             self.path("out.npy"))
        self.assertRegex(result.stdout, r"step 2: t-[0-9a-f]{32}")
        self.assertIn("3 steps on", result.stdout)
        got = np.load(self.path("out.npy"))
        np.testing.assert_allclose(got, chain_ref(x), rtol=1e-4, atol=1e-4)
        # The step kept its output too: the same values, resident.
        kept = result.stdout.split("step 2: ")[1].split()[0]
        np.testing.assert_array_equal(self.tenant_client.download(kept), got)

    def test_chain_over_handles_with_output_dir(self):
        x = random_array((2, 3, 4), seed=6)
        h = self.upload(x)
        chain = {"steps": [
            {"operator": {"celu": {"input": {}, "output": {}, "alpha": 1.0}},
             "input": {"handle": h}, "returnOutput": True},
            {"operator": {"threshold": {"input": {}, "output": {},
                                        "min": 0.0}},
             "input": {"step": 0}, "returnOutput": True}]}
        with open(self.path("chain.json"), "w") as f:
            json.dump(chain, f)
        out_dir = self.path("outs")
        os.mkdir(out_dir)
        self.dmlctl("run", self.path("chain.json"), "--output-dir", out_dir)
        c = celu_ref(x)
        np.testing.assert_allclose(np.load(os.path.join(out_dir, "step0.npy")),
                                   c, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.load(os.path.join(out_dir, "step1.npy")),
                                   np.maximum(c, 0.0), rtol=1e-5, atol=1e-6)
        # Two returned outputs need a directory.
        result = self.dmlctl("run", self.path("chain.json"), "--output",
                             self.path("one.npy"), check=False)
        self.assertEqual(result.returncode, 2)

    def test_invalid_chain_step_names_its_path(self):
        x = random_array((2, 3, 4), seed=7)
        chain = {"steps": [
            {"operator": {"celu": {"input": {}, "output": {}, "alpha": 1.0}}},
            {"operator": {"mvn1": {"input": {}, "output": {}, "axes": [1, 1],
                                   "epsilon": 1e-5}},
             "input": {"step": 0}, "returnOutput": True}]}
        with open(self.path("bad.json"), "w") as f:
            json.dump(chain, f)
        result = self.dmlctl("run", self.path("bad.json"), "--input",
                             self.save("x.npy", x), "--output",
                             self.path("o.npy"), check=False)
        self.assertEqual(result.returncode, 1)
        self.assertIn("MVN_AXES_DUPLICATE at steps[1].operator.mvn1.axes[1]",
                      result.stderr)
        self.assertFalse(os.path.exists(self.path("o.npy")))

    def test_random_needs_a_shape_when_the_example_has_none(self):
        result = self.dmlctl("run", CELU_JSON, "--random=1", "--output",
                             self.path("r.npy"), tenant=None, check=False)
        self.assertEqual(result.returncode, 2)
        self.assertIn("--shape", result.stderr)
        self.dmlctl("run", CELU_JSON, "--random=1", "--shape=4,5",
                    "--output", self.path("r.npy"), tenant=None)
        self.assertEqual(np.load(self.path("r.npy")).shape, (4, 5))
        # Sizes alone in the file: the total size is worked out.
        with open(self.path("sized.json"), "w") as f:
            json.dump({"celu": {"input": {"sizes": [3, 7]}, "output": {},
                                "alpha": 1.0}}, f)
        self.dmlctl("run", self.path("sized.json"), "--random=2", "--output",
                    self.path("s.npy"), tenant=None)
        self.assertEqual(np.load(self.path("s.npy")).shape, (3, 7))


class DmlctlManyChunksTest(ServerTestCase):
    """A 6 MiB tensor through a server that takes 256 KiB messages: the
    upload, a CELU on the handle and the download all go in chunks."""

    SERVER_ARGS = ("--max_message_bytes=262144",)

    def test_large_tensor_through_small_messages(self):
        with tempfile.TemporaryDirectory() as tmp:
            x = random_array((1536, 1024), seed=8)
            np.save(os.path.join(tmp, "x.npy"), x)
            base = DMLCTL_CMD + ["--server=" + self.target, "--tenant=big"]

            def run(*args):
                result = subprocess.run(base + list(args), capture_output=True,
                                        text=True, timeout=300)
                self.assertEqual(result.returncode, 0, result.stderr)
                return result.stdout.strip()

            h = run("upload", os.path.join(tmp, "x.npy"),
                    "--chunk-bytes=200K", "--progress")
            kept = run("run", CELU_JSON, "--input-handle", h, "--keep-output")
            run("download", kept, "--output", os.path.join(tmp, "y.npy"),
                "--chunk-bytes=128K")
            np.testing.assert_allclose(np.load(os.path.join(tmp, "y.npy")),
                                       celu_ref(x), rtol=1e-5, atol=1e-6)
            run("rm", h, kept)


if __name__ == "__main__":
    unittest.main()
