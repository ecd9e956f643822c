// Reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0 read; 1.0 written), the
// exchange format of `tri run` for inputs and outputs.
//
// Element types map to Tri's by bit pattern: <f2 <f4 <f8 are f16 f32 f64; |i1 <i2 <i4 <i8 are
// i8..i64; |u1 <u2 <u4 <u8 are read as the signless i8..i64; |b1 is i1. '|', '<' and '=' are
// accepted (the host is little-endian); '>' data is byte-swapped on reading. bf16 and the f8
// formats have no NumPy type: they are written as <f4, which holds each of their values exactly.
//
// Reading never trusts the file: the magic, the version, every length, the header's syntax, the
// shape's product and the data size are all checked, and an error names what was wrong.
#pragma once

#include <cstddef>
#include <string>

#include "host_data.h"

namespace tri_tool {

// Parses the bytes of a .npy file into a row-major buffer (fortran_order arrays are reordered).
bool npy_parse(const void* data, size_t size, HostBuffer* out, std::string* error);
// The .npy bytes of a buffer (version 1.0, little-endian, C order).
std::string npy_serialize(const HostBuffer& buffer);

bool npy_read_file(const std::string& path, HostBuffer* out, std::string* error);
bool npy_write_file(const std::string& path, const HostBuffer& buffer, std::string* error);

}  // namespace tri_tool
