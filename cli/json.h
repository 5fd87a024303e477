/* JSON strings for bench's report, written with stdio. */
#ifndef THREADTIME_CLI_JSON_H
#define THREADTIME_CLI_JSON_H

#include <stdio.h>

/* s as a quoted JSON string, escaped as put_json_utf8 does (out.h): always
 * valid UTF-8, no control character raw. */
void tt__cli_json_string(FILE *out, const char *s);

#endif
