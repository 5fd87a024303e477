/* A program outside the project, built against the installed package. */
#include <threadtime/threadtime.h>
#include <stdio.h>

int main(void)
{
    tt_times t;
    int rc = tt_self_times(&t);
    printf("threadtime %s: rc=%d user+system==total: %d\n", tt_version(), rc,
           t.user_ns + t.system_ns == t.total_ns);
    return rc == 0 && t.user_ns + t.system_ns == t.total_ns ? 0 : 1;
}
