/* The CSV format: one row per event, RFC 4180 quoting, control characters
 * escaped (out.c). */
#include <string.h>

#include "dump.h"

void csv_header(sink *s)
{
    put_cstr(s, "tid,thread,vthread,index,t_ns,delta_ns,kind,id,name,value,text,cpu_user_ns,cpu_system_ns,thrown,vthread_name\n");
}

void csv_thread(sink *row, const tt__trace_thread *th)
{
    row->f = NULL;
    row->used = 0;
    put_u64(row, th->tid);
    put(row, ",", 1);
    size_t name_len;
    const char *name = tt__trace_thread_name(th, &name_len);
    put_csv_str(row, name, name_len);
    put(row, ",", 1);
}

void csv_event(sink *s, const tt__trace *t, const sink *row, const tt__trace_event *ev, int64_t delta,
               uint64_t vthread)
{
    put(s, row->buf, row->used);
    if (vthread)
        put_u64(s, vthread);
    put(s, ",", 1);
    put_u64(s, ev->index);
    put(s, ",", 1);
    put_i64(s, tt__trace_rebase(t, ev));
    put(s, ",", 1);
    put_i64(s, delta);
    put(s, ",", 1);
    put_cstr(s, tt__trace_kind_name(ev->kind));
    put(s, ",", 1);
    put_u64(s, ev->id);
    put(s, ",", 1);
    size_t len;
    const char *name = tt__trace_name_of(t, ev->id, &len);
    if (name && !tt__kind_is_marker(ev->kind))
        put_csv_str(s, name, len);
    put(s, ",", 1);
    int64_t measured;
    if (ev->kind == TT__KIND_VALUE || ev->kind == TT__KIND_RUN_WAIT) /* a run_wait's: the wait so far, ns */
        put_u64(s, ev->p0);
    else if (tt__event_measured(ev, &measured)) /* the kind says what it counts */
        put_i64(s, measured);
    put(s, ",", 1);
    if (ev->text)
        put_csv_str(s, ev->text, ev->text_len);
    put(s, ",", 1);
    if (tt__event_has_cpu(ev))
        put_u64(s, ev->p0);
    put(s, ",", 1);
    if (tt__event_has_cpu(ev))
        put_u64(s, ev->p1);
    put(s, ",", 1);
    if (ev->thrown)
        put(s, "1", 1);
    put(s, ",", 1);
    /* Last, so that a reader by position keeps its columns (format 1.2). */
    const char *vname = vthread ? tt__trace_vthread_name(t, vthread, &len) : NULL;
    if (vname)
        put_csv_str(s, vname, len);
    put(s, "\n", 1);
}
