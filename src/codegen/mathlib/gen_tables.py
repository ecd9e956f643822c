#!/usr/bin/env python3
"""Recomputes the math library's table of 2/pi bits (trig.c, __tri_two_over_pi) with integer arithmetic
only (pi by Machin's formula), and prints it; with --check, compares it with the table in trig.c
and exits 1 on any difference. Run by CTest (codegen/mathlib_tables)."""
import os
import re
import sys

WORDS = 40  # 32-bit words of 2/pi after the binary point


def atan_inv(n, bits):
    """atan(1/n) * 2^bits, truncated (alternating series on integers)."""
    one = 1 << bits
    total, term, k, sign = 0, one // n, 1, 1
    n2 = n * n
    while term:
        total += sign * (term // k)
        term //= n2
        k += 2
        sign = -sign
    return total


def pi_scaled(bits):
    guard = 64
    p = 16 * atan_inv(5, bits + guard) - 4 * atan_inv(239, bits + guard)
    return p >> guard  # error below one unit of 2^-bits: the guard bits absorb the truncations


def two_over_pi_words(words):
    bits = 32 * words + 64
    # 2/pi * 2^n = 2^(n+1) * 2^bits / (pi * 2^bits)
    p = pi_scaled(bits + 8)
    v = (1 << (32 * words + 1 + bits + 8)) // p
    return [(v >> (32 * (words - 1 - i))) & 0xffffffff for i in range(words)]


def main():
    w = two_over_pi_words(WORDS)
    if len(sys.argv) > 1 and sys.argv[1] == "--check":
        src = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "trig.c")).read()
        m = re.search(r"__tri_two_over_pi\[\d*\]\s*=\s*\{([^}]*)\}", src)
        if not m:
            print("gen_tables.py: no __tri_two_over_pi table in trig.c")
            return 1
        have = [int(t, 16) for t in re.findall(r"0x[0-9a-fA-F]+", m.group(1))]
        if have != w:
            bad = [i for i in range(max(len(w), len(have))) if i >= len(w) or i >= len(have) or w[i] != have[i]]
            print("gen_tables.py: trig.c's __tri_two_over_pi differs from 2/pi at words %s (run gen_tables.py and paste)" % bad[:5])
            return 1
        print("gen_tables.py: __tri_two_over_pi (%d words) matches 2/pi" % len(w))
        return 0
    print("const uint32_t __tri_two_over_pi[%d] = {" % WORDS)
    for i in range(0, WORDS, 6):
        print("    " + ", ".join("0x%08x" % x for x in w[i:i + 6]) + ",")
    print("};")
    return 0


if __name__ == "__main__":
    sys.exit(main())
