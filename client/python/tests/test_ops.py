"""Offline tests of the NumPy-native edges (issue 23): negative and scalar
axes, float64 arrays, operator and fused-activation names, handles where
arrays go, one table of defaults for helpers, chains and streams, and the
stream() call forms."""

import io
import unittest

import numpy as np

import dmlserve as dc
from dmlserve.requests import stream_plans, stream_results
from dmlserve.v1 import dmlserve_pb2 as pb

X = np.zeros((8, 1024), np.float32)


class RecordingClient(dc.DmlClient):
    """A DmlClient whose execute records the request instead of sending."""

    def __init__(self, **kw):
        super().__init__("127.0.0.1:1", **kw)
        self.requests = []

    def execute(self, op, inputs, **kw):
        request, _ = dc.build_request(op, inputs, cast=kw.pop("cast", None)
                                      or self.cast, **kw)
        self.requests.append(request)
        return request


class AxesTest(unittest.TestCase):

    def test_negative_and_scalar_axes(self):
        for axes in (-1, [-1], [1], 1, np.int64(-1)):
            request, _ = dc.build_request({"mvn1": {"axes": axes}}, X)
            self.assertEqual(list(request.operator.mvn1.axes), [1], axes)
        request, _ = dc.build_request({"mvn1": {"axes": [-2, -1]}},
                                      np.zeros((2, 3, 4), np.float32))
        self.assertEqual(list(request.operator.mvn1.axes), [1, 2])

    def test_axis_below_minus_rank_is_a_local_error(self):
        with self.assertRaisesRegex(ValueError, r"axis -3 .* rank-2 .* -2\.\.1"):
            dc.build_request({"mvn1": {"axes": -3}}, X)

    def test_helper_takes_numpy_axes(self):
        client = RecordingClient()
        request = client.execute_mvn1(X, axes=-1)
        self.assertEqual(list(request.operator.mvn1.axes), [1])
        self.assertEqual(request.operator.mvn1.axis_count, 1)
        client.close()

    def test_chain_step_axes_use_the_rank_of_an_earlier_step(self):
        chain = dc.Chain()
        a = chain.step({"celu": {}}, np.zeros((2, 3, 4), np.float32))
        chain.step({"mvn1": {"axes": -1}}, a, return_output=True)
        request, _ = chain.request()
        self.assertEqual(list(request.steps[1].operator.mvn1.axes), [2])


class DtypeTest(unittest.TestCase):

    def test_float64_is_refused_with_what_to_do(self):
        with self.assertRaisesRegex(ValueError, r"float64.*astype\(np.float32\)"
                                    r".*cast=np.float32"):
            dc.build_request({"celu": {}}, np.zeros(4))
        client = RecordingClient()
        with self.assertRaisesRegex(ValueError, "cast=np.float32"):
            client.execute_celu(np.zeros(4))
        client.close()

    def test_cast_converts_float64(self):
        request, out = dc.build_request({"celu": {}}, np.zeros(4),
                                        cast=np.float32)
        self.assertEqual(out.data_type, pb.DATA_TYPE_FLOAT32)
        self.assertEqual(len(request.input), 16)
        client = RecordingClient(cast=np.float16)
        request = client.execute_celu(np.zeros(4))
        self.assertEqual(request.operator.celu.input.data_type,
                         pb.DATA_TYPE_FLOAT16)
        client.close()

    def test_a_declared_data_type_converts_float64(self):
        op = pb.OperatorDesc()
        op.celu.input.CopyFrom(dc.tensor_desc(np.float32, (4,)))
        request, _ = dc.build_request(op, np.arange(4.0))
        np.testing.assert_array_equal(np.frombuffer(request.input, np.float32),
                                      [0, 1, 2, 3])

    def test_a_handle_string_where_an_array_goes(self):
        client = RecordingClient()
        with self.assertRaisesRegex(TypeError, "bare handle string.*"
                                    "TensorHandle"):
            client.execute_celu("t-0123456789")
        client.close()

    def test_helpers_take_a_tensor_handle(self):
        client = RecordingClient()
        h = dc.TensorHandle("t-h", dc.tensor_desc(np.float16, (2, 3)))
        request = client.execute_celu(h)
        self.assertEqual(request.input_handle, "t-h")
        self.assertEqual(list(request.operator.celu.output.sizes), [2, 3])
        self.assertEqual(request.operator.celu.output.data_type,
                         pb.DATA_TYPE_FLOAT16)
        client.close()


class NamesTest(unittest.TestCase):

    def test_unknown_fused_activation_lists_the_valid_names(self):
        client = RecordingClient()
        with self.assertRaisesRegex(ValueError, "gelu2.*celu, elu, gelu"):
            client.execute_mvn1(X, axes=-1, fused="gelu2")
        with self.assertRaisesRegex(ValueError, "gelu2.*valid names"):
            dc.build_request({"mvn1": {"axes": [1],
                                       "fusedActivation": {"gelu2": {}}}}, X)
        client.close()

    def test_unknown_operator_and_activation_names(self):
        with self.assertRaisesRegex(ValueError, "'celu2'.*valid names.*mvn1"):
            dc.build_request({"celu2": {}}, X)
        client = RecordingClient()
        with self.assertRaisesRegex(ValueError, "'mvn1'.*valid names"):
            client.execute_activation("mvn1", X)
        client.close()

    def test_fused_by_name_in_a_dict(self):
        request, _ = dc.build_request(
            {"mvn1": {"axes": -1, "fused_activation": "celu"}}, X)
        self.assertEqual(request.operator.mvn1.fused_activation.celu.alpha,
                         1.0)


class DefaultsTest(unittest.TestCase):

    def test_one_table_for_helpers_chains_and_streams(self):
        client = RecordingClient()
        helper = client.execute_mvn1(X, axes=-1).operator.mvn1
        chain = dc.Chain()
        chain.step({"mvn1": {"axes": [-1]}}, X, return_output=True)
        step = chain.request()[0].steps[0].operator.mvn1
        streamed = stream_plans([({"mvn1": {"axes": -1}}, X)])[0] \
            .request.operator.mvn1
        for m in (helper, step, streamed):
            self.assertTrue(m.HasField("epsilon"))
            self.assertAlmostEqual(m.epsilon, 1e-5)
            self.assertTrue(m.HasField("normalize_variance"))
            self.assertTrue(m.normalize_variance)
        self.assertEqual(client.execute_celu(X).operator.celu.alpha, 1.0)
        client.close()

    def test_given_values_win_and_required_ones_stay_absent(self):
        op = dc.operator_desc({"mvn1": {"axes": [0], "epsilon": 0.5,
                                        "normalizeVariance": False}})
        self.assertEqual(op.mvn1.epsilon, 0.5)
        self.assertFalse(op.mvn1.normalize_variance)
        self.assertFalse(dc.operator_desc({"threshold": {}})
                         .threshold.HasField("min"))
        self.assertFalse(dc.operator_desc({"linear": {}})
                         .linear.HasField("alpha"))
        fused = dc.operator_desc({"mvn1": {"fusedActivation": {"elu": {}}}})
        self.assertEqual(fused.mvn1.fused_activation.elu.alpha, 1.0)


class StreamTest(unittest.TestCase):

    def test_call_forms_get_ids_in_order(self):
        op = {"celu": {}}
        plans = stream_plans([
            (op, X),
            dc.build_request(op, X),
            {"op": op, "inputs": X, "keep_output": True},
        ])
        self.assertEqual([p.request.request_id for p in plans], [1, 2, 3])
        self.assertTrue(plans[2].request.keep_output)
        with self.assertRaises(TypeError):
            stream_plans([pb.ExecuteRequest(), (op, X)])
        raw = stream_plans([pb.ExecuteRequest(request_id=9)])
        self.assertEqual(raw[0].request.request_id, 9)

    def test_results_in_call_order_and_errors(self):
        plans = stream_plans([({"celu": {}}, X[:1, :4]),
                              ({"celu": {}}, X[:1, :4])])
        ok = pb.ExecuteResponse(request_id=1, output=bytes(16))
        bad = pb.ExecuteResponse(request_id=2, status_code=3,
                                 status_message="CELU_ALPHA_INVALID: x")
        bad.violations.add(rule="CELU_ALPHA_INVALID",
                           field="operator.celu.alpha")
        results = stream_results(plans, [bad, ok], raise_errors=False)
        np.testing.assert_array_equal(results[0], np.zeros((1, 4)))
        self.assertIsInstance(results[1], dc.DmlError)
        self.assertEqual(results[1].rule, "CELU_ALPHA_INVALID")
        self.assertEqual(results[1].field, "operator.celu.alpha")
        with self.assertRaises(dc.DmlError):
            stream_results(plans, [ok, bad])
        with self.assertRaisesRegex(dc.DmlError, "1 of 2 responses missing"):
            stream_results(plans, [ok])


class ProgressBarTest(unittest.TestCase):

    def test_bar_reaches_100_percent_and_ends_the_line(self):
        out = io.StringIO()
        bar = dc.ProgressBar("upload", width=10, stream=out, interval=0)
        bar(512 << 10, 1 << 20)
        bar(1 << 20, 1 << 20)
        text = out.getvalue()
        self.assertIn("upload [#####-----]  50%", text)
        self.assertTrue(text.endswith("upload [##########] 100% 1.0/1.0 MiB\n"))


class PackageTest(unittest.TestCase):

    def test_public_api_is_documented_and_typed(self):
        undocumented, untyped = [], []
        from dmlserve.aio import AsyncDmlClient
        from dmlserve.helpers import OperatorHelpers
        for cls in (dc.DmlClient, AsyncDmlClient, OperatorHelpers, dc.Chain,
                    dc.TensorHandle, dc.DmlError, dc.ProgressBar):
            for name, member in vars(cls).items():
                if name.startswith("_") or not callable(member):
                    continue
                if not (member.__doc__ or "").strip():
                    undocumented.append("%s.%s" % (cls.__name__, name))
                if not getattr(member, "__annotations__", None):
                    untyped.append("%s.%s" % (cls.__name__, name))
        for name in dc.__all__:
            member = getattr(dc, name)
            if callable(member) and not (member.__doc__ or "").strip():
                undocumented.append(name)
        self.assertEqual(undocumented, [])
        self.assertEqual(untyped, [])

    def test_old_module_name_still_imports(self):
        import dmlserve_client
        self.assertIs(dmlserve_client.DmlClient, dc.DmlClient)
        self.assertIs(dmlserve_client.build_request, dc.build_request)


if __name__ == "__main__":
    unittest.main()
