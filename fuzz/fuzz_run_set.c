/* libFuzzer target: the readers of `threadtime run` recordings on arbitrary
 * bytes (a kept recording, threadtime run -o, as `threadtime dump` parses
 * it; a run's log, from its magic, as threadtime run joins it; anything
 * else as one process's file, as the reporter takes it from its run
 * directory), then every report on what they accepted: text, CSV,
 * JSON and Chrome, each plain and --group. It must never read outside the
 * input, crash, hang or overflow (UBSan), and every report must be valid
 * UTF-8 with no raw control character but the newline; the text and CSV
 * reports without even an escaped one raw inside a line. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "run_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* 1 if b is valid UTF-8 without a control character (C0 but '\n', DEL,
 * C1). */
static int clean(const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = b[i], more = c < 0x80 ? 0 : c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2
                                              : c >= 0xf0 && c <= 0xf4 ? 3 : 9;
        if (more == 9 || n - i <= more)
            return 0;
        uint32_t cp = more ? c & (0x3f >> more) : c;
        for (unsigned k = 1; k <= more; k++) {
            if ((b[i + k] & 0xc0) != 0x80)
                return 0;
            cp = cp << 6 | (b[i + k] & 0x3f);
        }
        if ((more == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (more == 3 && (cp < 0x10000 || cp > 0x10ffff)))
            return 0;
        if ((cp < 0x20 && cp != '\n') || (cp >= 0x7f && cp <= 0x9f))
            return 0;
        i += more + 1;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tt__run_set set = {0};
    const char *why = NULL;
    if (tt__run_set_is(data, size)) {
        if (tt__run_set_parse(data, size, &set, &why) != 0) {
            if (!why || set.nprocs || set.cmd || set.procs)
                abort(); /* refused: with a reason, and nothing kept */
            return 0;
        }
    } else if (size >= 4 && !memcmp(data, "TTLG", 4)) {
        /* A run's log, as threadtime run reads it after the command, with
         * a process's file in the set before it for the join (its first
         * record's image, when the input holds one). */
        size_t skipped = 0;
        /* As threadtime run holds the log it read: a malloc'd copy, which
         * the reader rearranges (one for each read). */
        unsigned char *log = malloc(size), *again = malloc(size);
        if (!log || !again)
            abort();
        memcpy(log, data, size);
        memcpy(again, data, size);
        if (tt__run_set_add_log(&set, log, size, &skipped) != 0 || skipped > size)
            abort(); /* only -ENOMEM */
        size_t before = set.nprocs;
        if (before && tt__run_set_add_log(&set, again, size, &skipped) != 0)
            abort();
        if (set.nprocs != before)
            abort(); /* each image has a file now: none is added twice */
        free(log);
        free(again);
    } else {
        if (tt__run_file_check(data, size, &why) != 0)
            return 0;
        /* As the reporter holds a file it read: its own aligned copy. */
        unsigned char *copy = malloc(size);
        set.procs = malloc(sizeof *set.procs);
        if (!copy || !set.procs)
            abort();
        memcpy(copy, data, size);
        set.procs[0] = (tt__run_proc_buf){copy, size};
        set.nprocs = 1;
    }
    for (int fmt = FMT_TEXT; fmt <= FMT_CSV_SERIES; fmt++)
        for (int group = 0; group <= 1; group++) {
            char *text = NULL;
            size_t len = 0;
            FILE *mem = open_memstream(&text, &len);
            sink *s = mem ? sink_new(mem) : NULL;
            if (!s || tt__run_report(&set, (enum out_format)fmt, group, s) != 0)
                abort(); /* only -ENOMEM, which a fuzz input cannot cause at this size */
            free(s);
            fclose(mem);
            if (!clean((const unsigned char *)text, len))
                abort();
            free(text);
        }
    tt__run_set_free(&set);
    return 0;
}
