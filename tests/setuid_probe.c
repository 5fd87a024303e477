/* Installed setuid root by test_event_files and run by an unprivileged
 * user: starts the log with every setting left to the environment, records
 * one event and exits normally (which writes an exit dump, if one was set). */
#include "threadtime/threadtime.h"

int main(void)
{
    int rc = tt_log_start(NULL);
    tt_event(1);
    return rc == 0 ? 0 : 3;
}
