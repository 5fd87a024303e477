/* libFuzzer target: the trace reader on arbitrary bytes. It must never
 * read outside the input, never crash or hang, and when it accepts a file
 * every event it yields must point inside the input. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "event_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tt__trace t;
    if (tt__trace_open(&t, data, size) == 0) {
        for (uint32_t i = 0; i < t.nthreads; i++) {
            const tt__trace_thread *th = &t.threads[i];
            tt__trace_event ev;
            for (uint64_t k = 0; k < th->head - th->first; k++) {
                if (!tt__trace_event_at(&t, th, k, &ev) || !ev.text)
                    continue;
                const uint8_t *p = (const uint8_t *)ev.text;
                if (p < data || p + ev.text_len > data + size)
                    abort();
            }
        }
    }
    tt__trace_close(&t);
    return 0;
}
