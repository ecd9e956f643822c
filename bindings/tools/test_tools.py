#!/usr/bin/env python3
"""Tests of the tools that keep the bindings in step with tri.h: the header reader refuses what
it does not understand, the coverage check names a function added to the header, the tri-sys
generator declares it, and the Julia check catches a wrong ccall. Each works on a copy of
tri.h with one change. Run by CTest as bindings/tools."""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "rust", "tri-sys"))
import triheader  # noqa: E402
import generate  # noqa: E402

with open(triheader.DEFAULT_HEADER, encoding="utf-8") as f:
    HEADER = f.read()

NEW_FUNCTION = ("\n#ifdef __cplusplus\n}\n#endif\n",
                "\nTRI_API tri_result tri_widget_count(const tri_context* context, uint32_t* out_count);\n"
                "\n#ifdef __cplusplus\n}\n#endif\n")


def variant(old: str, new: str) -> str:
    assert old in HEADER, old
    f = tempfile.NamedTemporaryFile("w", suffix=".h", delete=False)
    f.write(HEADER.replace(old, new, 1))
    f.close()
    return f.name


class HeaderReader(unittest.TestCase):
    def test_reads_the_header(self):
        h = triheader.parse()
        self.assertIn("tri_launch", h.functions)
        self.assertEqual(h.functions["tri_launch"].params[-2].ctype, "const tri_arg*")
        self.assertEqual(h.constants["TRI_VERSION_NUMBER"],
                         h.constants["TRI_VERSION_MAJOR"] * 10000 + h.constants["TRI_VERSION_MINOR"] * 100
                         + h.constants["TRI_VERSION_PATCH"])

    def test_refuses_what_it_cannot_read(self):
        bad = [
            ("TRI_API uint32_t tri_version(void);", "TRI_API uint32_t tri_version(int, ...);"),
            ("typedef int32_t tri_result;", "typedef int32_t tri_result;\nenum tri_color { TRI_RED };"),
            ("#define TRI_OK 0", "#define TRI_OK (1 << 2) ? 1 : 0"),
            ("TRI_API uint32_t tri_version(void);", "TRI_API uint32_t tri_version(tri_gadget g);"),
        ]
        for old, new in bad:
            path = variant(old, new)
            with self.assertRaises(triheader.HeaderError, msg=new):
                triheader.parse(path)
            os.unlink(path)


class Checks(unittest.TestCase):
    def run_tool(self, *args):
        return subprocess.run([sys.executable, *args], capture_output=True, text=True)

    def test_a_new_function_is_reported_and_generated(self):
        path = variant(*NEW_FUNCTION)
        try:
            run = self.run_tool(os.path.join(HERE, "coverage.py"), path)
            self.assertEqual(run.returncode, 1)
            for lang in ("rust", "go", "python", "julia"):
                self.assertIn(f"bindings/{lang}: tri_widget_count is declared in tri.h but not bound", run.stderr)
            self.assertIn("pub fn tri_widget_count(context: *const tri_context, out_count: *mut u32) -> tri_result;",
                          generate.generate(path))
            run = self.run_tool(os.path.join(HERE, "..", "rust", "tri-sys", "generate.py"), "--check",
                                "--header", path)
            self.assertEqual(run.returncode, 1)
            self.assertIn("out of date", run.stderr)
        finally:
            os.unlink(path)

    def test_a_changed_signature_fails_the_julia_check(self):
        path = variant("TRI_API tri_result tri_kernel_arg_count(const tri_kernel* kernel, uint32_t* out_count);",
                       "TRI_API tri_result tri_kernel_arg_count(const tri_kernel* kernel, uint64_t* out_count);")
        try:
            run = self.run_tool(os.path.join(HERE, "..", "julia", "check_ccalls.py"), "--header", path)
            self.assertEqual(run.returncode, 1)
            self.assertIn("tri_kernel_arg_count: argument out_count is uint64_t* in tri.h", run.stderr)
        finally:
            os.unlink(path)

    def test_the_current_header_passes(self):
        for tool in ("coverage.py", "../julia/check_ccalls.py"):
            run = self.run_tool(os.path.join(HERE, tool))
            self.assertEqual(run.returncode, 0, run.stderr)


if __name__ == "__main__":
    unittest.main()
