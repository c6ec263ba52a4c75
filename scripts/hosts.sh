#!/usr/bin/env bash
# Hosts on this machine for multi-host runs: each host a network namespace with its own address and
# hostname, joined through a bridge, its link shaped with tbf so that a host's shared memory is much
# faster than the wire between hosts; mpiexec (MPICH's, or Open MPI's named by KUSARI_HOSTS_MPIEXEC)
# starts each host's ranks inside its namespaces, and MPI carries bytes between hosts over TCP, inside a
# host over shared memory. Needs root (ip netns, veth, bridge, tc). docs/hosts.md tells more.
#
#   hosts.sh up N [--rate RATE]   hosts host1..hostN at 10.88.0.11.. (RATE: tc's, e.g. 200mbit)
#   hosts.sh down                 removes every host and the bridge (idempotent)
#   hosts.sh mpiexec [--per-host K] ARGS...
#                                 mpiexec over the hosts, K ranks on each (default 1), -n N·K
#                                 (KUSARI_HOSTS_ALIVE_SECONDS: how long a cut link is borne, 10)
#   hosts.sh cut HOST | heal HOST its link down, or up again (returning once it forwards; HOST: host2 or 2)
#   hosts.sh kill HOST            SIGKILL to every process on it
#   hosts.sh bytes HOST           bytes its link has carried, sent and received
#   hosts.sh [-x] ADDRESS COMMAND how mpiexec starts a host's proxy, in place of ssh
set -euo pipefail
prefix=kusari
bridge=$prefix-br
state=/run/$prefix-hosts
subnet=10.88.0

fail() { echo "hosts.sh: $*" >&2; exit 2; }
count() { [ -f "$state/count" ] && cat "$state/count" || echo 0; }
index_of() {  # host2, 2 or 10.88.0.12 -> 2
  local host=${1#host}
  host=${host#$subnet.1}
  [[ $host =~ ^[0-9]+$ ]] && [ "$host" -ge 1 ] && [ "$host" -le "$(count)" ] ||
    fail "expected a host of 1..$(count) (host1, 1 or $subnet.11), got '$1'"
  echo "$host"
}

down() {  # the hosts' processes too, and links a process still in a host kept alive
  for ns in $(ip netns list | awk '{print $1}' | grep "^$prefix-host" || true); do
    ip netns pids "$ns" | xargs -r kill -9
    ip netns del "$ns"
  done
  for link in $(ip -o link show | awk -F'[:@]' '{print $2}' | tr -d ' ' | grep "^${prefix}h[0-9]" || true); do
    ip link del "$link" 2>/dev/null || true
  done
  ip link del "$bridge" 2>/dev/null || true
  rm -rf "$state"
}

up() {
  local n=${1:-} rate=""
  [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 80 ] || fail "up: expected a host count of 1..80, got '$n'"
  shift
  [ "${1:-}" != --rate ] || { rate=${2:?hosts.sh up: --rate needs a value such as 200mbit}; shift 2; }
  [ $# -eq 0 ] || fail "up: unexpected argument '$1'"
  down
  mkdir -p "$state"
  ip link add "$bridge" type bridge
  ip addr add "$subnet.1/24" dev "$bridge"
  ip link set "$bridge" up
  for i in $(seq 1 "$n"); do
    local ns=$prefix-host$i link=${prefix}h$i
    ip netns add "$ns"
    ip link add "$link" type veth peer name eth0 netns "$ns"
    ip link set "$link" master "$bridge" up
    ip -n "$ns" addr add "$subnet.1$i/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    cat /proc/sys/kernel/random/uuid > "$state/boot_id_$i"  # each host a boot of its own (see launch)
    if [ -n "$rate" ]; then  # both directions: into the host on the bridge's side, out of it inside
      tc qdisc add dev "$link" root tbf rate "$rate" burst 256kb latency 50ms
      tc -n "$ns" qdisc add dev eth0 root tbf rate "$rate" burst 256kb latency 50ms
    fi
  done
  echo "$n" > "$state/count"
  echo "$n hosts up (host1..host$n at $subnet.11..$subnet.1$n)${rate:+, links shaped to $rate}"
}

launch() {  # called by mpiexec as ssh would be: [-x] ADDRESS COMMAND...
  while [[ ${1:-} == -* ]]; do shift; done
  local i
  i=$(index_of "$1")
  shift
  # Its own hostname, IPC and PID namespaces, /dev/shm and boot id: nothing of another host's memory is
  # reachable, while the ranks of one host share them. UCX (MPICH's network layer) tells machines apart
  # by the kernel's boot id: with one per host it takes shared memory within a host and TCP between.
  [ -z "${KUSARI_HOSTS_UCX_TLS:-}" ] || export UCX_TLS=$KUSARI_HOSTS_UCX_TLS
  # The command is a shell command line, as ssh runs it (Open MPI's sets variables before its daemon).
  # Like ssh with ServerAliveInterval, the connection is given up when the host's link stays down
  # (KUSARI_HOSTS_ALIVE_SECONDS, 10 by default, as ssh's ServerAliveInterval 5 and CountMax 2): the
  # host's processes are killed and the exit status is ssh's 255, so the launcher learns of it as of a
  # lost ssh connection. (A cut is marked in $state, which every host sees: Open MPI's daemons start
  # one another, so this may run inside another host's namespaces.) However this process ends, the
  # host's processes end with it: its child gets SIGKILL when it exits (pdeathsig), and unshare's own
  # child, the host's first process, with that (--kill-child).
  ip netns exec "$prefix-host$i" setpriv --pdeathsig KILL unshare --uts --ipc --pid --fork --kill-child --mount-proc --propagation private \
    /bin/bash -c "mount -t tmpfs -o size=50% tmpfs /dev/shm && mount --bind $state/boot_id_$i \
      /proc/sys/kernel/random/boot_id && hostname host$i && exec /bin/bash -c \"\$0\"" "$*" <&0 &
  local child=$! down=0 alive=${KUSARI_HOSTS_ALIVE_SECONDS:-10}
  while kill -0 "$child" 2>/dev/null; do
    if [ -e "$state/cut_$i" ]; then down=$((down + 1)); else down=0; fi
    if [ "$down" -ge $((alive * 5)) ]; then
      echo "hosts.sh: connection to host$i lost: its link has been down for $alive s" >&2
      kill -9 "$child"
      wait "$child"
      exit 255
    fi
    sleep 0.2
  done
  wait "$child"
}

heal() {  # host $1's link up again, returning once it forwards and nothing remembers the cut
  local i=$1 ns=$prefix-host$1 link=${prefix}h$1
  ip link set "$link" up
  rm -f "$state/cut_$i"
  for _ in $(seq 1 100); do
    [ "$(cat "/sys/class/net/$link/operstate")" = up ] && [ "$(cat "/sys/class/net/$link/brport/state")" = 3 ] &&
      ip -n "$ns" link show eth0 | grep -q "state UP" && break
    sleep 0.05
  done
  # Neighbours the hosts failed to resolve while the link was down would fail the next connection at
  # once (an Open MPI daemon's back to mpiexec, say): both sides forget them.
  ip -n "$ns" neigh flush all
  ip neigh flush dev "$bridge"
}

run_mpiexec() {
  local per_host=1 n
  [ "${1:-}" != --per-host ] || { per_host=${2:-}; shift; shift || true; }
  [[ $per_host =~ ^[1-9][0-9]*$ ]] || fail "mpiexec: expected --per-host K with K ≥ 1, got '$per_host'"
  n=$(count)
  [ "$n" -ge 1 ] || fail "mpiexec: no hosts are up (hosts.sh up N first)"
  local launcher=${KUSARI_HOSTS_MPIEXEC:-$(command -v mpiexec.mpich || command -v mpiexec)}
  local self hostfile=$state/hostfile_$per_host
  self=$(readlink -f "$0")
  if [ $((n * per_host)) -gt "$(OMP_NUM_THREADS='' OMP_THREAD_LIMIT='' nproc)" ]; then
    # More ranks than this machine's cores: MPI's progress loops yield the core at every poll (both MPIs
    # spin otherwise, and a rank waiting for a peer on its own core waits out the scheduler's slices).
    export MPIR_CVAR_POLLS_BEFORE_YIELD=${MPIR_CVAR_POLLS_BEFORE_YIELD:-1}
    export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
  fi
  if "$launcher" --version 2>&1 | grep -q OpenRTE; then  # Open MPI: its rsh agent, TCP on the bridge's subnet
    for i in $(seq 1 "$n"); do echo "$subnet.1$i slots=$per_host"; done > "$hostfile"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    # Its daemons' connections probe an idle peer after 2 s, so a host cut off is found within seconds
    # (the defaults take 8 minutes).
    exec "$launcher" --mca plm_rsh_agent "$self" --hostfile "$hostfile" --bind-to none --mca oob_tcp_keepalive_time 2 \
      --mca oob_tcp_keepalive_intvl 1 --mca oob_tcp_keepalive_probes 3 \
      --mca btl_tcp_if_include "$subnet.0/24" --mca oob_tcp_if_include "$subnet.0/24" -n $((n * per_host)) "$@"
  fi
  for i in $(seq 1 "$n"); do echo "$subnet.1$i:$per_host"; done > "$hostfile"
  exec "$launcher" -launcher ssh -launcher-exec "$self" -f "$hostfile" -iface "$bridge" -n $((n * per_host)) "$@"
}

command=${1:-}
# mpiexec calls this script as it would call ssh: [-x] ADDRESS COMMAND.
case $command in -*|$subnet.*) launch "$@"; exit $? ;; esac
shift || true
case $command in
  up) up "$@" ;;
  down) down ;;
  mpiexec) run_mpiexec "$@" ;;
  cut) i=$(index_of "${1:-}"); ip link set "${prefix}h$i" down; touch "$state/cut_$i" ;;
  heal) heal "$(index_of "${1:-}")" ;;
  kill) ip netns pids "$prefix-host$(index_of "${1:-}")" | xargs -r kill -9 ;;
  bytes)
    link=${prefix}h$(index_of "${1:-}")
    echo $(( $(cat /sys/class/net/$link/statistics/tx_bytes) + $(cat /sys/class/net/$link/statistics/rx_bytes) )) ;;
  *) fail "expected up, down, mpiexec, cut, heal, kill or bytes, got '$command'" ;;
esac
