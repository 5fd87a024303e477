/* tt_log_start: the recorder (event.c) with the dump (event_dump.c) as the
 * writer of the exit dump. The only place that knows both, so that neither
 * knows the other: the dump uses the recorder's interface, and the recorder
 * calls at exit whatever writer it was handed. */
#include "internal.h"
#include "event_log.h"

int tt_log_start(const tt_log_options *opts) { return tt__log_start(opts, tt_log_dump); }
