/* Whether the writer of a temp file is still at work: the one rule the tools
 * use before removing what a killed run left (xattn-bench's .tmp-STAMP-PID.json,
 * tune/release_cleanup.sh's NAME.tmp.PID; the shell applies the same rule). */
#ifndef XATTN_COMMON_PROCESS_H
#define XATTN_COMMON_PROCESS_H

#ifdef __cplusplus
extern "C" {
#endif

/* 1 while process pid runs: /proc/PID/stat exists and its state is not Z or X.
 * A zombie (or dead) process writes nothing: a killed writer whose parent has
 * not reaped it yet (init on a firecracker VM reaps orphans lazily) is gone.
 * 0 otherwise. Where /proc is not mounted: kill(pid, 0) finds the process
 * (EPERM counts as running: it may be another user's writer). */
int xc_pid_running(long pid);

#ifdef __cplusplus
}
#endif
#endif
