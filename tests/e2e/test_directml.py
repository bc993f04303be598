"""dmlserve.exe --device=directml: Microsoft's DirectML.dll serving requests
(Windows builds only; under Wine through deploy/windows/run-e2e.sh, which
puts DirectML.dll beside dmlserve.exe). The server names the backend; a
request runs; what DirectML refuses of a request our rules accept is
INVALID_ARGUMENT with the rule DIRECTML_REFUSED and the field path, not an
INTERNAL error (docs/DIRECTML.md: DirectML 1.15.4 refuses a nonzero
GuaranteedBaseOffsetAlignment below 16, which OPERATORS.md 2.5 allows), and
the server keeps serving."""

import unittest

import grpc
import numpy as np

import dmlserve_client as dc
from dmlserve.v1 import dmlserve_pb2 as pb
from e2e_server import DEVICE, ServerTestCase, health_status

F32 = pb.DATA_TYPE_FLOAT32


def relu_request(alignment):
    x = np.array([-1.0, 0.0, 1.0, 2.0], np.float32)
    request = pb.ExecuteRequest(request_id=1, input=x.tobytes())
    request.operator.relu.input.CopyFrom(
        dc.tensor_desc(F32, (4,), guaranteed_base_offset_alignment=alignment))
    request.operator.relu.output.CopyFrom(dc.tensor_desc(F32, (4,)))
    return request


class DirectMlTest(ServerTestCase):

    def test_the_server_runs_on_directml(self):
        self.assertEqual(DEVICE, "directml")
        caps = self.client.capabilities()
        self.assertIn("DirectML.dll", caps.backend)
        x = np.linspace(-3, 3, 24, dtype=np.float32).reshape(2, 3, 4)
        y = self.client.execute_celu(x, alpha=1.0)
        want = np.maximum(0, x) + np.minimum(0, np.expm1(x.astype(np.float64)))
        np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-7)

    def test_what_directml_refuses_is_invalid_argument_with_its_rule(self):
        with self.assertRaises(dc.DmlError) as cm:
            self.client.execute_request(relu_request(4))
        e = cm.exception
        self.assertEqual(e.code, grpc.StatusCode.INVALID_ARGUMENT, str(e))
        self.assertEqual((e.rule, e.field), ("DIRECTML_REFUSED", "operator"),
                         "violations: %s" % e.violations)
        self.assertIn("ACTIVATION_RELU", e.message)
        # DirectML's minimum runs, and the server still serves.
        response = self.client.execute_request(relu_request(16))
        self.assertEqual(np.frombuffer(response.output, np.float32).tolist(),
                         [0.0, 0.0, 1.0, 2.0])
        self.assertEqual(health_status(self.target), "SERVING")


if __name__ == "__main__":
    unittest.main()
