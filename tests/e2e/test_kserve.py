"""The Open Inference Protocol (KServe v2) on dmlserve's port, driven by a
client generated from proto/inference (as any KServe or Triton client
would be): metadata, configuration, ModelInfer and ModelStreamInfer, whose
outputs must equal, byte for byte, what dmlserve.v1's Execute returns for
the same operator and tensors; errors keep their rule id and name the
KServe field."""

import queue
import threading
import time
import unittest

import grpc
import numpy as np

from dmlserve.v1 import dmlserve_pb2 as pb
from dmlserve.v1 import dmlserve_pb2_grpc as pb_grpc
from e2e_server import DEVICE, Server, ServerTestCase, STOP_SIGNAL
from google.rpc import error_details_pb2, status_pb2
from inference import grpc_predict_v2_pb2 as kpb
from inference import grpc_predict_v2_pb2_grpc as kpb_grpc
from inference import model_config_pb2

DML_TYPES = {np.dtype(np.float32): (pb.DATA_TYPE_FLOAT32, "FP32"),
             np.dtype(np.float16): (pb.DATA_TYPE_FLOAT16, "FP16"),
             np.dtype(np.int32): (pb.DATA_TYPE_INT32, "INT32"),
             np.dtype(np.uint8): (pb.DATA_TYPE_UINT8, "UINT8")}


def tensor_desc(x):
    nbytes = x.size * x.itemsize
    return pb.TensorDesc(data_type=DML_TYPES[x.dtype][0], sizes=list(x.shape),
                         total_tensor_size_in_bytes=(nbytes + 3) // 4 * 4)


def padded(x):
    data = x.tobytes()
    return data + b"\0" * (-len(data) % 4)


def infer_input(name, x, raw=True):
    tensor = kpb.ModelInferRequest.InferInputTensor(
        name=name, datatype=DML_TYPES[x.dtype][1], shape=list(x.shape))
    if not raw:
        if x.dtype == np.float32:
            tensor.contents.fp32_contents.extend(x.ravel().tolist())
        else:
            tensor.contents.int_contents.extend(x.ravel().tolist())
    return tensor


def parameter(value):
    if isinstance(value, bool):
        return kpb.InferParameter(bool_param=value)
    if isinstance(value, int):
        return kpb.InferParameter(int64_param=value)
    if isinstance(value, float):
        return kpb.InferParameter(double_param=value)
    return kpb.InferParameter(string_param=value)


def infer_request(model, inputs, parameters=None, raw=True, request_id=""):
    """inputs: [(name, array)] in order."""
    request = kpb.ModelInferRequest(model_name=model, id=request_id)
    for name, x in inputs:
        request.inputs.append(infer_input(name, x, raw))
        if raw:
            request.raw_input_contents.append(x.tobytes())
    for key, value in (parameters or {}).items():
        request.parameters[key].CopyFrom(parameter(value))
    request.outputs.add(name="output")
    return request


def rng_array(shape, dtype, seed, low=-3, high=3):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.uniform(low, high, size=shape).astype(dtype)
    return rng.integers(low, high, size=shape).astype(dtype)


# (KServe model, parameters, inputs, the same operator for Execute, raw?)
def cases():
    x32 = rng_array((4, 33), np.float32, 1)
    x16 = rng_array((2, 3, 5), np.float16, 2)   # 30 elements: 60 bytes
    xm = rng_array((3, 4, 16), np.float32, 3)
    scale = rng_array((1, 1, 16), np.float32, 4, 0.5, 2)
    bias = rng_array((1, 1, 16), np.float32, 5)
    xi = rng_array((5, 7), np.int32, 6, -50, 50)
    xu = rng_array((3, 3), np.uint8, 7, 0, 255)  # 9 bytes: padded to 12
    return [
        ("activation_celu", {"alpha": 0.75}, [("input", x32)],
         pb.OperatorDesc(celu=pb.ActivationCelu(
             input=tensor_desc(x32), output=tensor_desc(x32), alpha=0.75)),
         True),
        ("element_wise_threshold_fp16",
         {"min": "0.25", "scale_bias.scale": 2, "scale_bias.bias": "-0.5"},
         [("input", x16)],
         pb.OperatorDesc(threshold=pb.ElementWiseThreshold(
             input=tensor_desc(x16), output=tensor_desc(x16), min=0.25,
             scale_bias=pb.ScaleBias(scale=2.0, bias=-0.5))),
         True),
        ("mean_variance_normalization1",
         {"axes": "[-1]", "normalize_variance": "true", "epsilon": 1e-5,
          "fused_activation": "relu"},
         [("input", xm), ("scale", scale), ("bias", bias)],
         pb.OperatorDesc(mvn1=pb.MeanVarianceNormalization1(
             input=tensor_desc(xm), scale=tensor_desc(scale),
             bias=tensor_desc(bias), output=tensor_desc(xm), axes=[2],
             normalize_variance=True, epsilon=1e-5,
             fused_activation=pb.FusedActivation(
                 relu=pb.ActivationRelu()))),
         True),
        ("element_wise_clip_int32", {"min": -10, "max": 20.0},
         [("input", xi)],
         pb.OperatorDesc(clip=pb.ElementWiseClip(
             input=tensor_desc(xi), output=tensor_desc(xi), min=-10,
             max=20)),
         False),
        ("element_wise_clip_uint8", {"min": 10, "max": 200},
         [("input", xu)],
         pb.OperatorDesc(clip=pb.ElementWiseClip(
             input=tensor_desc(xu), output=tensor_desc(xu), min=10,
             max=200)),
         True),
    ]


def execute_output(stub, op, inputs):
    """What Execute returns, cut to the tensor's bytes."""
    request = pb.ExecuteRequest(operator=op)
    for name, x in inputs:
        setattr(request, name, padded(x))
    x = inputs[0][1]
    return stub.Execute(request, timeout=60).output[:x.size * x.itemsize]


def bad_request_of(error):
    """[(rule, field)] of the google.rpc.BadRequest an RpcError carries."""
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                bad = error_details_pb2.BadRequest()
                if detail.Unpack(bad):
                    return [(v.description.split(":", 1)[0], v.field)
                            for v in bad.field_violations]
    return []


class KServeTest(ServerTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.channel = grpc.insecure_channel(cls.target)
        cls.kserve = kpb_grpc.GRPCInferenceServiceStub(cls.channel)
        cls.dml = pb_grpc.DmlServiceStub(cls.channel)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        super().tearDownClass()

    def expect_error(self, call, code, rule, field):
        with self.assertRaises(grpc.RpcError) as caught:
            call()
        error = caught.exception
        self.assertEqual(error.code(), code, error.details())
        self.assertTrue(error.details().startswith(rule + ":"),
                        error.details())
        self.assertIn((rule, field), bad_request_of(error))

    def test_server_metadata_live_ready(self):
        metadata = self.kserve.ServerMetadata(kpb.ServerMetadataRequest())
        self.assertEqual(metadata.name, "dmlserve")
        self.assertTrue(metadata.version)
        for extension in ("model_configuration", "statistics", "parameters"):
            self.assertIn(extension, metadata.extensions)
        self.assertTrue(self.kserve.ServerLive(kpb.ServerLiveRequest()).live)
        self.assertTrue(
            self.kserve.ServerReady(kpb.ServerReadyRequest()).ready)
        self.assertTrue(self.kserve.ModelReady(kpb.ModelReadyRequest(
            name="activation_gelu", version="1")).ready)
        self.expect_error(
            lambda: self.kserve.ModelReady(kpb.ModelReadyRequest(
                name="resnet50")),
            grpc.StatusCode.NOT_FOUND, "KSERVE_MODEL_UNKNOWN", "name")

    def test_model_metadata(self):
        m = self.kserve.ModelMetadata(kpb.ModelMetadataRequest(
            name="mean_variance_normalization1"))
        self.assertEqual(m.name, "mean_variance_normalization1")
        self.assertEqual(list(m.versions), ["1"])
        self.assertEqual([t.name for t in m.inputs],
                         ["input", "scale", "bias"])
        self.assertEqual([t.name for t in m.outputs], ["output"])
        for t in list(m.inputs) + list(m.outputs):
            self.assertEqual(t.datatype, "FP32")
            self.assertEqual(list(t.shape), [-1, -1, -1, -1])
        m16 = self.kserve.ModelMetadata(kpb.ModelMetadataRequest(
            name="activation_celu_fp16"))
        self.assertEqual([t.datatype for t in m16.inputs], ["FP16"])
        self.expect_error(
            lambda: self.kserve.ModelMetadata(kpb.ModelMetadataRequest(
                name="activation_celu", version="2")),
            grpc.StatusCode.NOT_FOUND, "KSERVE_VERSION_UNKNOWN", "version")

    def test_model_config(self):
        config = self.kserve.ModelConfig(kpb.ModelConfigRequest(
            name="element_wise_clip_int32")).config
        self.assertEqual(config.name, "element_wise_clip_int32")
        self.assertEqual(config.max_batch_size, 0)
        self.assertEqual([i.name for i in config.input], ["input"])
        self.assertEqual(config.input[0].data_type,
                         model_config_pb2.TYPE_INT32)
        self.assertEqual(list(config.input[0].dims), [-1, -1, -1, -1])
        self.assertEqual(config.output[0].name, "output")
        # The default batcher combines up to 256 requests, waiting 0 us.
        self.assertTrue(config.HasField("dynamic_batching"))
        self.assertEqual(
            config.dynamic_batching.max_queue_delay_microseconds, 0)
        self.assertEqual(config.parameters["max_batch_requests"].string_value,
                         "256")
        self.assertEqual(config.parameters["operator"].string_value,
                         "ELEMENT_WISE_CLIP")

    def test_model_infer_equals_execute(self):
        for model, parameters, inputs, op, raw in cases():
            with self.subTest(model=model):
                response = self.kserve.ModelInfer(
                    infer_request(model, inputs, parameters, raw,
                                  request_id="r-" + model), timeout=60)
                x = inputs[0][1]
                self.assertEqual(response.model_name, model)
                self.assertEqual(response.id, "r-" + model)
                self.assertEqual(len(response.outputs), 1)
                output = response.outputs[0]
                self.assertEqual(output.name, "output")
                self.assertEqual(output.datatype, DML_TYPES[x.dtype][1])
                self.assertEqual(list(output.shape), list(x.shape))
                self.assertEqual(response.raw_output_contents[0],
                                 execute_output(self.dml, op, inputs))
        # And a value we know: clip of uint8 to [10, 200].
        _, _, inputs, _, _ = cases()[4]
        response = self.kserve.ModelInfer(infer_request(
            "element_wise_clip_uint8", inputs, {"min": 10, "max": 200}))
        got = np.frombuffer(response.raw_output_contents[0], np.uint8)
        np.testing.assert_array_equal(
            got.reshape(3, 3), np.clip(inputs[0][1], 10, 200))

    def test_model_stream_infer(self):
        all_cases = cases()
        requests = [infer_request(model, inputs, parameters, raw,
                                  request_id=str(i))
                    for i, (model, parameters, inputs, _, raw)
                    in enumerate(all_cases)]
        # One that fails in the middle: the stream goes on.
        requests.insert(2, infer_request(
            "activation_celu", all_cases[0][2], {}, request_id="bad"))
        responses = list(self.kserve.ModelStreamInfer(iter(requests),
                                                      timeout=60))
        self.assertEqual(len(responses), len(requests))
        by_id = {r.infer_response.id: r for r in responses}
        self.assertTrue(by_id["bad"].error_message.startswith(
            "PARAM_MISSING:"), by_id["bad"].error_message)
        self.assertIn('parameters["alpha"]', by_id["bad"].error_message)
        for i, (model, _, inputs, op, _) in enumerate(all_cases):
            response = by_id[str(i)]
            self.assertEqual(response.error_message, "")
            self.assertEqual(response.infer_response.model_name, model)
            self.assertEqual(response.infer_response.raw_output_contents[0],
                             execute_output(self.dml, op, inputs))

    def test_concurrent_streams(self):
        model, parameters, inputs, op, raw = cases()[0]
        expected = execute_output(self.dml, op, inputs)
        failures = []

        def run():
            try:
                requests = [infer_request(model, inputs, parameters, raw,
                                          request_id=str(i))
                            for i in range(16)]
                got = list(self.kserve.ModelStreamInfer(iter(requests),
                                                        timeout=60))
                if sorted(r.infer_response.id for r in got) != sorted(
                        str(i) for i in range(16)):
                    failures.append("ids")
                if any(r.infer_response.raw_output_contents[0] != expected
                       for r in got):
                    failures.append("output")
            except grpc.RpcError as e:
                failures.append(str(e))

        threads = [threading.Thread(target=run) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(failures, [])

    def test_errors_keep_rule_and_field(self):
        x = rng_array((2, 3, 4, 5), np.float32, 9)
        infer = self.kserve.ModelInfer
        # The validator's rule, its field in KServe terms.
        self.expect_error(
            lambda: infer(infer_request(
                "mean_variance_normalization1", [("input", x)],
                {"axes": "1,7", "normalize_variance": True,
                 "epsilon": 1e-5})),
            grpc.StatusCode.INVALID_ARGUMENT, "MVN_AXIS_OUT_OF_RANGE",
            'parameters["axes"][1]')
        self.expect_error(
            lambda: infer(infer_request("activation_celu", [("input", x)])),
            grpc.StatusCode.INVALID_ARGUMENT, "PARAM_MISSING",
            'parameters["alpha"]')
        self.expect_error(
            lambda: infer(infer_request(
                "activation_celu", [("input", x)], {"alpha": "one"})),
            grpc.StatusCode.INVALID_ARGUMENT, "KSERVE_PARAMETER_TYPE",
            'parameters["alpha"]')
        self.expect_error(
            lambda: infer(infer_request(
                "activation_celu", [("input", x)], {"beta": 1.0})),
            grpc.StatusCode.INVALID_ARGUMENT, "KSERVE_PARAMETER_UNKNOWN",
            'parameters["beta"]')
        self.expect_error(
            lambda: infer(infer_request(
                "activation_celu_fp16", [("input", x)], {"alpha": 1.0})),
            grpc.StatusCode.INVALID_ARGUMENT, "KSERVE_DATATYPE_MISMATCH",
            "inputs[0].datatype")
        self.expect_error(
            lambda: infer(infer_request("no_such_model", [("input", x)])),
            grpc.StatusCode.NOT_FOUND, "KSERVE_MODEL_UNKNOWN", "model_name")
        short = infer_request("activation_celu", [("input", x)],
                              {"alpha": 1.0})
        short.raw_input_contents[0] = short.raw_input_contents[0][:-4]
        self.expect_error(lambda: infer(short),
                          grpc.StatusCode.INVALID_ARGUMENT, "KSERVE_RAW_SIZE",
                          "raw_input_contents[0]")
        # A rank the operator does not take: the validator's rule on the
        # input's shape.
        big = rng_array((1,) * 9, np.float32, 10)
        with self.assertRaises(grpc.RpcError) as caught:
            infer(infer_request("activation_celu", [("input", big)],
                                {"alpha": 1.0}))
        self.assertEqual(caught.exception.code(),
                         grpc.StatusCode.INVALID_ARGUMENT)
        self.assertTrue(all(field.startswith("inputs[0].shape")
                            for _, field in bad_request_of(caught.exception)),
                        bad_request_of(caught.exception))

    def test_model_statistics(self):
        model = "activation_softsign"
        x = rng_array((64, 1024), np.float32, 11)
        for _ in range(3):
            self.kserve.ModelInfer(infer_request(model, [("input", x)]))
        # Eight at once on a stream: they may wait, and may run together.
        streamed = list(self.kserve.ModelStreamInfer(iter(
            [infer_request(model, [("input", x)]) for _ in range(8)])))
        self.assertEqual([r.error_message for r in streamed], [""] * 8)
        with self.assertRaises(grpc.RpcError):
            self.kserve.ModelInfer(infer_request(model, [("input", x)],
                                                 {"alpha": 1.0}))
        stats = self.kserve.ModelStatistics(kpb.ModelStatisticsRequest(
            name=model)).model_stats
        self.assertEqual(len(stats), 1)
        row, s = stats[0], stats[0].inference_stats
        self.assertEqual(row.name, model)
        self.assertEqual(row.inference_count, 11)
        self.assertEqual(s.success.count, 11)
        self.assertGreater(s.success.ns, 0)
        self.assertEqual(s.fail.count, 1)
        self.assertGreater(s.fail.ns, 0)
        self.assertGreater(row.last_inference, 0)
        # Every success has the engine's times, which lie within its time
        # in the server.
        parts = (s.queue, s.compute_input, s.compute_infer, s.compute_output)
        self.assertEqual([d.count for d in parts], [11] * 4)
        self.assertGreater(s.queue.ns, 0)
        self.assertGreater(s.compute_infer.ns, 0)
        self.assertLessEqual(sum(d.ns for d in parts), s.success.ns)
        # Requests coalesced into one dispatch are one execution.
        self.assertGreaterEqual(row.execution_count, 1)
        self.assertLessEqual(row.execution_count, 11)
        if DEVICE == "cpu":
            # Every request runs alone and writes its output in place.
            self.assertEqual(row.execution_count, 11)
            self.assertEqual(s.compute_output.ns, 0)
        else:
            # The input is copied into upload memory, the output out of
            # readback memory.
            self.assertGreater(s.compute_input.ns, 0)
            self.assertGreater(s.compute_output.ns, 0)
        every = self.kserve.ModelStatistics(kpb.ModelStatisticsRequest())
        self.assertGreater(len(every.model_stats), 20)


class KServeStopTest(unittest.TestCase):

    def test_not_ready_while_draining(self):
        server = Server("--drain_seconds=3").start()
        try:
            channel = grpc.insecure_channel(server.target)
            stub = kpb_grpc.GRPCInferenceServiceStub(channel)
            self.assertTrue(stub.ServerReady(kpb.ServerReadyRequest()).ready)
            server.process.send_signal(STOP_SIGNAL)
            deadline = time.monotonic() + 2.5
            ready = True
            while ready and time.monotonic() < deadline:
                ready = stub.ServerReady(kpb.ServerReadyRequest(),
                                         timeout=2).ready
                time.sleep(0.02)
            # Draining: not ready, but still serving.
            self.assertFalse(ready)
            self.assertFalse(stub.ModelReady(kpb.ModelReadyRequest(
                name="activation_relu")).ready)
            x = rng_array((2, 2), np.float32, 12)
            stub.ModelInfer(infer_request("activation_relu", [("input", x)]),
                            timeout=5)
            self.assertEqual(server.process.wait(timeout=30), 0,
                             server.stderr())
            channel.close()
        finally:
            server.kill()

    def test_an_open_stream_is_told_to_finish(self):
        grace = 10
        server = Server("--shutdown_grace_seconds=%d" % grace).start()
        try:
            channel = grpc.insecure_channel(server.target)
            stub = kpb_grpc.GRPCInferenceServiceStub(channel)
            outgoing = queue.Queue()  # a client that keeps its stream open
            call = stub.ModelStreamInfer(iter(outgoing.get, None), timeout=60)
            x = rng_array((4, 8), np.float32, 13)
            for i in range(2):
                outgoing.put(infer_request("activation_relu", [("input", x)],
                                           request_id=str(i)))
                self.assertEqual(next(call).infer_response.id, str(i))
            signalled = time.monotonic()
            server.process.send_signal(STOP_SIGNAL)
            with self.assertRaises(grpc.RpcError) as caught:
                for _ in call:
                    pass
            self.assertEqual(caught.exception.code(),
                             grpc.StatusCode.UNAVAILABLE)
            self.assertEqual(caught.exception.details(),
                             "the server is shutting down")
            self.assertEqual(server.process.wait(timeout=30), 0,
                             server.stderr())
            self.assertLess(time.monotonic() - signalled, grace / 2)
            outgoing.put(None)
            channel.close()
        finally:
            server.kill()


if __name__ == "__main__":
    unittest.main()
