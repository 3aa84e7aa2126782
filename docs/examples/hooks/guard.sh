#!/bin/sh
# tool_before command hook: refuse any tool call whose input contains `rm -rf`.
if grep -q 'rm -rf'; then
  echo '{"deny": "rm -rf is not allowed in this workspace; remove files one at a time"}'
else
  echo '{}'
fi
