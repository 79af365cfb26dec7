#!/bin/sh
cat > /dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "remember to run the linter"}}'
