#!/bin/sh
# Saves the event JSON it read to $HOOK_OUT and allows the call.
cat > "$HOOK_OUT"
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "ok by script"}}'
