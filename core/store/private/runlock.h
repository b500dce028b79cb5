/* runlock.h — liveness of training processes as kernel locks: the process training run N
 * holds a POSIX record lock on byte N of "<store>-runlocks" next to the store; the kernel
 * drops it when the process dies (crash, kill -9, zombie), so a reused PID or a zombie can
 * never keep a dead run "running". Locks are per process: descriptors stay open for the
 * process's life (closing one would drop every lock on the file). Private to the store. */
#ifndef LM_RUNLOCK_H
#define LM_RUNLOCK_H

/* Sweeps' locks: byte RUNLOCK_SWEEP_BASE + sweep id of the same file, past any run id. */
#define RUNLOCK_SWEEP_BASE (1L << 40)

/* Takes the lock of run id for this process. LM_OK, LM_ESTATE when another process holds
 * it (err names its pid), LM_EIO when the lock file cannot be opened. */
int runlock_acquire(const char *db_path, long id, char *err);

/* Releases this process's lock of run id (no-op when not held). */
void runlock_release(const char *db_path, long id);

/* 1 when another process holds run id's lock (*pid its pid when pid is not NULL), 0 when
 * none does, -1 when it cannot be told (no lock file: written by an older lmlab). */
int runlock_held(const char *db_path, long id, long *pid);

#endif
