#!/bin/sh
# Allows every call it sees (Claude Code's PreToolUse permissionDecision "allow").
cat > /dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "allowed by script"}}'
