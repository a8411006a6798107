# shellcheck shell=bash
# tests/integration/lib_slurmdbd.sh - Slurm accounting of the test's own:
# a MariaDB server (Debian's mariadb-server) on its own data dir, socket and
# port, and slurmdbd (Debian's slurmdbd) on its own port, started after
# munge and before slurmctld and stopped after it, through lib.sh's hooks.
# Nothing of the machine's own MariaDB or slurmdbd is used or touched.
#
#     . "$(dirname "$0")/lib_slurmdbd.sh"
#     mc_cluster_start        # slurm.conf points at this slurmdbd
#     sacct -j 12 ...
#
# AccountingStoragePass names munge's socket for slurmdbd's connections
# (AuthInfo does not reach them on 22.05). The database runs without grant tables, reachable only on 127.0.0.1 at
# its port and on its socket in $MC_WORK: a throwaway for one test.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

for _b in mariadbd mariadb-install-db mariadb slurmdbd sacctmgr sacct; do
	command -v "$_b" >/dev/null ||
		mc_die "missing $_b (Debian's mariadb-server, slurmdbd: contrib/install-deps.sh check)"
done
MC_DB_DIR=$MC_WORK/db
MC_DB_SOCKET=$MC_DB_DIR/mysqld.sock

# Two free ports of our own (slurmctld's and slurmd's are picked later;
# a third pair from the same range, checked again then).
_mc_dbd_pick_ports() {
	local lo=${MC_PORT_RANGE%-*} hi=${MC_PORT_RANGE#*-} p n=0
	while [ $n -lt 200 ]; do
		p=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo - 1)))
		if _mc_port_free "$p" && _mc_port_free $((p + 1)); then
			MC_DB_PORT=$p MC_DBD_PORT=$((p + 1)); return 0
		fi
		n=$((n + 1))
	done
	mc_die "no two free ports in $MC_PORT_RANGE for MariaDB and slurmdbd"
}
_mc_dbd_pick_ports
MC_ACCOUNTING_LINES="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$MC_DBD_PORT
AccountingStoragePass=$MC_MUNGE_SOCKET
AccountingStorageEnforce=associations"
MC_JOBACCT_GATHER=jobacct_gather/linux

_mc_wait_for() { # SECONDS CMD...: until CMD succeeds
	local end=$((SECONDS + $1)); shift
	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.3
	done
}

mc_hook_before_slurmctld() {
	local cluster
	cluster=$(sed -n 's/^ClusterName=//p' "$SLURM_CONF")
	mkdir -p "$MC_DB_DIR" || return 1
	mariadb-install-db --no-defaults --datadir="$MC_DB_DIR/data" --user=root \
		--skip-test-db --auth-root-authentication-method=normal \
		>"$MC_LOG_DIR/mariadb-install.log" 2>&1 || return 1
	_mc_spawn mariadbd mariadbd --no-defaults --datadir="$MC_DB_DIR/data" \
		--socket="$MC_DB_SOCKET" --port="$MC_DB_PORT" --bind-address=127.0.0.1 \
		--user=root --skip-grant-tables --skip-name-resolve \
		--pid-file="$MC_WORK/run/mariadbd.pid" --log-error="$MC_LOG_DIR/mariadbd.log" \
		--innodb-buffer-pool-size=64M --innodb-log-file-size=16M
	_mc_wait_for 60 mariadb --no-defaults -S "$MC_DB_SOCKET" -e "select 1" ||
		{ mc_log "MariaDB did not come up"; return 1; }
	cat >"$MC_CONF_DIR/slurmdbd.conf" <<EOF2
AuthType=auth/munge
AuthInfo=socket=$MC_MUNGE_SOCKET
DbdAddr=127.0.0.1
DbdHost=$MC_HOST
DbdPort=$MC_DBD_PORT
SlurmUser=root
DebugLevel=info
LogFile=$MC_LOG_DIR/slurmdbd.log
PidFile=$MC_WORK/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$MC_DB_PORT
StorageUser=root
StorageLoc=slurm_acct_db
EOF2
	chmod 0600 "$MC_CONF_DIR/slurmdbd.conf"
	# slurmdbd reads slurmdbd.conf beside $SLURM_CONF (it has no -f).
	_mc_spawn slurmdbd slurmdbd -D
	_mc_wait_for 60 sacctmgr -n list cluster ||
		{ mc_log "slurmdbd did not answer: $(sacctmgr -n list cluster 2>&1)"; return 1; }
	sacctmgr -i add cluster "$cluster" >/dev/null &&
	sacctmgr -i add account mctest Cluster="$cluster" >/dev/null &&
	sacctmgr -i add user root,nobody,daemon Account=mctest Cluster="$cluster" >/dev/null ||
		{ mc_log "sacctmgr could not register the cluster and its users"; return 1; }
}

mc_hook_after_slurmctld_stop() {
	local p
	p=$(_mc_pid_of slurmdbd) && _mc_kill_wait TERM "$p"
	p=$(_mc_pid_of mariadbd) && _mc_kill_wait TERM "$p"
	return 0
}
