"""Thread names as a program and the kernel can hand them over, and the
truths the reports of `threadtime run` are held to: the escaping rule of
cli/out.h for text and CSV, written from its description, and what a
terminal may get. For test_run_report.py and test_run.py."""

# Names as the kernel can hand them over: escape sequences, a newline and
# a tab, CSV's delimiters, C1 controls in UTF-8 and raw, a multi-byte
# character cut by the kernel's 15-byte limit, bytes that are not UTF-8.
HOSTILE = [b"\x1b]0;pwn\x07\\", b"tab\tnl\nq\"c,", b"\xc2\x9bcsi\x9b\x7f",
           b"a" + "\u65e5\u672c\u8a9e\u65e5".encode() + "\u672c".encode()[:2], b"ok-\xff\xfe", b"caf\xc3\xa9"]
HOSTILE_EXE = b"/bin/\x1b[2J\xc2\x9b\nexe\xe6\x97"



def escaped(raw):
    """The text/CSV rule of out.h, written from its description: valid
    UTF-8 kept but for control characters and the backslash, which become
    \\xNN per byte, as does every byte that is not part of valid UTF-8."""
    out = []
    for ch in raw.decode("utf-8", "surrogateescape"):
        o = ord(ch)
        if 0xdc80 <= o <= 0xdcff:
            out.append(f"\\x{o - 0xdc00:02x}")
        elif o < 0x20 or 0x7f <= o <= 0x9f or ch == "\\":
            out.extend(f"\\x{b:02x}" for b in ch.encode())
        else:
            out.append(ch)
    return "".join(out)


def terminal_text(out):
    """What a terminal would get from the bytes out: (the text, what is
    wrong with it). Right: valid UTF-8, and no control character but the
    newline (no ESC, no C1 such as CSI, raw or in UTF-8)."""
    try:
        text = out.decode("utf-8")
    except UnicodeDecodeError as e:
        return "", [f"not UTF-8: {e}"]
    return text, [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f]
