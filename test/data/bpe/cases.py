#!/usr/bin/env python3
"""The texts of runc_reference.txt (README.md here): one per line, hex ('-' for the empty text)."""
import random
import sys

shakespeare = open(sys.argv[1], "rb").read()
cases = [
    b"", b"a", b"Hello world", b"First Citizen:", b"Before we proceed any further, hear me speak.",
    shakespeare[:200], shakespeare[1000:1400], b" leading space", b"trailing space ", b"  multiple   spaces  ",
    b" ", b"   ", b"\n", b"\n\n", b"line one\nline two\n", b"\tTab\tand\r\nCRLF", b"12345 67890", b"3.14159, 2024!",
    b"ROMEO:\nBut, soft! what light through yonder window breaks?",
    "é".encode(), "café crème".encode(), "中文".encode(), "😀".encode(), "emoji 🎉 mix 👍🏽".encode(),
    "naïve résumé — “quotes”".encode(), "Ωμέγα".encode(),
    b"\x80", b"\x80\x80\x80\x80\x80\x80", b"a\x80b", b"\xc3", b"\xc3 ", b"\xe4\xb8", b"\xe4\xb8x", b"\xff", b"\xfe\xff",
    b"\xf0\x9f\x98", b"\xc3\xa9\xa9\xa9\xa9\xa9", b"A\xbf\xbf\xbf\xbfB", b"\xf8\x88\x80\x80\x80", b"\xed\xa0\x80",
    b"\x01\x02\x1b[0m\x7f", b"<0x41>", b"<s>", b"</s>", b"\n<s>\n", b"a" * 1000, b"ab " * 300,
    shakespeare[5000:9096],
]
rng = random.Random(1)
for n in (1, 2, 3, 8, 64, 300):
    cases.append(bytes(rng.randrange(1, 256) for _ in range(n)))  # random bytes, no NUL (run.c takes C strings)
for c in cases:
    assert b"\0" not in c
    print(c.hex() if c else "-")
