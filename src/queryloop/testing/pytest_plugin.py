"""A pytest fixture for the scripted Messages API server.

    from queryloop.testing.pytest_plugin import messages_server  # noqa: F401  (or via pytest11)

    async def test_my_agent(messages_server):
        messages_server.script([turn(text("Hello"))])
        provider = AnthropicProvider(api_key="test", base_url=messages_server.base_url)
        ...

The fixture fails the test at teardown if the code under test made a model call the script
did not expect (an unexpected call is also answered with a 400 error, so it fails loudly).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .server import MessagesServer


@pytest.fixture
def messages_server() -> Iterator[MessagesServer]:
    """A running `MessagesServer` with an empty script; call `.script([...])` to fill it."""
    with MessagesServer() as server:
        yield server
    if server.errors:
        pytest.fail("MessagesServer: " + "; ".join(server.errors))
