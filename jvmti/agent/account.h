/* threadtime-vthreads: the CPU account of one virtual thread.
 *
 * Who writes: only the carrier that has the virtual thread mounted. The JVM
 * mounts a virtual thread on one carrier at a time, and the hand-off from
 * one carrier to the next (unmount, scheduler queue, mount) already orders
 * the first carrier's stores before the second one's, so the account needs
 * no lock and no atomic read-modify-write.
 *
 * Who reads: the virtual thread itself (it runs on the writer, so plain
 * loads), or any other thread through the sequence count `seq`.
 *
 * Lifetime: accounts are recycled, never returned to the heap. A reader that
 * holds the pointer of a thread that has since ended reads valid memory and
 * learns from `owner` that the account now belongs to someone else.
 *
 * Units: whatever the agent's clock counts (ns of carrier CPU time in exact
 * mode, counter ticks in mounted mode); clock.h converts.
 */
#ifndef VT_ACCOUNT_H
#define VT_ACCOUNT_H

#include <stdint.h>
#include <sys/types.h>

typedef struct vt_account {
    uint64_t seq;    /* odd while the writer is between its two increments */
    int64_t total;   /* clock units of all closed segments */
    int64_t mark;    /* clock when the open segment began */
    int64_t owner;   /* java.lang.Thread id of the owner; 0 while free */
    pid_t carrier;   /* kernel tid of the carrier while a segment is open, else 0 */
    struct vt_account *next; /* free-list link; only touched while free */
} __attribute__((aligned(64))) vt_account; /* one cache line: carriers never share one */

/* Opens a segment at `now` on carrier `tid` (no-op if one is open). */
void vt_account_open(vt_account *a, int64_t now, pid_t tid);
/* Closes the open segment at `now`, adding it to the total (no-op if none
 * is open, or if now < 0: a failed clock read charges nothing). */
void vt_account_close(vt_account *a, int64_t now);

/* Charged units as seen by the writer's own thread: the total plus the open
 * segment up to `now`. Only valid on the carrier that has the owner mounted. */
int64_t vt_account_self(const vt_account *a, int64_t now);

/* Charged units as seen from any thread, or -1 if the account does not (or
 * no longer) belong to `owner`. carrier_now(tid) reads the clock a segment
 * open on carrier tid is measured with; it is called inside the consistent
 * window, so a segment closing meanwhile makes the read start over. */
int64_t vt_account_read(const vt_account *a, int64_t owner, int64_t (*carrier_now)(pid_t tid));

/* A free account for `owner` (> 0), from the calling thread's spares, else
 * from the shared pool, else new memory. NULL if out of memory. */
vt_account *vt_account_take(int64_t owner);
/* Gives an account back when its owner has ended; the calling thread keeps
 * it as a spare (and hands surplus spares to the shared pool). */
void vt_account_give(vt_account *a);

/* Memory the accounts occupy, bytes: every account ever created, live or
 * spare (the pool only grows to the peak of live virtual threads plus the
 * spares each carrier holds). */
uint64_t vt_account_bytes(void);

/* Accounts owned by a thread now: taken and not yet given back. Exact once
 * the threads that take and give are quiet (a share being updated meanwhile
 * is read before or after its change); takes the pool's lock. */
int64_t vt_account_in_use(void);

#endif /* VT_ACCOUNT_H */
