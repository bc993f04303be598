"""Service-level checks: grpc.health.v1, server reflection, capabilities,
the Python example client and the C++ client (dmlctl) through .npy files."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import reference as ref
from dmlserve.v1 import dmlserve_pb2 as pb
from dmls_e2e import reflection_pb2, reflection_pb2_grpc
from e2e_server import (DEVICE_KINDS, DMLCTL_CMD, DMLSERVE_CMD, SOURCE_DIR,
                        ServerTestCase,
                        health_status)
from google.protobuf import descriptor_pb2

import grpc

EXAMPLES = os.path.join(SOURCE_DIR, "client", "examples")


class HealthAndReflectionTest(ServerTestCase):

    def test_health_serving(self):
        self.assertEqual(health_status(self.target), "SERVING")
        self.assertEqual(health_status(self.target, "dmlserve.v1.DmlService"),
                         "SERVING")
        with self.assertRaises(grpc.RpcError) as cm:
            health_status(self.target, "no.such.Service")
        self.assertEqual(cm.exception.code(), grpc.StatusCode.NOT_FOUND)

    def reflect(self, **request):
        with grpc.insecure_channel(self.target) as channel:
            stub = reflection_pb2_grpc.ServerReflectionStub(channel)
            responses = list(stub.ServerReflectionInfo(
                iter([reflection_pb2.ServerReflectionRequest(**request)]),
                timeout=10))
        self.assertEqual(len(responses), 1)
        return responses[0]

    def test_reflection_lists_services(self):
        response = self.reflect(list_services="")
        names = {s.name for s in response.list_services_response.service}
        self.assertIn("dmlserve.v1.DmlService", names)
        self.assertIn("grpc.health.v1.Health", names)

    def test_reflection_serves_the_service_descriptor(self):
        response = self.reflect(file_containing_symbol="dmlserve.v1.DmlService")
        files = [descriptor_pb2.FileDescriptorProto.FromString(b) for b in
                 response.file_descriptor_response.file_descriptor_proto]
        by_name = {f.name: f for f in files}
        self.assertIn("dmlserve/v1/dmlserve.proto", by_name)
        service = by_name["dmlserve/v1/dmlserve.proto"].service[0]
        self.assertEqual(service.name, "DmlService")
        self.assertEqual({m.name for m in service.method},
                         {"GetCapabilities", "Validate", "Execute",
                          "ExecuteStream", "ExecuteChain", "ExecuteChunked"})

    def test_capabilities(self):
        caps = self.client.capabilities()
        self.assertIn(caps.device_kind, DEVICE_KINDS)
        self.assertEqual(caps.highest_feature_level, pb.FEATURE_LEVEL_6_4)
        self.assertIn(pb.FEATURE_LEVEL_2_1, caps.feature_levels)
        ops = {o.field: o for o in caps.operators}
        self.assertEqual(len(ops), 21)
        self.assertEqual(ops["celu"].operator_type, 128)
        self.assertEqual(ops["celu"].introduced, pb.FEATURE_LEVEL_3_0)
        self.assertEqual(ops["mvn1"].name, "MEAN_VARIANCE_NORMALIZATION1")
        self.assertFalse(ops["mvn1"].in_place)
        self.assertEqual(ops["gelu"].fusable_from, pb.FEATURE_LEVEL_5_1)
        self.assertFalse(ops["clip"].HasField("fusable_from"))
        self.assertGreater(caps.limits.max_message_bytes, 0)


class MemoryCapTest(ServerTestCase):
    """--gpu_memory_cap_bytes is the cap GetCapabilities reports, per device
    and in the limits (0 on the CPU engine, which has none)."""

    SERVER_ARGS = ("--gpu_memory_cap_bytes=96M",)

    def test_reported_cap_is_the_one_in_effect(self):
        caps = self.client.capabilities()
        want = 0 if caps.device_kind == "cpu" else 96 << 20
        self.assertEqual(caps.limits.device_memory_cap_bytes, want)
        for device in caps.devices:
            self.assertEqual(device.memory_cap_bytes, want)

    def test_a_bad_cap_stops_the_server_with_the_flag_named(self):
        result = subprocess.run(DMLSERVE_CMD + ["--gpu_memory_cap_bytes=lots"],
                                capture_output=True, text=True, timeout=30)
        self.assertEqual(result.returncode, 1)
        self.assertIn("--gpu_memory_cap_bytes must be auto, 0", result.stderr)


class ExampleClientTest(ServerTestCase):

    def test_python_example_runs_green(self):
        result = subprocess.run(
            [sys.executable,
             os.path.join(SOURCE_DIR, "client", "python", "example.py"),
             "--server", self.target],
            capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        for line in ("CELU float32 alpha=1.5: ok", "CELU float16 alpha=1.5: ok",
                     "THRESHOLD float32", "THRESHOLD float16",
                     "MVN1 float32 axes=[2,3] + fused RELU: ok",
                     "MVN1 float16 axes=[2,3] + fused RELU: ok",
                     "INVALID_ARGUMENT MVN_AXES_DUPLICATE at "
                     "operator.mvn1.axes[1]",
                     "all results correct"):
            self.assertIn(line, result.stdout)


class DmlctlTest(ServerTestCase):

    def dmlctl(self, *args):
        return subprocess.run(DMLCTL_CMD + ["--server=" + self.target] +
                              list(args), capture_output=True, text=True,
                              timeout=60)

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def test_caps(self):
        result = self.dmlctl("caps")
        self.assertEqual(result.returncode, 0, result.stderr)
        caps = json.loads(result.stdout)
        self.assertIn(caps["deviceKind"], DEVICE_KINDS)
        self.assertIn("celu", {o["field"] for o in caps["operators"]})

    def test_health(self):
        result = self.dmlctl("--timeout=3", "health")
        self.assertEqual((result.returncode, result.stdout), (0, "SERVING\n"),
                         result.stderr)
        result = self.dmlctl("health", "--service=dmlserve.v1.DmlService")
        self.assertEqual(result.returncode, 0, result.stderr)
        result = self.dmlctl("health", "--service=no.such.Service")
        self.assertEqual(result.returncode, 1)
        self.assertIn("NOT_FOUND", result.stderr)

    def test_validate(self):
        result = self.dmlctl("validate",
                             os.path.join(EXAMPLES, "mvn1_fused_celu.json"))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertTrue(result.stdout.startswith("valid at feature level"),
                        result.stdout)
        result = self.dmlctl("validate",
                             os.path.join(EXAMPLES, "mvn1_bad_axes.json"))
        self.assertEqual(result.returncode, 1)
        self.assertIn("MVN_AXES_DUPLICATE operator.mvn1.axes[1]", result.stdout)
        result = self.dmlctl("validate",
                             os.path.join(EXAMPLES, "mvn1_fused_celu.json"),
                             "--feature-level", "2_1")
        self.assertEqual(result.returncode, 1)
        self.assertIn("FUSED_NOT_AVAILABLE", result.stdout)
        result = self.dmlctl("validate",
                             os.path.join(EXAMPLES, "mvn1_fused_celu.json"),
                             "--in-place")
        self.assertEqual(result.returncode, 1)
        self.assertIn("INPLACE_NOT_SUPPORTED in_place", result.stdout)

    def test_run_celu_through_npy_files(self):
        for dtype in (np.float32, np.float16):
            x = np.random.default_rng(3).uniform(-3, 3, (2, 3, 4)).astype(dtype)
            np.save(self.path("in.npy"), x)
            example = "celu.json" if dtype == np.float32 else "threshold.json"
            result = self.dmlctl("run", os.path.join(EXAMPLES, example),
                                 "--input", self.path("in.npy"),
                                 "--output", self.path("out.npy"), "--json")
            if dtype == np.float32:
                # celu.json declares FLOAT32 tensors; threshold.json none.
                self.assertEqual(result.returncode, 0, result.stderr)
                summary = json.loads(result.stdout)
                self.assertEqual(summary["shape"], [2, 3, 4])
                y = np.load(self.path("out.npy"))
                self.assertEqual(y.dtype, np.float32)
                self.assertFalse(ref.mismatches(
                    y, ref.activation("celu", x, {"alpha": 1.0}), np.float32,
                    "TRANSCENDENTAL"))
            else:
                self.assertEqual(result.returncode, 0, result.stderr)
                y = np.load(self.path("out.npy"))
                self.assertEqual(y.dtype, np.float16)
                self.assertFalse(ref.mismatches(
                    y, ref.threshold(x, -1.0, (2.0, 0.5)), np.float16,
                    "ARITH"))

    def test_run_mvn1_with_scale_bias_files_and_random(self):
        rng = np.random.default_rng(4)
        x = rng.uniform(-2, 2, (2, 3, 4, 5)).astype(np.float32)
        scale = rng.uniform(0.5, 2, (1, 3, 1, 1)).astype(np.float32)
        bias = rng.uniform(-1, 1, (1, 3, 1, 1)).astype(np.float32)
        for name, arr in (("x", x), ("s", scale), ("b", bias)):
            np.save(self.path(name + ".npy"), arr)
        example = os.path.join(EXAMPLES, "mvn1_fused_celu.json")
        result = self.dmlctl("run", example, "--input", self.path("x.npy"),
                             "--scale", self.path("s.npy"), "--bias",
                             self.path("b.npy"), "--output",
                             self.path("y.npy"))
        self.assertEqual(result.returncode, 0, result.stderr)
        y = np.load(self.path("y.npy"))
        self.assertFalse(ref.mismatches(
            y, ref.mvn(x, [2, 3], scale, bias, 1e-5, fused=("celu",
                                                             {"alpha": 1.0})),
            np.float32, "NORMALIZATION"))
        result = self.dmlctl("run", example, "--random", "9", "--output",
                             self.path("r.npy"))
        self.assertEqual(result.returncode, 0, result.stderr)
        r = np.load(self.path("r.npy"))
        self.assertEqual(r.shape, (2, 3, 4, 5))
        # CELU(alpha 1) of a normalised tensor: finite and above -1.
        self.assertTrue(np.all(np.isfinite(r)) and np.all(r > -1))

    def test_run_repeated_on_one_stream(self):
        # The C++ client's ExecuteStream: 20 copies, ids matched, outputs equal.
        x = np.random.default_rng(5).uniform(-3, 3, (3, 7)).astype(np.float32)
        np.save(self.path("in.npy"), x)
        result = self.dmlctl("run", os.path.join(EXAMPLES, "celu.json"),
                             "--input", self.path("in.npy"), "--output",
                             self.path("out.npy"), "--repeat", "20", "--json")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(json.loads(result.stdout)["repeat"], 20)
        self.assertFalse(ref.mismatches(
            np.load(self.path("out.npy")),
            ref.activation("celu", x, {"alpha": 1.0}), np.float32,
            "TRANSCENDENTAL"))
        np.save(self.path("in.npy"), np.zeros((1, 2, 3, 4), np.float32))
        result = self.dmlctl("run", os.path.join(EXAMPLES, "mvn1_bad_axes.json"),
                             "--input", self.path("in.npy"), "--output",
                             self.path("bad.npy"), "--repeat", "3")
        self.assertEqual(result.returncode, 1)
        self.assertIn("MVN_AXES_DUPLICATE at operator.mvn1.axes[1]",
                      result.stderr)

    def test_unreachable_server(self):
        result = subprocess.run(DMLCTL_CMD + ["--server=127.0.0.1:1",
                                 "--timeout=5", "caps"],
                                capture_output=True, text=True, timeout=30)
        self.assertEqual(result.returncode, 1)
        self.assertIn("UNAVAILABLE", result.stderr)

    def test_usage_errors(self):
        self.assertEqual(self.dmlctl().returncode, 2)
        self.assertEqual(self.dmlctl("frobnicate").returncode, 2)
        result = self.dmlctl("run", os.path.join(EXAMPLES, "celu.json"),
                             "--output", self.path("o.npy"))
        self.assertEqual(result.returncode, 2)  # neither --input nor --random
        result = self.dmlctl("validate", self.path("missing.json"))
        self.assertEqual(result.returncode, 2)

    def test_run_rejected_prints_rule_and_field(self):
        np.save(self.path("in.npy"), np.zeros((1, 2, 3, 4), np.float32))
        result = self.dmlctl("run", os.path.join(EXAMPLES, "mvn1_bad_axes.json"),
                             "--input", self.path("in.npy"), "--output",
                             self.path("out.npy"))
        self.assertEqual(result.returncode, 1)
        self.assertIn("INVALID_ARGUMENT", result.stderr)
        self.assertIn("MVN_AXES_DUPLICATE at operator.mvn1.axes[1]",
                      result.stderr)
        self.assertFalse(os.path.exists(self.path("out.npy")))


if __name__ == "__main__":
    unittest.main()
