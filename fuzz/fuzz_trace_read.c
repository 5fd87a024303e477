/* libFuzzer target: the trace reader on arbitrary bytes, then every
 * output of `threadtime dump` on what it accepted (text, CSV, JSON, Chrome,
 * --summary as text and JSON), written to a sink without a file. It must
 * never read outside the input, never crash, hang or overflow (UBSan), and
 * when it accepts a file every event, name and summary entry it yields
 * must point inside the input (names: valid UTF-8, each id once, in
 * order). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "dump.h"
#include "event_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void inside(const uint8_t *data, size_t size, const void *p, size_t len)
{
    const uint8_t *b = p;
    if (b < data || len > size || b > data + size - len)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tt__trace t;
    if (tt__trace_open(&t, data, size) == 0) {
        for (uint32_t i = 0; i < t.nnames; i++) {
            const tt__trace_name *n = &t.names[i];
            inside(data, size, n->text, n->len);
            if (!n->len || n->len > TT_EVENT_NAME_MAX || !tt__utf8_valid(n->text, n->len) ||
                (i && n->id <= t.names[i - 1].id))
                abort();
        }
        /* Thread names: valid UTF-8, each (namespace, id) once, in order,
         * virtual threads' last; a thread's whole name is one of them. */
        for (uint32_t i = 0; i < t.ntnames; i++) {
            const tt__trace_name *n = &t.tnames[i], *p = i ? &t.tnames[i - 1] : NULL;
            inside(data, size, n->text, n->len);
            if (!n->len || n->len > TT_EVENT_NAME_MAX || !tt__utf8_valid(n->text, n->len) ||
                (n->ns != TT__NAMES_OS_THREAD && n->ns != TT__NAMES_VTHREAD) ||
                (p && (p->ns > n->ns || (p->ns == n->ns && p->id >= n->id))))
                abort();
        }
        if (t.nvnames > t.ntnames)
            abort();
        for (uint32_t i = 0; i < t.nthreads; i++)
            if (t.threads[i].full_name)
                inside(data, size, t.threads[i].full_name, t.threads[i].full_len);
        for (uint32_t i = 0; i < t.nsummary; i++) {
            if (i && t.summary[i].id <= t.summary[i - 1].id)
                abort();
            (void)tt__trace_dur_ns(&t, t.summary[i].sums.total);
            (void)tt__trace_dur_ns(&t, t.summary[i].sums.max);
        }
        for (uint32_t i = 0; i < t.nthreads; i++) {
            const tt__trace_thread *th = &t.threads[i];
            tt__trace_event ev;
            for (uint64_t k = 0; k < th->head - th->first; k++) {
                if (!tt__trace_event_at(&t, th, k, &ev))
                    continue;
                size_t len;
                const char *name = tt__trace_name_of(&t, ev.id, &len);
                if (name)
                    inside(data, size, name, len);
                if (ev.text)
                    inside(data, size, ev.text, ev.text_len);
            }
        }
        /* f NULL: the sink formats everything and writes nothing. */
        static sink s;
        for (int fmt = FMT_TEXT; fmt <= FMT_CHROME; fmt++) {
            s.used = 0;
            if (dump_write(&s, &t, (enum out_format)fmt, 0) != 0)
                abort(); /* only -ENOMEM, which a fuzz input cannot cause at this size */
        }
        if (dump_write(&s, &t, FMT_TEXT, 1) != 0 || dump_write(&s, &t, FMT_JSON, 1) != 0)
            abort();
    }
    tt__trace_close(&t);
    return 0;
}
