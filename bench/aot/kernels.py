#!/usr/bin/env python3
"""Writes N distinct kernels k0 .. k{N-1} (out = x * i + y over 1024 f32) as one IR file, for
bench/aot/first_launch.c: each has code of its own in a package, so a program that launches all
of them loads N kernels.  usage: kernels.py N OUT.tri"""
import sys

n, out = int(sys.argv[1]), sys.argv[2]
with open(out, "w") as f:
    for i in range(n):
        f.write(f"""kernel @k{i}(%x: ptr<f32>, %y: ptr<f32>, %out: ptr<f32>, %n: i32) constexpr(BLOCK: i32 = 1024) {{
  %pid = program_id[axis=0] : i32
  %bs = const[value=BLOCK] : i32
  %start = mul %pid, %bs : i32
  %range = arange[start=0, end=BLOCK] : <BLOCK x i32>
  %startv = splat %start : <BLOCK x i32>
  %offs = add %startv, %range : <BLOCK x i32>
  %nv = splat %n : <BLOCK x i32>
  %mask = cmp[pred=slt] %offs, %nv : <BLOCK x i1>
  %xb = splat %x : <BLOCK x ptr<f32>>
  %xp = addptr %xb, %offs : <BLOCK x ptr<f32>>
  %yb = splat %y : <BLOCK x ptr<f32>>
  %yp = addptr %yb, %offs : <BLOCK x ptr<f32>>
  %xv = load %xp, mask=%mask : <BLOCK x f32>
  %yv = load %yp, mask=%mask : <BLOCK x f32>
  %c = const[value={i}.0] : f32
  %cv = splat %c : <BLOCK x f32>
  %m = mul %xv, %cv : <BLOCK x f32>
  %sum = add %m, %yv : <BLOCK x f32>
  %ob = splat %out : <BLOCK x ptr<f32>>
  %op = addptr %ob, %offs : <BLOCK x ptr<f32>>
  store %op, %sum, mask=%mask
  return
}}
""")
