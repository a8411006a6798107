/*
 * mc_keepdbd.h - a copy of memcore's records in slurmdbd's SystemComment,
 * made at the job's end (spank/mc_keepdbd.c).
 */
#ifndef MC_KEEPDBD_H
#define MC_KEEPDBD_H

#include <stdint.h>

/*
 * Job epilog (root, slurmd's child): on the job's first node, start a
 * detached process that, once every node's epilog has ended, copies
 * memcore's block of job job_id's AdminComment (slurmctld's: every step's
 * record) into the job's SystemComment in slurmdbd, after whatever
 * slurmctld keeps there. Returns at once; never fails (what goes wrong is
 * said in slurmd's log). Nothing on other nodes, nor when Slurm keeps no
 * accounting in slurmdbd.
 */
void mc_keepdbd_job_end(uint32_t job_id);

#endif
