#!/bin/sh
cat > /dev/null
echo '{"continue": false, "stopReason": "budget exhausted"}'
