/* threadtime: the command line tool. Each subcommand lives in its own file. */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "threadtime/threadtime.h"

int tt__cli_dump(int argc, char **argv);
int tt__cli_attach(int argc, char **argv);
int tt__cli_run(int argc, char **argv);

typedef struct subcommand {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} subcommand;

static const subcommand subcommands[] = {
    {"bench", tt__cli_bench, "measure every CPU-time and event method side by side"},
    {"dump", tt__cli_dump, "print a trace file as text, CSV, JSON or Chrome trace JSON"},
    {"attach", tt__cli_attach, "add or remove probes in a running JVM, or dump its trace"},
    {"run", tt__cli_run, "run a command and report the CPU time of each of its threads"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: threadtime <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
        fprintf(out, "  %-8s %s\n", subcommands[i].name, subcommands[i].summary);
    fprintf(out, "  %-8s %s\n", "version", "print the library version");
    fprintf(out, "\n'threadtime <command> --help' describes a command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0) {
        printf("threadtime %s\n", tt_version());
        return 0;
    }
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
        if (strcmp(argv[1], subcommands[i].name) == 0)
            return subcommands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "threadtime: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
