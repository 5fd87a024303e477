// The public headers compile as C++ and link from C++.
#include "threadtime/threadtime.h"

#include <cstdio>
#include <cstring>

int main()
{
    tt_times t{};
    int failed = 0;
    if (tt_self_times(&t) != 0 || t.user_ns + t.system_ns != t.total_ns)
        failed++;
    if (tt_self_total_ns() < 0)
        failed++;
    if (std::strcmp(tt_method_name(TT_METHOD_PROCFS), "procfs") != 0)
        failed++;
    std::printf("%d passed, %d failed\n", 3 - failed, failed);
    return failed ? 1 : 0;
}
