package io.threadtime.agent.vthreads.hooks;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The virtual threads' accounts, keyed by thread id, for the
 * {@code java.lang.instrument} agent's hooks (see {@link VirtualThreadHooks})
 * where they cannot be in the threads themselves
 * ({@link ContinuationAccounts}): the continuation class was loaded before
 * the agent, or {@code accounts=table} was given. This class writes the
 * table and reads it.
 * <p>
 * {@code java.lang.VirtualThread} is loaded before any agent runs, so a
 * retransformation cannot give it a field; a {@code ThreadLocal} would make
 * a map per virtual thread. Instead: 64 segments, chosen by a hash of the
 * thread id, each an open-addressing index (id to account number) over a
 * store of 64-byte accounts that never moves (chunks of 64 accounts, only
 * ever added). Mounts and unmounts find the account without a lock or a
 * shared write: the index is read through a volatile reference and only its
 * owner thread's carrier writes an account. A thread's first mount and its
 * end take its segment's lock (on a {@link Pool} of its own, away from what
 * the mounts read), to insert or remove its id and to take or give back an
 * account; growing the index copies it under that lock and
 * publishes the copy, so a concurrent reader of the old copy still finds
 * the same account number. Ended threads' accounts are reused, never freed.
 * <p>
 * An account is eight longs: the closed total, the mark of the open
 * stretch, the open stretch's carrier (its thread id, 0 while unmounted),
 * the owner's thread id, and a sequence count that is odd while its owner's
 * carrier writes, so that another thread reads a consistent figure.
 * {@link #self} and {@link #other} read the figures
 * ({@code io.threadtime.VirtualThreadCpu} reads through them when the accounts are
 * here).
 */
public final class TableAccounts {
    static final int TOTAL = 0, MARK = 1, CARRIER = 2, OWNER = 3, SEQ = 4;
    private static final int STRIDE_SHIFT = 3; // 8 longs, 64 bytes: one cache line each
    private static final int CHUNK_SHIFT = 6;  // 64 accounts per chunk
    private static final int CHUNK = 1 << CHUNK_SHIFT;
    private static final int SEGMENT_SHIFT = 6;
    private static final Segment[] SEGMENTS = new Segment[1 << SEGMENT_SHIFT];
    private static final Pool[] POOLS = new Pool[SEGMENTS.length];
    private static final long GONE = -1; // an index key whose thread ended
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

    static {
        for (int i = 0; i < SEGMENTS.length; i++) {
            SEGMENTS[i] = new Segment();
        }
        for (int i = 0; i < POOLS.length; i++) {
            POOLS[i] = new Pool();
        }
    }

    private TableAccounts() {}

    /** An id to account number map; keys 0 (free) and GONE (ended) hold no thread. */
    private static final class Index {
        final long[] keys;
        final int[] accounts;
        int used; // keys that are not 0: live ids plus GONE ones (under the segment's lock)

        Index(int capacity) {
            keys = new long[capacity];
            accounts = new int[capacity];
        }
    }

    /**
     * What a mount reads: written only when the index is copied or a chunk
     * added. Kept apart from the segment's {@link Pool}, whose lock word and
     * counters change at every first mount and every end: on one cache line
     * they made the next mount on the other carrier miss.
     */
    private static final class Segment {
        volatile Index index = new Index(64);
        volatile long[][] chunks = new long[4][];
    }

    /** The segment's lock and its free accounts (all under the lock). */
    private static final class Pool {
        int created;              // accounts ever made here
        int live;                 // ids in the index
        int[] spare = new int[16];
        int spares;
    }

    /**
     * The id itself: ids are handed out in sequence, so consecutive threads
     * land in consecutive segments (the low bits) and, 64 apart, in
     * consecutive slots of a segment's index (the bits above). A scheduler
     * runs threads in about the order they started, so mounts touch
     * neighbouring cache lines; a scrambling hash made every mount of a
     * million live threads a cache miss. The run of slots this builds is
     * harmless: the index is at most half full, so the search that finds a
     * new id absent ends within a few slots, and its insertion takes the
     * first free or ended one.
     */
    private static int hash(long id) {
        return (int) id;
    }

    private static Segment segment(int h) {
        return SEGMENTS[h & (SEGMENTS.length - 1)];
    }

    /** The account chunk holding account {@code a} of the segment of {@code id}. */
    static long[] chunk(long id, int a) {
        return segment(hash(id)).chunks[a >>> CHUNK_SHIFT];
    }

    /** Offset of account {@code a} in its chunk. */
    static int offset(int a) {
        return (a & (CHUNK - 1)) << STRIDE_SHIFT;
    }

    /** The account of thread {@code id}, made at its first mount. */
    static int account(long id) {
        int h = hash(id);
        int a = find(segment(h), h, id);
        return a >= 0 ? a : adopt(h, id);
    }

    /** Account number of thread {@code id}, or -1 if it has none. No lock, no write. */
    static int find(long id) {
        int h = hash(id);
        return find(segment(h), h, id);
    }

    private static int find(Segment s, int h, long id) {
        Index ix = s.index;
        long[] keys = ix.keys;
        int mask = keys.length - 1;
        for (int i = (h >>> SEGMENT_SHIFT) & mask;; i = (i + 1) & mask) {
            long k = keys[i];
            if (k == id) {
                return ix.accounts[i];
            }
            if (k == 0) {
                return -1;
            }
        }
    }

    /** A first mount: {@code id} is known absent, as only the carrier it is
     * mounted on inserts it. */
    private static int adopt(int h, long id) {
        Segment s = segment(h);
        Pool p = POOLS[h & (POOLS.length - 1)];
        synchronized (p) {
            int a = p.spares > 0 ? p.spare[--p.spares] : newAccount(s, p);
            long[] c = s.chunks[a >>> CHUNK_SHIFT];
            int o = offset(a);
            c[o + TOTAL] = 0;
            c[o + CARRIER] = 0;
            LONGS.setRelease(c, o + OWNER, id);
            // At most half full, ended ids included: a search for an id that
            // is not there (every thread's first mount) then ends after ~2.5
            // slots on average, mostly in the same cache line.
            Index ix = s.index;
            if ((ix.used + 1) * 2 > ix.keys.length) {
                ix = rehash(ix, p.live + 1);
                s.index = ix;
            }
            // Known absent: the first free or ended slot from its home will do.
            long[] keys = ix.keys;
            int mask = keys.length - 1;
            int i = (h >>> SEGMENT_SHIFT) & mask;
            while (keys[i] != 0 && keys[i] != GONE) {
                i = (i + 1) & mask;
            }
            ix.used += keys[i] == 0 ? 1 : 0;
            ix.accounts[i] = a;
            LONGS.setRelease(keys, i, id); // the account number is visible before the key
            p.live++;
            return a;
        }
    }

    private static int newAccount(Segment s, Pool p) {
        int a = p.created++;
        long[][] chunks = s.chunks;
        int c = a >>> CHUNK_SHIFT;
        if (c == chunks.length) {
            long[][] more = new long[chunks.length * 2][];
            System.arraycopy(chunks, 0, more, 0, chunks.length);
            chunks = more;
        }
        if (chunks[c] == null) {
            chunks[c] = new long[CHUNK << STRIDE_SHIFT];
            s.chunks = chunks; // publishes the new chunk (and a grown array)
        }
        return a;
    }

    /** A fresh index for {@code live} ids, without the ended ones, a quarter
     * full at most (so that the next copy is as many insertions away); it is
     * published by the caller. The old one stays valid for readers. */
    private static Index rehash(Index old, int live) {
        int capacity = 64;
        while (capacity < live * 4) {
            capacity <<= 1;
        }
        Index ix = new Index(capacity);
        int mask = capacity - 1;
        for (int j = 0; j < old.keys.length; j++) {
            long k = old.keys[j];
            if (k != 0 && k != GONE) {
                int i = (hash(k) >>> SEGMENT_SHIFT) & mask;
                while (ix.keys[i] != 0) {
                    i = (i + 1) & mask;
                }
                ix.keys[i] = k;
                ix.accounts[i] = old.accounts[j];
                ix.used++;
            }
        }
        return ix;
    }

    /** Thread {@code id} ended: its account is no longer its, and becomes a spare. */
    static void release(long id) {
        int h = hash(id);
        Segment s = segment(h);
        Pool p = POOLS[h & (POOLS.length - 1)];
        synchronized (p) {
            Index ix = s.index;
            long[] keys = ix.keys;
            int mask = keys.length - 1;
            for (int i = (h >>> SEGMENT_SHIFT) & mask;; i = (i + 1) & mask) {
                long k = keys[i];
                if (k == 0) {
                    return; // never mounted while the hooks were in
                }
                if (k == id) {
                    int a = ix.accounts[i];
                    long[] c = s.chunks[a >>> CHUNK_SHIFT];
                    int o = offset(a);
                    long seq = c[o + SEQ];
                    c[o + SEQ] = seq + 1;
                    VarHandle.storeStoreFence();
                    c[o + OWNER] = 0;
                    c[o + CARRIER] = 0;
                    LONGS.setRelease(c, o + SEQ, seq + 2);
                    keys[i] = GONE;
                    p.live--;
                    if (p.spares == p.spare.length) {
                        int[] more = new int[p.spare.length * 2];
                        System.arraycopy(p.spare, 0, more, 0, p.spares);
                        p.spare = more;
                    }
                    p.spare[p.spares++] = a;
                    return;
                }
            }
        }
    }

    /** Opens a stretch at {@code mark} on {@code carrier}: the owner's carrier only. */
    static void open(long[] c, int o, long mark, long carrier) {
        long seq = c[o + SEQ];
        c[o + SEQ] = seq + 1;
        VarHandle.storeStoreFence();
        c[o + MARK] = mark;
        c[o + CARRIER] = carrier;
        LONGS.setRelease(c, o + SEQ, seq + 2);
    }

    /** Closes the open stretch at {@code now}, charging nothing for it if
     * {@code now} is negative (the clock failed); nothing if none is open (the
     * thread was mounted before the hooks went in). The owner's carrier only. */
    static void close(long[] c, int o, long now) {
        if (c[o + CARRIER] == 0) {
            return;
        }
        long seq = c[o + SEQ];
        c[o + SEQ] = seq + 1;
        VarHandle.storeStoreFence();
        long stretch = now < 0 ? 0 : now - c[o + MARK];
        c[o + TOTAL] += stretch > 0 ? stretch : 0;
        c[o + CARRIER] = 0;
        LONGS.setRelease(c, o + SEQ, seq + 2);
    }

    /** The calling virtual thread's account, ns; -1 without one (it was
     * mounted before the hooks went in) or if the clock read failed. Its own
     * carrier writes it, so plain reads are consistent. */
    public static long self(Thread vthread) {
        long id = vthread.getId();
        int a = find(id);
        if (a < 0) {
            return -1;
        }
        long[] c = chunk(id, a);
        int o = offset(a);
        return VirtualThreadHooks.selfFigure(c[o + TOTAL], c[o + MARK], c[o + CARRIER]);
    }

    /**
     * Another virtual thread's account, ns, with its open stretch read on the
     * clock of the carrier it is on; 0 for a thread that has been started but
     * has not run yet (its account is made at its first mount), -1 once it has
     * ended or if it has no account for another reason.
     */
    public static long other(Thread vthread) {
        long id = vthread.getId();
        // Before the search: a thread seen not yet run then and without an
        // account after has been charged nothing, whichever came between.
        boolean unrun = Unrun.is(vthread);
        int a = find(id);
        if (a < 0) {
            return unrun ? 0 : -1;
        }
        long[] c = chunk(id, a);
        int o = offset(a);
        for (int spins = 0;; spins++) {
            long seq = seq(c, o);
            if ((seq & 1) == 0) {
                long owner = c[o + OWNER];
                long total = c[o + TOTAL];
                long mark = c[o + MARK];
                long carrier = c[o + CARRIER];
                long now = carrier != 0 ? VirtualThreadHooks.carrierNow(carrier) : 0;
                VarHandle.loadLoadFence();
                if (seq(c, o) == seq) {
                    return owner != id ? -1 : VirtualThreadHooks.figure(total, mark, carrier, now);
                }
            }
            if (spins > 64) {
                Thread.onSpinWait();
            }
        }
    }

    /**
     * Whether a virtual thread has been started but not yet run: its
     * {@code VirtualThread.state} still holds the class's own {@code STARTED}
     * (read from the class, not copied). Needs {@code java.lang} opened to
     * this module, which the agent does before the hooks go in; where it
     * could not, every answer is false (such a thread then reads -1).
     */
    static final class Unrun {
        private static final Class<?> VIRTUAL_THREAD;
        private static final VarHandle STATE;
        private static final int STARTED;

        static {
            Class<?> vthread = null;
            VarHandle state = null;
            int started = -1;
            try {
                vthread = Class.forName("java.lang.VirtualThread", false, null);
                MethodHandles.Lookup l = MethodHandles.privateLookupIn(vthread, MethodHandles.lookup());
                state = l.findVarHandle(vthread, "state", int.class);
                started = (int) l.findStaticVarHandle(vthread, "STARTED", int.class).get();
            } catch (ReflectiveOperationException | RuntimeException e) {
                state = null;
            }
            VIRTUAL_THREAD = vthread;
            STATE = state;
            STARTED = started;
        }

        private Unrun() {}

        static boolean is(Thread t) {
            return STATE != null && VIRTUAL_THREAD.isInstance(t) && (int) STATE.getVolatile(t) == STARTED;
        }
    }

    /** The sequence count of an account, read with acquire semantics. */
    static long seq(long[] c, int o) {
        return (long) LONGS.getAcquire(c, o + SEQ);
    }

    /** Accounts held by live threads: ids in the indexes (each segment under its lock). */
    public static long inUse() {
        long n = 0;
        for (Pool p : POOLS) {
            synchronized (p) {
                n += p.live;
            }
        }
        return n;
    }

    /** Bytes the accounts and the indexes occupy. */
    public static long bytes() {
        long n = 0;
        for (int i = 0; i < SEGMENTS.length; i++) {
            synchronized (POOLS[i]) {
                n += ((long) POOLS[i].created << (STRIDE_SHIFT + 3)) + SEGMENTS[i].index.keys.length * 12L;
            }
        }
        return n;
    }
}
