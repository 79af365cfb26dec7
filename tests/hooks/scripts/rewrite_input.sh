#!/bin/sh
cat > /dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "echo safe"}}}'
