"""dmlserve_client: the module name of the client before it became the
``dmlserve`` package; re-exports the package's public names. New code
imports ``dmlserve``."""

from dmlserve import *  # noqa: F401,F403
from dmlserve import __all__  # noqa: F401
from dmlserve.ops import fused_activation as _fused_activation  # noqa: F401
