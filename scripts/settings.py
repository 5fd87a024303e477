#!/usr/bin/env python3
"""threadtime's settings table (src/settings.def) for what is not C.

  settings.py --write [ROOT]   writes docs/settings.md from the table
  settings.py --check [ROOT]   fails (exit 1, one line per finding) if:
      - docs/settings.md is not what --write would write;
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
}


def parse(root):
    """(environment rows, agent rows) of src/settings.def, each a dict."""
    text = (root / DEF).read_text()
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    env, agent = [], []
    for m in re.finditer(r"^(TT_ENV_[A-Z]+|TT_AGENT)\(", text, re.M):
        args, _ = _args(text, m.end() - 1)
        shape = SHAPES[m.group(1)]
        if len(args) != len(shape):
            raise SystemExit(f"{DEF}: {m.group(1)} with {len(args)} arguments, not {len(shape)}: {args}")
        row = dict(zip(shape, args))
        row["type"] = row.get("type") or m.group(1)[len("TT_ENV_"):].lower()
        (agent if m.group(1) == "TT_AGENT" else env).append(row)
    for row in env:
        if row["type"] == "mode":
            row["min"], row["max"] = "0600", "0777"
        bad = row.get("on_bad", "")
        use = re.fullmatch(r'USE\("(.*)"\)', bad)
        row["fallback"] = use.group(1) if use else row.get("default")
    return env, agent


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
    env, agent = parse(root)
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
    out.append("")
    return "\n".join(out)


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
    env, _ = parse(root)
    rows = {r["name"]: r for r in env}
    problems = []
    if not (root / DOC).is_file() or (root / DOC).read_text() != render(root):
        problems.append(f"{DOC} is not what src/settings.def makes of it: run python3 scripts/settings.py --write")
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
        (root / DOC).write_text(render(root))
        return 0
    problems = check(root)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
