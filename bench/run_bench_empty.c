/* The floor of preloading anything (make bench-run-procs): a library that
 * holds one empty function and runs nothing at load, preloaded in
 * libthreadtime_run.so's place. What it costs a process is the loader's
 * alone. */
void tt_bench_empty(void);
void tt_bench_empty(void) {}
