/* The library works when loaded with dlopen, as the JVM and CPython load
 * it: the initial-exec TLS block must fit the static TLS surplus. */
#include <dlfcn.h>

#include "event_test_util.h"

#ifndef TT_SHARED_LIBRARY
#error "TT_SHARED_LIBRARY must name libthreadtime.so"
#endif

TT_TEST(dlopened_library_records_and_dumps)
{
    void *lib = dlopen(TT_SHARED_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        fprintf(stderr, "dlopen: %s\n", dlerror());
    CHECK(lib != NULL);
    if (!lib)
        return;
    int (*start)(const tt_log_options *) = (int (*)(const tt_log_options *))dlsym(lib, "tt_log_start");
    int (*stop)(void) = (int (*)(void))dlsym(lib, "tt_log_stop");
    int (*dump)(const char *) = (int (*)(const char *))dlsym(lib, "tt_log_dump");
    void (*event)(uint32_t) = (void (*)(uint32_t))dlsym(lib, "tt_event");
    void (*event_text)(uint32_t, const char *) = (void (*)(uint32_t, const char *))dlsym(lib, "tt_event_text");
    CHECK(start && stop && dump && event && event_text);
    CHECK(dlsym(lib, "tt__trace_open") == NULL); /* internals stay hidden */
    if (!(start && stop && dump && event && event_text))
        return;
    tt_log_options o = small_log(64, 4);
    CHECK_OP(start(&o), ==, 0);
    event(41);
    event_text(42, "from dlopen");
    CHECK_OP(stop(), ==, 0);
    char path[256];
    temp_path(path, sizeof path, "dlopen");
    CHECK_OP(dump(path), ==, 0);
    loaded_trace lt;
    CHECK_OP(load_trace(path, &lt), ==, 0);
    unlink(path);
    if (lt.rc == 0) {
        CHECK_OP(lt.t.nthreads, ==, 1);
        tt__trace_event ev;
        CHECK(lt.t.nthreads == 1 && tt__trace_event_at(&lt.t, &lt.t.threads[0], 1, &ev) && ev.id == 42 &&
              ev.text_len == 11);
    }
    free_trace(&lt);
}

TT_TEST_MAIN()
