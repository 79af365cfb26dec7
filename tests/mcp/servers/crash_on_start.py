"""An MCP server that dies before speaking the protocol."""

import sys

print("fatal: missing DATABASE_URL", file=sys.stderr)
sys.exit(1)
