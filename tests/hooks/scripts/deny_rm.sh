#!/bin/sh
# Denies Bash commands that contain "rm " (exit 0 with a JSON decision).
if grep -q '"command": "rm ' ; then
  echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no deleting"}}'
fi
exit 0
