#!/bin/sh
# Guest script of the cgroup v2 test (tests/vm/run.sh runs it as pid 1's
# child, as root, in the root cgroup of a v2-only kernel): the cgroup cases
# of tests/cgroup/test_cgroup.py, as root (the server's own cgroup: the
# root of the hierarchy, as in a container's cgroup namespace) and as uid
# 65534 in a directory delegated to it the way systemd delegates one
# (chown of the dir, cgroup.procs, cgroup.subtree_control, cgroup.threads).
# Prints one line per case; exit 0 only if every case passed.
cases="memfd sysv_shm tmpfs fork_bomb server_killed live_elsewhere check"
status=0
run()
{
	if python3 ./test_cgroup.py --server "$MCP_SANDBOX" "$@"; then :;
	else status=1; fi
}
"$MCP_SANDBOX" --check || status=1
for c in $cases; do
	run "$c"
done
# A delegated subtree for uid 65534; the tests themselves run in its
# leaf t, so that the server (their child) starts inside it.
cg=/sys/fs/cgroup
d=$cg/delegated
mkdir -p $d/t
echo "+memory +pids +cpu" >$cg/cgroup.subtree_control
chown 65534:65534 $d $d/cgroup.procs $d/cgroup.subtree_control \
    $d/cgroup.threads
chown -R 65534:65534 $d/t
for c in $cases; do
	sh -c "echo \$\$ >$d/t/cgroup.procs && exec python3 ./test_cgroup.py \
	    --server $MCP_SANDBOX --unpriv --cgroup-parent $d $c" || status=1
done
# no cgroup of ours is left: only the delegated dir and its leaf t, and
# the last servers' own dirs, whose leaves are empty (they exited)
left=$(find $cg -mindepth 1 -type d -name 'run.*' | wc -l)
echo "run cgroups left: $left"
[ "$left" -eq 0 ] || status=1
exit $status
