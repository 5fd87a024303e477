package io.threadtime;

/**
 * The CPU controller's figures for the cgroup this process is in
 * ({@code cpu.stat} and its quota): the whole group's, every process in it,
 * not this process's alone.
 *
 * @param version            1 (the v1 "cpu" hierarchy) or 2
 * @param periods            quota periods in which the group was runnable
 *                           (0 when the group has no quota)
 * @param throttledPeriods   those in which it ran out of quota
 * @param throttledNanos     time its threads were held back by the quota
 * @param quotaMicros        CPU time allowed per period, microseconds; -1: no quota
 * @param periodMicros       the period, microseconds
 */
public record CgroupCpu(int version, long periods, long throttledPeriods, long throttledNanos, long quotaMicros,
        long periodMicros) {
    /** Builds one from the backends' {@code long[6]}. */
    static CgroupCpu of(long[] v) {
        return new CgroupCpu((int) v[0], v[1], v[2], v[3], v[4], v[5]);
    }
}
