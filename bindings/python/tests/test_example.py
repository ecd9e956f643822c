"""Runs the example program (examples/vector_add_softmax.py) on the CPU and the interpreter, so
pytest checks what the README shows."""

import vector_add_softmax as example

import tri


def test_vector_add_and_softmax_on_the_cpu(ctx):
    example.vector_add(ctx, "cpu", 100_003)
    example.softmax(ctx, "cpu", 64, 1000)


def test_vector_add_and_softmax_on_the_interpreter(ctx):
    example.vector_add(ctx, "interp", 2049)
    example.softmax(ctx, "interp", 3, 777)


def test_the_error_cases_name_the_argument(ctx):
    wrong = example.wrong_argument(ctx)
    assert "argument 0 (%x) of kernel @vector_add is ptr<f32>" in wrong.message
    assert str(wrong).startswith("TRI_ERROR_LAUNCH_ARGS: ")
    short = example.too_short(ctx)
    assert short.code == tri.ErrorCode.RUNTIME
    assert "vector_add.tri:21:9" in short.message
    assert "argument %x (extent 200 bytes)" in short.message


def test_the_whole_program_runs(capsys):
    assert example.main() == 0
    assert "softmax (cpu): 256 x 1000 matches NumPy" in capsys.readouterr().out
