"""DmlError: a failed call with its gRPC code and the server's rule
violations (google.rpc.BadRequest in the grpc-status-details-bin trailer).

Pure functions and plain classes; thread-safe.
"""

from typing import Any, Iterable, List, NamedTuple, Optional

import grpc

try:  # googleapis-common-protos, when installed, owns these proto files.
    from google.rpc import error_details_pb2, status_pb2
except ImportError:  # otherwise the copies generated into this package
    from dmlserve._rpc import error_details_pb2, status_pb2


class Violation(NamedTuple):
    """One broken rule: its id, the request field path and the text."""
    rule: str
    field: str
    description: str


class DmlError(Exception):
    """A failed call: gRPC code (a grpc.StatusCode, or None for errors the
    client finds itself), message and BadRequest violations (the first is
    the normative one)."""

    def __init__(self, code: Optional[grpc.StatusCode], message: str,
                 violations: Iterable[Violation] = ()) -> None:
        self.code = code
        self.message = message
        self.violations: List[Violation] = list(violations)
        first = ("%s at %s" % (self.rule, self.field)) if self.violations \
            else ""
        super().__init__("%s: %s%s" % (code.name if code else "?", message,
                                       " [" + first + "]" if first else ""))

    @property
    def rule(self) -> Optional[str]:
        """Rule id of the first (normative) violation, or None."""
        return self.violations[0].rule if self.violations else None

    @property
    def field(self) -> Optional[str]:
        """Field path of the first violation, or None."""
        return self.violations[0].field if self.violations else None


def _rule_of(description: str) -> str:
    return description.split(":", 1)[0].strip()


def violations_from_rpc_error(error: Any) -> List[Violation]:
    """Decodes the grpc-status-details-bin trailer of a grpc.RpcError (or a
    grpc.aio.AioRpcError)."""
    out = []
    trailers = error.trailing_metadata() or ()
    for key, value in trailers:
        if key != "grpc-status-details-bin":
            continue
        status = status_pb2.Status.FromString(value)
        for any_msg in status.details:
            bad = error_details_pb2.BadRequest()
            if any_msg.Unpack(bad):
                for v in bad.field_violations:
                    out.append(Violation(_rule_of(v.description), v.field,
                                         v.description))
    return out


def error_from_rpc(error: Any) -> DmlError:
    """The DmlError of a grpc.RpcError (code, details, violations)."""
    return DmlError(error.code(), error.details(),
                    violations_from_rpc_error(error))


def error_from_response(response: Any) -> DmlError:
    """The DmlError of a failed ExecuteStream response (its per-request
    status_code, status_message and violations)."""
    code = next((c for c in grpc.StatusCode
                 if c.value[0] == response.status_code),
                grpc.StatusCode.UNKNOWN)
    return DmlError(code, response.status_message,
                    [Violation(v.rule, v.field, v.description)
                     for v in response.violations])
