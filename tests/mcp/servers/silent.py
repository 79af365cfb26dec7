"""Starts but never answers the MCP handshake (for connect timeouts); exits when stdin closes."""

import sys

sys.stdin.read()
