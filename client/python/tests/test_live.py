"""The package against a live server (DMLSERVE_BIN): the README's hello
world, defaults in chains, every stream() call form, the asyncio client,
handles in helpers, float64 with cast=, and progress bars on transfers."""

import asyncio
import io
import os
import sys
import unittest

import numpy as np

import dmlserve
from dmlserve.aio import AsyncDmlClient
from live_server import LiveServer


def mvn_ref(x, eps=1e-5):
    x = x.astype(np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + np.float64(np.float32(eps)))


def celu_ref(x, alpha=1.0):
    x = x.astype(np.float64)
    return np.maximum(0, x) + np.minimum(0, alpha * np.expm1(x / alpha))


class LiveTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.server = LiveServer().start()
        # Resident tensors need an identity: the tests name a tenant.
        cls.client = dmlserve.DmlClient(cls.server.target, timeout=60, tenant="live")
        cls.x = np.random.default_rng(0).standard_normal((8, 1024),
                                                         np.float32)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        code = cls.server.stop()
        if code != 0:
            raise AssertionError("dmlserve exited with %s: %s"
                                 % (code, cls.server.stderr()))

    def check(self, actual, expected, tol=1e-4):
        self.assertEqual(actual.dtype, np.float32)
        np.testing.assert_allclose(actual, expected, atol=tol, rtol=tol)

    def test_installed_package_is_the_one_tested(self):
        # ctest runs these from the venv it pip-installed the package into.
        if os.environ.get("DMLS_EXPECT_INSTALLED"):
            self.assertTrue(dmlserve.__file__.startswith(sys.prefix),
                            dmlserve.__file__)
        self.assertEqual(self.client.capabilities().server_version,
                         dmlserve.__version__)

    def test_hello_world(self):
        y = self.client.execute_mvn1(self.x, axes=-1)
        z = self.client.execute_celu(y, alpha=1.0)
        self.check(z, celu_ref(mvn_ref(self.x)))

    def test_readme_hello_world_runs_as_written(self):
        # The first python block of the repository's README that imports
        # dmlserve, run as it stands with the address pointed at this
        # server.
        readme = os.path.join(os.path.dirname(__file__), "..", "..", "..",
                              "README.md")
        text = open(readme, encoding="utf-8").read()
        blocks = [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]
        block = next(b for b in blocks if "import dmlserve" in b)
        self.assertIn("127.0.0.1:50051", block)
        out = io.StringIO()
        saved, sys.stdout = sys.stdout, out
        try:
            exec(block.replace("127.0.0.1:50051", self.server.target), {})
        finally:
            sys.stdout = saved
        self.assertEqual(out.getvalue().strip(), "(8, 1024) float32")

    def test_chain_step_gets_the_helper_defaults(self):
        chain = dmlserve.Chain()
        a = chain.step({"mvn1": {"axes": -1}}, self.x)
        chain.step({"celu": {}}, a, return_output=True)
        result = self.client.chain(chain)
        self.check(result.arrays[1], celu_ref(mvn_ref(self.x)))

    def test_stream_takes_what_execute_takes(self):
        op = {"mvn1": {"axes": [-1]}}
        direct = self.client.execute(op, self.x)
        results = self.client.stream([
            (op, self.x),
            dmlserve.build_request(op, self.x),
            {"op": {"celu": {"alpha": 0.0}}, "inputs": self.x},
        ], raise_errors=False)
        np.testing.assert_array_equal(results[0], direct)
        np.testing.assert_array_equal(results[1], direct)
        self.assertEqual(results[2].rule, "CELU_ALPHA_INVALID")
        with self.assertRaises(dmlserve.DmlError):
            self.client.stream([({"celu": {"alpha": 0.0}}, self.x)])

    def test_float64_with_cast(self):
        x64 = self.x.astype(np.float64)
        with self.assertRaisesRegex(ValueError, "cast=np.float32"):
            self.client.execute_celu(x64)
        self.check(self.client.execute_celu(x64, cast=np.float32),
                   celu_ref(self.x))

    def test_helpers_on_a_resident_tensor_with_a_progress_bar(self):
        out = io.StringIO()
        bar = dmlserve.ProgressBar("upload", stream=out, interval=0)
        h = self.client.upload(self.x, chunk_bytes=8192, progress=bar)
        self.assertTrue(out.getvalue().endswith("100% 0.0/0.0 MiB\n"),
                        out.getvalue()[-80:])
        try:
            y = self.client.execute_mvn1(h, axes=-1)
            self.check(y, mvn_ref(self.x))
            seen = []
            back = self.client.download(
                h, chunk_bytes=4096, progress=lambda d, t: seen.append(d))
            np.testing.assert_array_equal(back, self.x)
            self.assertEqual(seen[-1], self.x.nbytes)
            self.assertGreater(len(seen), 1)
        finally:
            self.client.release(h)

    def test_errors_keep_rule_and_field(self):
        with self.assertRaises(dmlserve.DmlError) as e:
            self.client.execute_mvn1(self.x, axes=[2])
        self.assertEqual(e.exception.rule, "MVN_AXIS_OUT_OF_RANGE")
        self.assertEqual(e.exception.field, "operator.mvn1.axes[0]")

    def test_asyncio_client(self):
        async def run():
            async with AsyncDmlClient(self.server.target, tenant="live") as client:
                caps = await client.capabilities()
                y = await client.execute_mvn1(self.x, axes=-1)
                z = await client.execute_celu(y)
                streamed = await client.stream(
                    [({"celu": {}}, y), ({"mvn1": {"axes": -1}}, self.x)])
                h = await client.upload(self.x, chunk_bytes=8192)
                back = await client.download(h, chunk_bytes=4096)
                listed = await client.list_tensors()
                await client.release(h)
                chained = await client.chain([
                    {"op": {"mvn1": {"axes": -1}}, "input": self.x},
                    {"op": {"celu": {}}, "input": 0,
                     "return_output": True}])
                with self.assertRaises(dmlserve.DmlError) as e:
                    await client.execute_celu(self.x, alpha=0.0)
                return (caps, z, streamed, back, listed, chained,
                        e.exception)
        caps, z, streamed, back, listed, chained, error = asyncio.run(run())
        self.assertEqual(caps.server_version, dmlserve.__version__)
        expected = celu_ref(mvn_ref(self.x))
        self.check(z, expected)
        self.check(streamed[0], expected)
        self.check(streamed[1], mvn_ref(self.x))
        np.testing.assert_array_equal(back, self.x)
        self.assertEqual(len(listed.tensors), 1)
        self.check(chained.arrays[1], expected)
        self.assertEqual(error.rule, "CELU_ALPHA_INVALID")

    def test_execute_chunked_with_progress(self):
        sent, got = [], []
        y = self.client.execute_chunked(
            {"mvn1": {"axes": -1}}, self.x, chunk_bytes=4096,
            progress=lambda d, t: sent.append((d, t)),
            response_chunk_bytes=4096,
            download_progress=lambda d, t: got.append((d, t)))
        self.check(y, mvn_ref(self.x))
        self.assertEqual(sent[-1], (self.x.nbytes, self.x.nbytes))
        self.assertEqual(got[-1], (self.x.nbytes, self.x.nbytes))

    def test_execute_progress_of_a_unary_call(self):
        seen = []
        y = self.client.execute_celu(self.x,
                                     progress=lambda d, t: seen.append((d, t)))
        self.check(y, celu_ref(self.x))
        # One message each way: its start, then both messages' bytes.
        self.assertEqual(len(seen), 2, seen)
        self.assertEqual(seen[0], (0, None))
        n = seen[1][0]
        self.assertEqual(seen[1], (n, n))
        self.assertGreater(n, 2 * self.x.nbytes)
        self.assertLess(n, 2 * self.x.nbytes + 1024)
        out = io.StringIO()
        self.client.execute_celu(
            self.x, progress=dmlserve.ProgressBar("execute", stream=out,
                                                  interval=0))
        self.assertRegex(out.getvalue(), r"100% 0\.1/0\.1 MiB\n$")

    def test_execute_progress_of_a_large_call_goes_in_chunks(self):
        chunk = self.client.limits().default_chunk_bytes
        rows = 2 * chunk // 4096 + 3  # three chunks of 1024 floats a row
        x = np.random.default_rng(5).standard_normal((rows, 1024), np.float32)
        seen = []
        y = self.client.execute_mvn1(x, axes=-1,
                                     progress=lambda d, t: seen.append((d, t)))
        np.testing.assert_array_equal(y, self.client.execute_mvn1(x, axes=-1))
        # ExecuteChunked: the upload chunk by chunk, then the download.
        self.assertNotIn((0, None), seen)
        self.assertTrue(all(t == x.nbytes for _, t in seen), seen)
        ends = [i for i, (d, _) in enumerate(seen) if d == x.nbytes]
        self.assertEqual(len(ends), 2, seen)
        self.assertGreaterEqual(ends[0], 2)  # three upload chunks
        self.assertGreater(ends[1], ends[0] + 1)  # and more than one down

        async def run():
            async with AsyncDmlClient(self.server.target) as client:
                small, large = [], []
                a = await client.execute_celu(
                    self.x, progress=lambda d, t: small.append((d, t)))
                b = await client.execute_mvn1(
                    x, axes=-1, progress=lambda d, t: large.append((d, t)))
                return a, b, small, large
        a, b, small, large = asyncio.run(run())
        self.check(a, celu_ref(self.x))
        np.testing.assert_array_equal(b, y)
        self.assertEqual(small[0], (0, None))
        self.assertEqual(len(small), 2)
        self.assertEqual(large, seen)


if __name__ == "__main__":
    unittest.main()
