# The guest of systemd_test.sh, systemd as pid 1: install the .deb, give
# the unit a bearer token (LoadCredential, as /etc/default/mcp-sandbox
# shows), start it, check it from outside (systemd_client.py), its
# exposure score, and stop it.
set -u
fail=0
check()
{
	if [ "$1" -eq 0 ]; then echo "ok   $2"; else echo "FAIL $2"; fail=1; fi
}
echo "systemd $(systemctl --version | head -1), cgroup" \
    "$(stat -fc %T /sys/fs/cgroup)"
dpkg -i /opt/mcp/mcp-sandbox_*.deb >/tmp/dpkg.log 2>&1
rc=$?
[ $rc -eq 0 ] || tail -20 /tmp/dpkg.log
check $rc "dpkg -i the .deb"
umask 077
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >/etc/mcp-sandbox/token
mkdir -p /etc/systemd/system/mcp-sandbox.service.d
cat >/etc/systemd/system/mcp-sandbox.service.d/token.conf <<'UNIT'
[Service]
LoadCredential=token:/etc/mcp-sandbox/token
UNIT
sed -i 's|^MCP_SANDBOX_OPTS=.*|MCP_SANDBOX_OPTS=--token-file /run/credentials/mcp-sandbox.service/token|' \
    /etc/default/mcp-sandbox
# limits the client can see hold: 64 MiB and 16 processes a sandbox
python3 - <<'PY'
import json
p = "/etc/mcp-sandbox/policy.json"
d = json.load(open(p))
d.setdefault("limits", {}).update(memory_mb=64, processes=16)
json.dump(d, open(p, "w"), indent=1)
PY
systemctl daemon-reload
systemctl start mcp-sandbox.service
rc=$?
[ $rc -eq 0 ] || journalctl -u mcp-sandbox.service --no-pager | tail -30
check $rc "systemctl start mcp-sandbox.service"
python3 /opt/mcp/systemd_client.py "$(cat /etc/mcp-sandbox/token)"
check $? "the unit from outside (systemd_client.py)"
echo "systemd-analyze security: $(systemd-analyze security \
    mcp-sandbox.service 2>/dev/null | tail -1)"
journalctl -u mcp-sandbox.service --no-pager 2>/dev/null | tail -5
exit $fail
