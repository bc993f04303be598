"""ProgressBar: a progress callback that draws a one-line bar on stderr.

Pass it (or progress=True) wherever the clients take progress=...; any
callable progress(bytes so far, total or None) works as well. One bar per
transfer; not thread-safe.
"""

import sys
import time
from typing import Any, Optional, TextIO

from dmlserve.chunks import Progress


class ProgressBar:
    """Draws "label [#####-----] 52% 13.0/25.0 MiB" on `stream` (stderr),
    at most every `interval` seconds and once more when the transfer ends;
    a newline follows the last update."""

    def __init__(self, label: str = "", width: int = 30,
                 stream: Optional[TextIO] = None,
                 interval: float = 0.1) -> None:
        self.label = label
        self.width = width
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self._last = 0.0

    def __call__(self, done: int, total: Optional[int]) -> None:
        finished = total is not None and done >= total
        now = time.monotonic()
        if not finished and now - self._last < self.interval:
            return
        self._last = now
        mib = done / (1 << 20)
        if total:
            filled = min(self.width, self.width * done // total)
            line = "%s [%s%s] %3d%% %.1f/%.1f MiB" % (
                self.label, "#" * filled, "-" * (self.width - filled),
                100 * done // total, mib, total / (1 << 20))
        else:
            line = "%s %.1f MiB" % (self.label, mib)
        self.stream.write("\r" + line.strip())
        if finished:
            self.stream.write("\n")
        self.stream.flush()


class MessageProgress:
    """Progress of a call that is one message each way (a unary call):
    nothing of it can be seen in flight, so `progress` hears twice, truly:
    (0, None) as the request goes out (sent()), then (n, n) when the
    response is in (received(response)), n being the bytes of both
    messages."""

    def __init__(self, progress: Progress, request: Any) -> None:
        self.progress = progress
        self.request_bytes = request.ByteSize()

    def sent(self) -> None:
        self.progress(0, None)

    def received(self, response: Any) -> None:
        n = self.request_bytes + response.ByteSize()
        self.progress(n, n)


def progress_callback(progress: Any, label: str = "") -> Optional[Progress]:
    """progress=True: a new ProgressBar; a callable: itself; None/False:
    None."""
    if progress is True:
        return ProgressBar(label)
    return progress or None
