/*
 * mc_detach.h - work of the epilog's out of Slurm's wait
 * (util/mc_detach.c). Its own object, so that only the plugin, which
 * needs it, imports fork: the memcore command runs no program
 * (tests/cli/test_security.sh).
 */
#ifndef MC_DETACH_H
#define MC_DETACH_H

/*
 * Run fn(arg) in a detached grandchild and return at once: a new session,
 * stdin/stdout/stderr on /dev/null (a log descriptor the caller holds
 * stays open), no blocked signal; the grandchild ends with _exit(0) when
 * fn returns. For the epilog's work that must not hold the node up
 * (slurmd waits for the epilog, and a slow one drains the node): the
 * caller waits only for the child that forks it. 0, or -1 (fork, errno).
 */
int mc_run_detached(void (*fn)(void *arg), void *arg);

#endif
