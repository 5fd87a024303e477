/* JSON strings for bench's stdio report, through the output layer's
 * escaping (out.c), the one every report of the command uses. */
#include "json.h"
#include "out.h"

void tt__cli_json_string(FILE *out, const char *s)
{
    static sink k; /* bench prints from one thread */
    k.f = out;
    k.used = 0;
    put_json_utf8(&k, s, strlen(s));
    sink_flush(&k);
}
