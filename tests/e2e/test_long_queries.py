"""A bug report as the query (issue 38): the files its stack trace names come first, with the real
server over stdio on the fixture workspace."""

from __future__ import annotations

import pytest

from tests.lsp_harness import Starter

PROSE = """Results look wrong since the last upgrade

After upgrading, some of the numbers our service reports are off, and the logs show an error
right before it happens. It started with the newest release; nothing changed on our side.

Expected: the same numbers as before. Actual: an exception, then wrong numbers.

"""

FRAMES = {
    "billing/invoice.py": 'Traceback (most recent call last):\n  File "/srv/app/billing/invoice.py", line 12, in total\n'
    "ValueError: negative quantity\n",
    "native/ring_buffer.rs": "thread 'worker' panicked at 'index out of bounds', native/ring_buffer.rs:31:9\n",
    "services/RateLimiter.java": "java.lang.IllegalStateException: bucket overflow\n"
    "\tat com.acme.services.RateLimiter.tryAcquire(RateLimiter.java:42)\n",
}


@pytest.mark.parametrize("intent", ["change", "question"])
async def test_the_file_a_stack_trace_names_comes_first(start: Starter, intent: str) -> None:
    """The same vague prose, with a trace from a different file each time: the trace decides."""
    s = await start()
    await s.wait_ready()
    for path, frame in FRAMES.items():
        res = await s.retrieve(PROSE + frame, intent=intent, topK=10)
        assert res["chunks"][0]["path"] == path, (path, [c["path"] for c in res["chunks"]])
