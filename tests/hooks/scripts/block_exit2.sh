#!/bin/sh
# Blocks with exit code 2; stderr goes to the model.
cat > /dev/null
echo "blocked: tests must pass first" >&2
exit 2
