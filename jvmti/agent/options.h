/* Generated from src/settings.def by `python3 scripts/settings.py --write`;
 * edit the table, not this file (test_settings_docs fails when they differ).
 * The options the JVMTI agent reads: the -javaagent's options that a
 * TT_JVMTI row names, their values, then the row's own. An option's value
 * is its index among VT_OPTIONS[key].values. */
#ifndef VT_OPTIONS_H
#define VT_OPTIONS_H

enum vt_option_key {
    VT_OPT_MODE,
    VT_OPT_EVENTS,
    VT_OPT_COUNT
};

/* mode= */
enum {
    VT_OPT_MODE_EXACT,
    VT_OPT_MODE_MOUNTED,
    VT_OPT_MODE_VALUES
};

/* events= */
enum {
    VT_OPT_EVENTS_ON,
    VT_OPT_EVENTS_OFF,
    VT_OPT_EVENTS_EMPTY,
    VT_OPT_EVENTS_VALUES
};

static const struct vt_option {
    const char *key;
    const char *values; /* "a|b" */
    int dflt;           /* the value when the option is left out */
} VT_OPTIONS[VT_OPT_COUNT] = {
    [VT_OPT_MODE] = {"mode", "exact|mounted", VT_OPT_MODE_EXACT},
    [VT_OPT_EVENTS] = {"events", "on|off|empty", VT_OPT_EVENTS_ON},
};

/* For the message that refuses an option. */
#define VT_OPTIONS_HELP "mode=exact|mounted, events=on|off|empty"

#endif /* VT_OPTIONS_H */
