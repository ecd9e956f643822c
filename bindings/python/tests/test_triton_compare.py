"""tri.triton.compare, the comparison a replay makes (no Triton needed): bf16 and fp8 bit
patterns decoded, integers bit for bit, floats within the tolerance of their type (NaN equal to
NaN, an infinity only to itself), strided views read where they lie in their storage, arguments
neither side changed left out, and a byte outside every view that differs caught."""

import numpy as np
import pytest

from tri.triton.compare import Tolerance, compare, decode, elements
from tri.triton.launches import TENSOR, Arg, aligned_copy


def tensor(name, dtype, shape, strides, byte_offset=0, storage=0):
    return Arg(name, TENSOR, "*" + dtype, dtype=dtype, shape=shape, strides=strides, byte_offset=byte_offset,
               storage=storage)


def u8(a):
    return np.ascontiguousarray(a).view(np.uint8).copy()


def test_bf16_and_fp8_bit_patterns_decode():
    values = np.array([1.0, -2.5, 3.140625, 0.0, np.inf], np.float32)
    bf16 = (values.view(np.uint32) >> 16).astype(np.uint16)
    np.testing.assert_array_equal(decode(bf16, "bf16"), values.astype(np.float64))
    e4m3 = decode(np.array([0x38, 0xC0, 0x7E, 0x7F, 0x01, 0x08], np.uint8), "fp8e4nv")
    np.testing.assert_array_equal(e4m3[:3], [1.0, -2.0, 448.0])
    assert np.isnan(e4m3[3]) and e4m3[4] == 2.0 ** -9 and e4m3[5] == 2.0 ** -6
    e5m2 = decode(np.array([0x3C, 0x7B, 0x7C, 0xFE, 0x01], np.uint8), "fp8e5")
    assert list(e5m2[:3]) == [1.0, 57344.0, np.inf] and np.isnan(e5m2[3]) and e5m2[4] == 2.0 ** -16
    assert list(decode(np.array([0xFF, 1], np.uint8), "i8")) == [-1, 1]
    assert list(decode(np.array([0xFF, 1], np.uint8), "u8")) == [255, 1]


def test_a_strided_view_is_read_where_it_lies():
    storage = np.arange(40, dtype=np.float32)
    a = tensor("x", "fp32", (3, 4), (1, 8), byte_offset=8)  # a transposed view from element 2
    got = elements(u8(storage), a).view(np.float32)
    np.testing.assert_array_equal(got, storage[2:2 + 32].reshape(4, 8)[:, :3].T)
    with pytest.raises(ValueError, match="runs past its storage"):
        elements(u8(storage), tensor("x", "fp32", (3, 8), (1, 8), byte_offset=8))


def test_floats_within_their_tolerance_integers_bit_for_bit():
    before = u8(np.zeros(8, np.float32))
    want = np.array([1, 2, 3, 4, np.nan, np.inf, -1e-7, 0], np.float32)
    close = want.copy()
    close[0] += 5e-5  # within atol 1e-5 + rtol 1e-4 * 1
    out = compare([tensor("y", "fp32", (8,), (1,))], [before], [u8(want)], [u8(close)])
    assert out.ok and not out.exact and out.outputs["y"] == f"{out.max_error:.3g}"
    assert out.max_error == pytest.approx(5e-5, 0.1)
    far = close.copy()
    far[5] = np.float32(3.0)  # inf vs 3
    out = compare([tensor("y", "fp32", (8,), (1,))], [before], [u8(want)], [u8(far)])
    assert not out.ok and "y: 1 of 8 fp32 elements off by more than atol 1e-05 + rtol 0.0001" in out.problems[0]
    assert "element [5] is 3.0, Triton's inf" in out.problems[0]
    out = compare([tensor("y", "fp32", (8,), (1,))], [before], [u8(want)], [u8(far)], Tolerance(atol=1e30))
    assert not out.ok  # an infinity is equal only to itself
    ints = np.arange(6, dtype=np.int32)
    off = ints.copy()
    off[4] = 7
    out = compare([tensor("i", "i32", (2, 3), (3, 1))], [u8(np.zeros(6, np.int32))], [u8(ints)], [u8(off)])
    assert out.problems == ["i: 1 of 6 i32 elements differ (compared bit for bit); element [1, 1] is 7, Triton's 4"]


def test_only_changed_arguments_are_compared_and_stray_bytes_are_caught():
    # One storage: an input x (bytes 0..15) and an output y (bytes 32..47); 16..31 and 48..63 are nobody's.
    x, y = tensor("x", "fp32", (4,), (1,)), tensor("y", "fp32", (4,), (1,), byte_offset=32)
    before = u8(np.arange(16, dtype=np.float32))
    want = before.copy()
    want[32:48] = u8(np.full(4, 9, np.float32))
    out = compare([x, y], [before], [want], [want.copy()], against="expected")
    assert out.ok and out.outputs == {"y": "exact"}
    stray = want.copy()
    stray[50] ^= 1
    out = compare([x, y], [before], [want], [stray], against="expected")
    assert out.problems == ["storage of x, y: byte 50 of 64, outside every argument's view, differs (Tri wrote 65, "
                            "expected's is 64)"]


def test_aligned_copies():
    for n in (1, 13, 4096):
        data = np.arange(n, dtype=np.uint8)
        c = aligned_copy(data)
        assert c.ctypes.data % 64 == 0 and c.nbytes == n and (c == data).all()
    assert aligned_copy(np.zeros(0, np.uint8)).nbytes == 0
