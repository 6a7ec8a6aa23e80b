#!/bin/sh
# mcp-guest.service's command (tests/vm/run.sh --systemd): the guest
# script with its lines prefixed, its status, and power off, as /init does
# without systemd.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
cd /opt/mcp
export MCP_SANDBOX=/opt/mcp/mcp-sandbox
echo "MCP-VM: kernel $(uname -r), pid 1 $(cat /proc/1/comm)"
{ sh ./guest.sh 2>&1; echo $? >/run/.guest-status; } | sed -u 's/^/MCP-VM: /'
echo "MCP-VM-EXIT $(cat /run/.guest-status 2>/dev/null || echo 1)"
sync
echo o >/proc/sysrq-trigger
sleep 5
