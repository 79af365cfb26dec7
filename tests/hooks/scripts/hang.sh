#!/bin/sh
# Starts a child that would outlive us, then hangs; the timeout must kill both.
sleep 30 &
echo $! > "$HOOK_OUT"
sleep 30
