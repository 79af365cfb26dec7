#!/bin/sh
# Blocks stopping once; when stop_hook_active is true it lets the model stop.
if grep -q '"stop_hook_active": true'; then exit 0; fi
echo '{"decision": "block", "reason": "you forgot the tests"}'
