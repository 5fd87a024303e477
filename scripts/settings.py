#!/usr/bin/env python3
"""threadtime's settings table (src/settings.def) for what is not C.

  settings.py --write [ROOT]   writes docs/settings.md and the JVMTI agent's
                               options (jvmti/agent/options.h) from the table
  settings.py --check [ROOT]   fails (exit 1, one line per finding) if:
      - docs/settings.md or jvmti/agent/options.h is not what --write would
        write;
      - C, Java or Python outside the tests reads a THREADTIME_* variable by
        its name instead of through the table (C: src/settings.h), or Python
        reads one the table has no row for;
      - a Markdown file names a THREADTIME_* variable the table has no row
        for, or shows NAME=VALUE with a value its row does not allow.

The C readers are built from the same file (src/settings.c); the tests
test_settings (C) and AgentSettingsTest (Java) hold them to it.
"""
import re
import subprocess
import sys
from pathlib import Path

DEF = Path("src/settings.def")
DOC = Path("docs/settings.md")
JVMTI_H = Path("jvmti/agent/options.h")
WHO = {
    "LIB": "libthreadtime (every program linked with it, the JAR's and the wheel's natives included)",
    "RUN": "`threadtime run`'s preload library, in each process of the command",
    "CLI": "the `threadtime` command",
    "PYTHON": "the Python package",
    "BUILD": "python/setup.py, when the wheel is built",
}
# Variables only the tests and the Makefile hand to the tests: never read by
# threadtime itself.
TEST_ONLY = {"THREADTIME_EVENT_DEMO", "THREADTIME_WHEEL_DIR", "THREADTIME_WHEEL_RUN"}


def _args(text, start):
    """The arguments of the call whose '(' is at text[start], and the index
    after its ')': an argument made only of string literals as the one
    string C makes of them, any other as written."""
    args, depth, i, begin = [], 0, start + 1, start + 1
    while True:
        c = text[i]
        if c == '"':
            i += 1
            while text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c == "(":
            depth += 1
        elif c == ")" and depth:
            depth -= 1
        elif c in ",)" and not depth:
            raw = text[begin:i].strip()
            if re.fullmatch(r'(?:"(?:[^"\\]|\\.)*"\s*)+', raw):
                raw = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', raw)).replace('\\"', '"')
            args.append(raw)
            if c == ")":
                return args, i + 1
            begin = i + 1
        i += 1


SHAPES = {
    "TT_ENV_UINT": ("id", "name", "min", "max", "default", "on_bad", "who", "doc"),
    "TT_ENV_MODE": ("id", "name", "default", "on_bad", "who", "doc"),
    "TT_ENV_ENUM": ("id", "name", "values", "default", "on_bad", "who", "doc"),
    "TT_ENV_PATH": ("id", "name", "who", "doc"),
    "TT_ENV_TEXT": ("id", "name", "values", "default", "who", "doc"),
    "TT_AGENT": ("key", "type", "range", "default", "when", "doc"),
    "TT_JVMTI": ("key", "extra", "extra_doc"),
}


def parse(root):
    """(environment rows, agent rows, JVMTI agent rows) of src/settings.def,
    each a dict; a JVMTI agent row has its agent row's fields, and "values":
    the agent row's values, then its own."""
    text = (root / DEF).read_text()
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    env, agent, jvmti = [], [], []
    for m in re.finditer(r"^(TT_ENV_[A-Z]+|TT_AGENT|TT_JVMTI)\(", text, re.M):
        args, _ = _args(text, m.end() - 1)
        shape = SHAPES[m.group(1)]
        if len(args) != len(shape):
            raise SystemExit(f"{DEF}: {m.group(1)} with {len(args)} arguments, not {len(shape)}: {args}")
        row = dict(zip(shape, args))
        row["type"] = row.get("type") or m.group(1)[len("TT_ENV_"):].lower()
        {"TT_AGENT": agent, "TT_JVMTI": jvmti}.get(m.group(1), env).append(row)
    for row in env:
        if row["type"] == "mode":
            row["min"], row["max"] = "0600", "0777"
        bad = row.get("on_bad", "")
        use = re.fullmatch(r'USE\("(.*)"\)', bad)
        row["fallback"] = use.group(1) if use else row.get("default")
    keys = {r["key"]: r for r in agent}
    for row in jvmti:
        shared = keys.get(row["key"])
        if shared is None or shared["type"] != "enum":
            raise SystemExit(f"{DEF}: TT_JVMTI(\"{row['key']}\") names no enum TT_AGENT row")
        row.update({k: v for k, v in shared.items() if k not in row})
        row["values"] = shared["range"].split("|") + (row["extra"].split("|") if row["extra"] else [])
        if len(set(row["values"])) != len(row["values"]) or (row["extra"] == "") != (row["extra_doc"] == ""):
            raise SystemExit(f"{DEF}: TT_JVMTI(\"{row['key']}\"): a value twice, or extra values without a doc")
    return env, agent, jvmti


def allowed(row, value):
    """Whether value is one the row's reader reads as it is."""
    t = row["type"]
    if t == "uint":
        return value.isdigit() and int(row["min"]) <= int(value) <= int(row["max"])
    if t == "mode":
        return re.fullmatch(r"[0-7]+", value) is not None and (int(value, 8) == 0 or (
            int(value, 8) & 0o600 == 0o600 and int(value, 8) <= 0o777))
    if t == "enum":
        return value in row["values"].split("|")
    return True


def _values(row):
    t = row["type"]
    if t == "uint":
        return f"{int(row['min']):,} to {int(row['max']):,}"
    if t == "mode":
        return "octal permission bits with the owner's read and write, 0600 to 0777"
    if t == "enum":
        return ", ".join(f"`{v}`" for v in row["values"].split("|"))
    if t == "path":
        return "a path"
    return row["values"]


def _default(row):
    d = row.get("default", "")
    if row["type"] == "uint":
        return f"{int(d):,}"
    if row["type"] in ("mode", "enum"):
        return f"`{d}`"
    return d or "none"


def _on_bad(row):
    bad = row.get("on_bad")
    if bad is None:
        return ""
    if bad == "REFUSE":
        return "refused: the start fails (-EINVAL) with one line on stderr"
    return f"read as `{row['fallback']}`, silently" if row["fallback"] != row["default"] or row["type"] != "uint" \
        else "read as the default, silently"


def _cell(text):
    return text.replace("|", "\\|")


def render(root):
    env, agent, jvmti = parse(root)
    out = [
        "# Settings",
        "",
        "<!-- Generated from src/settings.def by `python3 scripts/settings.py --write`; edit the table, not this "
        "page (the test test_settings_docs fails when they differ). -->",
        "",
        "Every `THREADTIME_*` environment variable threadtime reads, and every",
        "option of the `-javaagent`, one row each in one table,",
        "[src/settings.def](../src/settings.def). The C readers are built from it",
        "(src/settings.c): a value outside its range is refused with one line that",
        "names it, or read as the fallback shown, as each row says. An unset or",
        "empty variable is its default. A setuid, setgid or file-capability",
        "program reads none of them ([security.md](security.md)).",
        "",
    ]
    for who, title in WHO.items():
        rows = [r for r in env if r["who"] == who]
        if not rows:
            continue
        out += [f"## Read by {title}", ""]
        if any("on_bad" in r for r in rows):
            out += ["| variable | values | default | a bad value is | what it does |", "|---|---|---|---|---|"]
            out += [f"| `{r['name']}` | {_cell(_values(r))} | {_cell(_default(r))} | {_on_bad(r) or '-'} | "
                    f"{_cell(r['doc'])} |" for r in rows]
        else:
            out += ["| variable | values | default | what it does |", "|---|---|---|---|"]
            out += [f"| `{r['name']}` | {_cell(_values(r))} | {_cell(_default(r))} | {_cell(r['doc'])} |"
                    for r in rows]
        out.append("")
    out += [
        "## The `-javaagent`'s options",
        "",
        "`-javaagent:threadtime.jar=OPTION=VALUE,...` at start (`start`), or",
        "`threadtime attach PID OPTION=VALUE,...` for a running JVM (`attach`); each",
        "at most once. A value outside its range stops the JVM before `main` with",
        "one line (at start) or is refused by `threadtime attach`.",
        "",
        "| option | values | default | when | what it does |",
        "|---|---|---|---|---|",
    ]
    for r in agent:
        rng = r["range"]
        if r["type"] == "enum":
            rng = ", ".join(f"`{v}`" for v in rng.split("|"))
        elif r["type"] == "uint":
            lo, hi = rng.split("..")
            rng = f"{int(lo):,} to {int(hi):,}"
        else:
            rng = f"`{rng}`"
        default = f"`{r['default']}`" if r["default"] else "-"
        out.append(f"| `{r['key']}` | {_cell(rng)} | {default} | {r['when']} | {_cell(r['doc'])} |")
    out += [
        "",
        "## The JVMTI agent's options",
        "",
        "`-agentpath:libthreadtime_vthreads.so=OPTION=VALUE,...` at start, or",
        "`jcmd PID JVMTI.agent_load /path/to/libthreadtime_vthreads.so OPTION=VALUE,...`",
        "for a running JVM ([jvmti/README.md](../jvmti/README.md)); each at most once.",
        "They are the `-javaagent`'s options of the same name, with the same values",
        "and default, and values of the JVMTI agent's own after them: its parser is",
        "generated from the same rows ([jvmti/agent/options.h](../jvmti/agent/options.h)).",
        "A value outside them stops the JVM (at start) or fails the load with one",
        "line, `threadtime-vthreads: unknown or conflicting option ...`.",
        "",
        "| option | values | default | what it does |",
        "|---|---|---|---|",
    ]
    for r in jvmti:
        doc = r["doc"] + (f"; {r['extra_doc']}" if r["extra_doc"] else "")
        values = ", ".join(f"`{v}`" for v in r["values"])
        out.append(f"| `{r['key']}` | {values} | `{r['default']}` | {_cell(doc)} |")
    out.append("")
    return "\n".join(out)


def _ident(text):
    return re.sub(r"[^A-Z0-9]", "_", text.upper())


def render_jvmti(root):
    """jvmti/agent/options.h: the JVMTI agent's options as C."""
    _, _, jvmti = parse(root)
    out = [
        "/* Generated from src/settings.def by `python3 scripts/settings.py --write`;",
        " * edit the table, not this file (test_settings_docs fails when they differ).",
        " * The options the JVMTI agent reads: the -javaagent's options that a",
        " * TT_JVMTI row names, their values, then the row's own. An option's value",
        " * is its index among VT_OPTIONS[key].values. */",
        "#ifndef VT_OPTIONS_H",
        "#define VT_OPTIONS_H",
        "",
        "enum vt_option_key {",
    ]
    out += [f"    VT_OPT_{_ident(r['key'])}," for r in jvmti]
    out += ["    VT_OPT_COUNT", "};", ""]
    for r in jvmti:
        key = _ident(r["key"])
        out.append(f"/* {r['key']}= */")
        out.append("enum {")
        out += [f"    VT_OPT_{key}_{_ident(v)}," for v in r["values"]]
        out += [f"    VT_OPT_{key}_VALUES", "};", ""]
    out += [
        "static const struct vt_option {",
        "    const char *key;",
        "    const char *values; /* \"a|b\" */",
        "    int dflt;           /* the value when the option is left out */",
        "} VT_OPTIONS[VT_OPT_COUNT] = {",
    ]
    for r in jvmti:
        key = _ident(r["key"])
        out.append(f"    [VT_OPT_{key}] = {{\"{r['key']}\", \"{'|'.join(r['values'])}\", "
                   f"VT_OPT_{key}_{_ident(r['default'])}}},")
    out += ["};", ""]
    help_text = ", ".join(f"{r['key']}={'|'.join(r['values'])}" for r in jvmti)
    out += ["/* For the message that refuses an option. */", f"#define VT_OPTIONS_HELP \"{help_text}\"", "",
            "#endif /* VT_OPTIONS_H */", ""]
    return "\n".join(out)


GENERATED = {DOC: render, JVMTI_H: render_jvmti}


def _files(root, *patterns):
    """The files of the checkout matching patterns; without git (a copy of
    the tree), every such file outside build directories."""
    if (root / ".git").exists():
        names = subprocess.run(["git", "-C", str(root), "ls-files", "-z", *patterns], capture_output=True,
                               text=True, check=True).stdout.split("\0")
        return [root / n for n in names if n and (root / n).is_file()]
    return [p for pat in patterns for p in root.rglob(pat)
            if not any(part.startswith(("build", ".")) for part in p.relative_to(root).parts[:-1])]


def _is_test(path, root):
    rel = path.relative_to(root).parts
    return "tests" in rel or "test" in rel or rel[0] in ("fuzz", "bench")


def check(root):
    env, _, _ = parse(root)
    rows = {r["name"]: r for r in env}
    problems = []
    for path, make in GENERATED.items():
        if not (root / path).is_file() or (root / path).read_text() != make(root):
            problems.append(f"{path} is not what src/settings.def makes of it: run python3 scripts/settings.py --write")
    c_read = re.compile(r'\b(?:getenv|secure_getenv|tt__env)\s*\(\s*"(THREADTIME_[A-Z0-9_]+)"')
    java_read = re.compile(r'\bSystem\.getenv\s*\(\s*"(THREADTIME_[A-Z0-9_]+)"')
    py_read = re.compile(r'(?:environ\.get|getenv|environ\[|environ\.setdefault)\s*\(?\s*["\'](THREADTIME_[A-Z0-9_]+)'
                         r'|["\'](THREADTIME_[A-Z0-9_]+)["\']\s+(?:not\s+)?in\s+os\.environ')
    for path in _files(root, "*.c", "*.h", "*.java", "*.py"):
        if _is_test(path, root):
            continue
        text = path.read_text(errors="replace")
        rel = path.relative_to(root)
        if path.suffix in (".c", ".h"):
            for m in c_read.finditer(text):
                problems.append(f"{rel}: reads {m.group(1)} by name; read it through src/settings.h")
        elif path.suffix == ".java":
            for m in java_read.finditer(text):
                if m.group(1) not in rows:
                    problems.append(f"{rel}: reads {m.group(1)}, which src/settings.def has no row for")
        else:
            for m in py_read.finditer(text):
                name = m.group(1) or m.group(2)
                if name not in rows:
                    problems.append(f"{rel}: reads {name}, which src/settings.def has no row for")
                elif rows[name]["who"] not in ("PYTHON", "BUILD"):
                    problems.append(f"{rel}: reads {name}, whose row says only {rows[name]['who']} reads it")
    named = re.compile(r"THREADTIME_[A-Z0-9_]*[A-Z0-9](?:=([a-z0-9_]+))?")
    for path in _files(root, "*.md"):
        rel = path.relative_to(root)
        for n, line in enumerate(path.read_text().splitlines(), 1):
            for m in named.finditer(line):
                name = m.group(0).split("=")[0]
                if name in TEST_ONLY:
                    continue
                if name not in rows:
                    problems.append(f"{rel}:{n}: {name} is no setting of src/settings.def")
                elif m.group(1) is not None and not allowed(rows[name], m.group(1)):
                    problems.append(f"{rel}:{n}: {name}={m.group(1)}, which its row does not allow")
    return problems


def main(argv):
    if len(argv) not in (2, 3) or argv[1] not in ("--write", "--check"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    root = Path(argv[2] if len(argv) == 3 else Path(__file__).resolve().parent.parent)
    if argv[1] == "--write":
        for path, make in GENERATED.items():
            (root / path).write_text(make(root))
        return 0
    problems = check(root)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
