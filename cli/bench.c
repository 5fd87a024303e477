/* threadtime bench: every method side by side, JMH-style sample time.
 *
 * For each (method, thread count): T threads run the method at once. Each
 * thread sizes a batch so that one batch lasts at least BATCH_MIN_NS (the
 * timer read costs ~25 ns; a batch 50x longer keeps its share near 2%),
 * warms up, then times batch after batch with CLOCK_MONOTONIC until the
 * measuring time is over. A sample is one batch's time divided by its
 * calls; the percentiles are over all threads' samples. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "bench.h"
#include "read_clock.h"
#include "threadtime/threadtime.h"

#define BATCH_MIN_NS 1500.0
#define MAX_METHODS 64
#define MAX_THREAD_COUNTS 16

typedef struct options {
    int64_t warmup_ns;
    int64_t measure_ns;
    int json;
    int thread_counts[MAX_THREAD_COUNTS];
    int n_thread_counts;
    const tt__bench_method *methods[MAX_METHODS];
    int n_methods;
} options;

typedef struct result {
    const char *method;
    int threads;
    uint64_t batch;
    size_t samples;
    double mean, error, p0, p50, p90, p99, p999, p9999, max;
    double ratio; /* p50 / baseline p50 at the same thread count; 0 if unknown */
    int error_code; /* -errno if the method could not run */
} result;

typedef struct worker {
    const tt__bench_method *m;
    const options *opt;
    pthread_barrier_t *ready;
    uint64_t batch;
    double *samples;
    size_t n, cap;
    int error_code;
    uint64_t sink;
} worker;

/* Sizes a batch so that one lasts about BATCH_MIN_NS. The per-call
 * estimate is the fastest of several timed runs, so one slow first call (a
 * page fault, a migration) cannot shrink the batch to a single call and let
 * the timer's own cost into the samples. */
static uint64_t size_batch(const tt__bench_method *m, void *state, uint64_t *sink, double *per_call)
{
    uint64_t n = 1;
    double best;
    for (;;) {
        best = -1;
        for (int round = 0; round < 7; round++) {
            int64_t t0 = tt__read_clock(CLOCK_MONOTONIC);
            *sink += m->run(state, n);
            double dt = (double)(tt__read_clock(CLOCK_MONOTONIC) - t0) / (double)n;
            if (best < 0 || dt < best)
                best = dt;
        }
        /* Large enough that the timer is noise: size the batch from it. */
        if (best * (double)n >= BATCH_MIN_NS / 4 || n >= (UINT64_C(1) << 24))
            break;
        n *= 4;
    }
    *per_call = best > 0 ? best : 1;
    uint64_t batch = (uint64_t)ceil(BATCH_MIN_NS / *per_call);
    return batch < 1 ? 1 : batch;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    void *state = NULL;
    if (w->m->setup)
        w->error_code = w->m->setup(&state);
    double per_call = 1;
    if (w->error_code == 0) {
        w->batch = size_batch(w->m, state, &w->sink, &per_call);
        /* Room for every sample the measuring time can hold, plus slack. */
        double batch_ns = per_call * (double)w->batch;
        w->cap = (size_t)((double)w->opt->measure_ns / (batch_ns > 1 ? batch_ns : 1)) * 2 + 1024;
        w->samples = malloc(w->cap * sizeof *w->samples);
        if (w->samples == NULL)
            w->error_code = -ENOMEM;
    }
    /* Every thread warms up and measures at the same time, even when one
     * failed, so the others see the load they were asked to see. */
    pthread_barrier_wait(w->ready);
    if (w->error_code == 0) {
        int64_t end = tt__read_clock(CLOCK_MONOTONIC) + w->opt->warmup_ns;
        while (tt__read_clock(CLOCK_MONOTONIC) < end)
            w->sink += w->m->run(state, w->batch);
    }
    pthread_barrier_wait(w->ready);
    if (w->error_code == 0) {
        int64_t end = tt__read_clock(CLOCK_MONOTONIC) + w->opt->measure_ns;
        int64_t t0 = tt__read_clock(CLOCK_MONOTONIC);
        while (t0 < end && w->n < w->cap) {
            w->sink += w->m->run(state, w->batch);
            int64_t t1 = tt__read_clock(CLOCK_MONOTONIC);
            w->samples[w->n++] = (double)(t1 - t0) / (double)w->batch;
            t0 = t1;
        }
    }
    if (w->m->teardown && state)
        w->m->teardown(state);
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double percentile(const double *sorted, size_t n, double p)
{
    size_t i = (size_t)ceil(p / 100.0 * (double)n);
    return sorted[i == 0 ? 0 : (i > n ? n - 1 : i - 1)];
}

static void summarize(double *all, size_t n, result *r)
{
    qsort(all, n, sizeof *all, cmp_double);
    double sum = 0, sq = 0;
    for (size_t i = 0; i < n; i++)
        sum += all[i];
    r->mean = sum / (double)n;
    for (size_t i = 0; i < n; i++)
        sq += (all[i] - r->mean) * (all[i] - r->mean);
    /* Half-width of the 99.9% confidence interval of the mean, as JMH
     * prints it (normal approximation: the sample counts are large). */
    r->error = n > 1 ? 3.291 * sqrt(sq / (double)(n - 1)) / sqrt((double)n) : 0;
    r->p0 = all[0];
    r->p50 = percentile(all, n, 50);
    r->p90 = percentile(all, n, 90);
    r->p99 = percentile(all, n, 99);
    r->p999 = percentile(all, n, 99.9);
    r->p9999 = percentile(all, n, 99.99);
    r->max = all[n - 1];
}

static void measure(const tt__bench_method *m, int threads, const options *opt, result *r)
{
    *r = (result){.method = m->name, .threads = threads};
    if (m->global_setup && (r->error_code = m->global_setup()) != 0)
        return;
    worker *w = calloc((size_t)threads, sizeof *w);
    pthread_t *th = calloc((size_t)threads, sizeof *th);
    pthread_barrier_t ready;
    if (w == NULL || th == NULL) {
        r->error_code = -ENOMEM;
        goto out;
    }
    pthread_barrier_init(&ready, NULL, (unsigned)threads);
    int started = 0;
    for (; started < threads; started++) {
        w[started] = (worker){.m = m, .opt = opt, .ready = &ready};
        if (pthread_create(&th[started], NULL, worker_main, &w[started]) != 0)
            break;
    }
    if (started < threads) {
        /* The barrier counts every thread: without all, none can pass. */
        fprintf(stderr, "threadtime bench: cannot start %d threads\n", threads);
        exit(1);
    }
    size_t total = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        if (w[i].error_code != 0)
            r->error_code = w[i].error_code;
        total += w[i].n;
    }
    pthread_barrier_destroy(&ready);
    if (r->error_code == 0 && total > 0) {
        double *all = malloc(total * sizeof *all);
        if (all == NULL) {
            r->error_code = -ENOMEM;
        } else {
            size_t k = 0;
            for (int i = 0; i < threads; i++) {
                memcpy(all + k, w[i].samples, w[i].n * sizeof *all);
                k += w[i].n;
            }
            r->samples = total;
            r->batch = w[0].batch;
            summarize(all, total, r);
            free(all);
        }
    }
    for (int i = 0; i < threads; i++)
        free(w[i].samples);
out:
    free(w);
    free(th);
    if (m->global_teardown)
        m->global_teardown();
}

/* ---- the machine the numbers come from ---- */

static void read_line(const char *path, char *buf, size_t cap)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    if (fgets(buf, (int)cap, f) != NULL)
        buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
}

typedef struct machine {
    char cpu[128];
    char kernel[256];
    char clocksource[64];
    char tsc_flags[128];
    long hz; /* 0: unknown */
    long cpus;
} machine;

static long kernel_hz(const char *release)
{
    char path[256], line[256];
    long hz = 0;
    snprintf(path, sizeof path, "/boot/config-%s", release);
    FILE *f = fopen(path, "r");
    int piped = f == NULL;
    if (piped)
        f = popen("zcat /proc/config.gz 2>/dev/null", "r");
    if (f == NULL)
        return 0;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "CONFIG_HZ=%ld", &hz) == 1)
            break;
    if (piped)
        pclose(f);
    else
        fclose(f);
    return hz;
}

static void describe_machine(machine *mc)
{
    memset(mc, 0, sizeof *mc);
    char line[4096];
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        char *colon = strchr(line, ':');
        if (colon == NULL)
            continue;
        char *value = colon + 2 <= line + strlen(line) ? colon + 2 : colon + 1;
        value[strcspn(value, "\n")] = '\0';
        if (!mc->cpu[0] && strncmp(line, "model name", 10) == 0)
            snprintf(mc->cpu, sizeof mc->cpu, "%s", value);
        if (!mc->tsc_flags[0] && strncmp(line, "flags", 5) == 0) {
            static const char *const wanted[] = {"tsc", "constant_tsc", "nonstop_tsc", "rdtscp",
                                                 "tsc_reliable", "tsc_known_freq"};
            for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++) {
                char pat[32];
                snprintf(pat, sizeof pat, " %s ", wanted[i]);
                char padded[4096 + 2];
                snprintf(padded, sizeof padded, " %s ", value);
                if (strstr(padded, pat) != NULL) {
                    size_t len = strlen(mc->tsc_flags);
                    snprintf(mc->tsc_flags + len, sizeof mc->tsc_flags - len, "%s%s", len ? " " : "",
                             wanted[i]);
                }
            }
        }
    }
    if (f != NULL)
        fclose(f);
    struct utsname u;
    if (uname(&u) == 0) {
        snprintf(mc->kernel, sizeof mc->kernel, "%s %s %s", u.sysname, u.release, u.machine);
        mc->hz = kernel_hz(u.release);
    }
    read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", mc->clocksource,
              sizeof mc->clocksource);
    mc->cpus = sysconf(_SC_NPROCESSORS_ONLN);
}

/* ---- output ---- */


static const tt__bench_method *find_method(const char *name, size_t len);

static void print_json(FILE *out, const machine *mc, const options *opt, const result *r, int n)
{
    fprintf(out, "{\n  \"machine\": {\"cpu\": ");
    tt__cli_json_string(out, mc->cpu);
    fprintf(out, ", \"kernel\": ");
    tt__cli_json_string(out, mc->kernel);
    fprintf(out, ", \"clocksource\": ");
    tt__cli_json_string(out, mc->clocksource);
    fprintf(out, ", \"hz\": %ld, \"cpus\": %ld, \"tsc_flags\": ", mc->hz, mc->cpus);
    tt__cli_json_string(out, mc->tsc_flags);
    fprintf(out, ", \"threadtime\": ");
    tt__cli_json_string(out, tt_version());
    /* What fast_self reads here, or why it reads the kernel's clock. */
    fprintf(out, ", \"fast_clock\": ");
    tt__cli_json_string(out, tt_fast_clock_name());
    fprintf(out, "},\n  \"sampling\": {\"mode\": \"sample_time\", \"timer\": \"CLOCK_MONOTONIC\", "
                 "\"min_batch_ns\": %.0f, \"warmup_ns\": %" PRId64 ", \"measure_ns\": %" PRId64
                 ", \"baseline\": \"%s\"},\n  \"results\": [",
            BATCH_MIN_NS, opt->warmup_ns, opt->measure_ns, TT_BENCH_BASELINE);
    int first = 1;
    for (int i = 0; i < n; i++) {
        if (r[i].error_code != 0)
            continue;
        fprintf(out,
                "%s\n    {\"method\": \"%s\", \"threads\": %d, \"batch\": %" PRIu64 ", \"samples\": %zu, "
                "\"mean_ns\": %.2f, \"error_ns\": %.2f, \"p0_ns\": %.2f, \"p50_ns\": %.2f, "
                "\"p90_ns\": %.2f, \"p99_ns\": %.2f, \"p999_ns\": %.2f, \"p9999_ns\": %.2f, "
                "\"max_ns\": %.2f, \"ratio_to_baseline\": %.5f, \"description\": ",
                first ? "" : ",", r[i].method, r[i].threads, r[i].batch, r[i].samples, r[i].mean,
                r[i].error, r[i].p0, r[i].p50, r[i].p90, r[i].p99, r[i].p999, r[i].p9999, r[i].max,
                r[i].ratio);
        /* What --list says of the method, so a chart can show it. */
        const tt__bench_method *m = find_method(r[i].method, strlen(r[i].method));
        tt__cli_json_string(out, m ? m->description : "");
        fputc('}', out);
        first = 0;
    }
    fprintf(out, "\n  ],\n  \"skipped\": [");
    first = 1;
    for (int i = 0; i < n; i++) {
        if (r[i].error_code == 0)
            continue;
        fprintf(out, "%s{\"method\": \"%s\", \"threads\": %d, \"error\": ", first ? "" : ", ",
                r[i].method, r[i].threads);
        tt__cli_json_string(out, tt_strerror(r[i].error_code));
        fputc('}', out);
        first = 0;
    }
    fprintf(out, "]\n}\n");
}

static void print_table(FILE *out, const machine *mc, const options *opt, const result *r, int n)
{
    fprintf(out, "threadtime %s bench on %s (%ld CPUs), %s, clocksource %s, HZ %s%ld, tsc flags: %s\n",
            tt_version(), mc->cpu, mc->cpus, mc->kernel, mc->clocksource, mc->hz ? "" : "unknown ",
            mc->hz, mc->tsc_flags[0] ? mc->tsc_flags : "none");
    fprintf(out, "fast clock (fast_self): %s\n", tt_fast_clock_name());
    fprintf(out,
            "Sample time: each sample is one batch of calls timed with CLOCK_MONOTONIC, divided by "
            "its size\n(batches last >= %.0f ns); %.2f s warm-up, %.2f s measured per row; ns per call "
            "per thread.\nerror = 99.9%% confidence half-width of the mean. vs %s = its p50 / this p50.\n\n",
            BATCH_MIN_NS, (double)opt->warmup_ns / 1e9, (double)opt->measure_ns / 1e9, TT_BENCH_BASELINE);
    fprintf(out, "%-24s %3s %6s %9s %10s %8s %9s %9s %9s %9s %9s %9s %10s %10s\n", "method", "thr",
            "batch", "samples", "mean", "error", "p0", "p50", "p90", "p99", "p99.9", "p99.99", "max",
            "vs procfs");
    for (int i = 0; i < n; i++) {
        if (r[i].error_code != 0) {
            fprintf(out, "%-24s %3d  skipped: %s\n", r[i].method, r[i].threads, tt_strerror(r[i].error_code));
            continue;
        }
        char ratio[32] = "-";
        if (r[i].ratio > 0)
            snprintf(ratio, sizeof ratio, "%.1fx", 1.0 / r[i].ratio);
        fprintf(out, "%-24s %3d %6" PRIu64 " %9zu %10.1f %8.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %10.1f %10s\n",
                r[i].method, r[i].threads, r[i].batch, r[i].samples, r[i].mean, r[i].error, r[i].p0,
                r[i].p50, r[i].p90, r[i].p99, r[i].p999, r[i].p9999, r[i].max, ratio);
    }
}

/* ---- options ---- */

static const tt__bench_method *const *tables(void)
{
    static const tt__bench_method *const t[] = {tt__bench_clock_methods, tt__bench_event_methods, NULL};
    return t;
}

static const tt__bench_method *find_method(const char *name, size_t len)
{
    for (const tt__bench_method *const *t = tables(); *t; t++)
        for (const tt__bench_method *m = *t; m->name; m++)
            if (strlen(m->name) == len && strncmp(m->name, name, len) == 0)
                return m;
    return NULL;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: threadtime bench [--quick] [--methods a,b,...] [--threads 1,2,...]\n"
            "                        [--warmup SECONDS] [--time SECONDS] [--json] [--list]\n\n"
            "Measures every method side by side, JMH-style sample time, with the /proc\n"
            "reader (%s) as the baseline in the same run.\n"
            "  --quick        0.06 s warm-up and 0.2 s per row (the whole run takes < 15 s)\n"
            "  --methods      comma-separated names (see --list); the baseline is always added\n"
            "  --threads      thread counts to run each method with (default: 1 and the CPU count)\n"
            "  --warmup/--time  warm-up and measuring time per row (default 0.5 s and 1 s)\n"
            "  --json         one JSON document on stdout instead of the table\n"
            "  --list         the methods and what each measures\n",
            TT_BENCH_BASELINE);
}

static int parse_seconds(const char *s, int64_t *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !(v > 0) || v > 3600)
        return -1;
    *out = (int64_t)(v * 1e9);
    return 0;
}

static int add_method(options *opt, const tt__bench_method *m)
{
    for (int i = 0; i < opt->n_methods; i++)
        if (opt->methods[i] == m)
            return 0;
    if (opt->n_methods == MAX_METHODS)
        return -1;
    opt->methods[opt->n_methods++] = m;
    return 0;
}

static int parse_options(int argc, char **argv, options *opt)
{
    *opt = (options){.warmup_ns = 500000000, .measure_ns = 1000000000};
    const char *methods = NULL, *threads = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--quick") == 0) {
            opt->warmup_ns = 60000000;
            opt->measure_ns = 200000000;
        } else if (strcmp(a, "--json") == 0) {
            opt->json = 1;
        } else if (strcmp(a, "--methods") == 0 && next) {
            methods = argv[++i];
        } else if (strcmp(a, "--threads") == 0 && next) {
            threads = argv[++i];
        } else if (strcmp(a, "--warmup") == 0 && next) {
            if (parse_seconds(argv[++i], &opt->warmup_ns) != 0) {
                fprintf(stderr, "threadtime bench: bad --warmup '%s' (seconds, > 0)\n", argv[i]);
                return 2;
            }
        } else if (strcmp(a, "--time") == 0 && next) {
            if (parse_seconds(argv[++i], &opt->measure_ns) != 0) {
                fprintf(stderr, "threadtime bench: bad --time '%s' (seconds, > 0)\n", argv[i]);
                return 2;
            }
        } else if (strcmp(a, "--list") == 0) {
            for (const tt__bench_method *const *t = tables(); *t; t++)
                for (const tt__bench_method *m = *t; m->name; m++)
                    printf("%-24s %s\n", m->name, m->description);
            return 0;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "threadtime bench: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }

    const tt__bench_method *baseline = find_method(TT_BENCH_BASELINE, strlen(TT_BENCH_BASELINE));
    if (baseline)
        add_method(opt, baseline);
    if (methods) {
        for (const char *p = methods; *p;) {
            size_t len = strcspn(p, ",");
            const tt__bench_method *m = find_method(p, len);
            if (m == NULL) {
                fprintf(stderr, "threadtime bench: unknown method '%.*s' (see --list)\n", (int)len, p);
                return 2;
            }
            add_method(opt, m);
            p += len + (p[len] == ',');
        }
    } else {
        for (const tt__bench_method *const *t = tables(); *t; t++)
            for (const tt__bench_method *m = *t; m->name; m++)
                add_method(opt, m);
    }

    if (threads) {
        for (const char *p = threads; *p;) {
            char *end;
            long v = strtol(p, &end, 10);
            if (end == p || v < 1 || v > 1024 || (*end != ',' && *end != '\0') ||
                opt->n_thread_counts == MAX_THREAD_COUNTS) {
                fprintf(stderr, "threadtime bench: bad --threads '%s' (e.g. 1,2,4; each 1..1024)\n", threads);
                return 2;
            }
            opt->thread_counts[opt->n_thread_counts++] = (int)v;
            p = end + (*end == ',');
        }
    } else {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        opt->thread_counts[opt->n_thread_counts++] = 1;
        if (cpus > 1)
            opt->thread_counts[opt->n_thread_counts++] = (int)(cpus > 1024 ? 1024 : cpus);
    }
    return -1; /* go on */
}

int tt__cli_bench(int argc, char **argv)
{
    options opt;
    int rc = parse_options(argc, argv, &opt);
    if (rc >= 0)
        return rc;

    int n = opt.n_methods * opt.n_thread_counts;
    result *res = calloc((size_t)n, sizeof *res);
    if (res == NULL) {
        fprintf(stderr, "threadtime bench: out of memory\n");
        return 1;
    }
    int tty = isatty(STDERR_FILENO);
    int k = 0;
    for (int t = 0; t < opt.n_thread_counts; t++) {
        for (int i = 0; i < opt.n_methods; i++, k++) {
            fprintf(stderr, "%s[%d/%d] %s, %d thread%s%s", tty ? "\r\033[K" : "", k + 1, n,
                    opt.methods[i]->name, opt.thread_counts[t], opt.thread_counts[t] > 1 ? "s" : "",
                    tty ? "" : "\n");
            measure(opt.methods[i], opt.thread_counts[t], &opt, &res[k]);
        }
    }
    if (tty)
        fprintf(stderr, "\r\033[K");

    /* Ratios against the baseline of the same thread count. */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (res[j].error_code == 0 && res[i].error_code == 0 && res[j].threads == res[i].threads &&
                strcmp(res[j].method, TT_BENCH_BASELINE) == 0 && res[j].p50 > 0)
                res[i].ratio = res[i].p50 / res[j].p50;

    machine mc;
    describe_machine(&mc);
    if (opt.json)
        print_json(stdout, &mc, &opt, res, n);
    else
        print_table(stdout, &mc, &opt, res, n);
    free(res);
    return 0;
}
