/* JSON strings for the command's reports written with stdio (bench, run);
 * the dump's sinks have their own writer (dump_sink.c), which buffers. */
#ifndef THREADTIME_CLI_JSON_H
#define THREADTIME_CLI_JSON_H

#include <stdio.h>

/* s as a quoted JSON string: quote and backslash escaped, control
 * characters (C0 and DEL) as \u00XX, so none reaches a terminal raw. */
void tt_cli_json_string(FILE *out, const char *s);

#endif
