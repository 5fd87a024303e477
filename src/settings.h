/* The environment's settings, one row each in settings.def: their ids,
 * their descriptions and one reader per type. Every THREADTIME_* variable
 * the C code reads goes through these (never installed). */
#ifndef TT_SETTINGS_H
#define TT_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

/* TT__SET_RING, ...: one id per row a C reader can read (TEXT rows and the
 * agent's options have none). */
typedef enum tt__setting_id {
#define TT_ENV_UINT(id, ...) TT__SET_##id,
#define TT_ENV_MODE(id, ...) TT__SET_##id,
#define TT_ENV_ENUM(id, ...) TT__SET_##id,
#define TT_ENV_PATH(id, ...) TT__SET_##id,
#define TT_ENV_TEXT(...)
#define TT_AGENT(...)
#define TT_JVMTI(...)
#include "settings.def"
#undef TT_ENV_UINT
#undef TT_ENV_MODE
#undef TT_ENV_ENUM
#undef TT_ENV_PATH
#undef TT_ENV_TEXT
#undef TT_AGENT
#undef TT_JVMTI
    TT__SET_COUNT
} tt__setting_id;

typedef enum tt__setting_type {
    TT__SETTING_UINT,
    TT__SETTING_MODE,
    TT__SETTING_ENUM,
    TT__SETTING_PATH,
} tt__setting_type;

typedef struct tt__setting {
    const char *name; /* "THREADTIME_RING" */
    tt__setting_type type;
    uint64_t min, max, dflt; /* UINT and MODE */
    const char *values;      /* ENUM: "a|b|c" */
    const char *dflt_value;  /* ENUM: one of values */
    int refuse;              /* 1: a bad value is refused; 0: read as the fallback */
    const char *fallback;    /* ENUM: what a bad value reads as (NULL: the default) */
    const char *text;        /* "NAME: what it does; values: its range, default D" */
} tt__setting;

extern const tt__setting tt__settings[TT__SET_COUNT];

/* The readers. Each reads its row's variable with tt__env (nothing under
 * setuid, setgid or file capabilities) and answers:
 *   1        unset or empty: *out is the default;
 *   0        *out is the value read;
 *   -EINVAL  a value outside the row's range. A refusing row prints one line
 *            on stderr (the variable, the value shown escaped, the row's
 *            text) and leaves *out alone; another row sets *out to its
 *            fallback and prints nothing.
 * tt__setting_uint reads UINT and MODE rows; tt__setting_enum answers the
 * index of the value in the row's values. */
int tt__setting_uint(tt__setting_id id, uint64_t *out);
int tt__setting_enum(tt__setting_id id, unsigned *out);

/* The index of the n bytes at v among values ("a|b|c"), -1 if they are
 * none of them. The JVMTI agent parses its options (jvmti/agent/options.h)
 * with it too. */
int tt__setting_value_index(const char *values, const char *v, size_t n);

/* A PATH row's value, NULL when unset or empty. */
const char *tt__setting_path(tt__setting_id id);

/* 0 if mode is permission bits a MODE setting allows: the owner's read and
 * write (a crash file is mapped read-write), no setuid, setgid or sticky
 * bit; -EINVAL if not. */
int tt__file_mode_check(unsigned mode);

#endif /* TT_SETTINGS_H */
