// Conversions between f32 and the narrow float formats Tri stores as bit patterns: f16 (IEEE
// binary16), bf16, f8e4m3 (the "fn" variant: no infinities, max 448, NaN 0x7f/0xff) and f8e5m2
// (IEEE-like). Narrowing rounds to nearest even; NaN stays NaN. Used by the launch path (scalar
// arguments) and by the interpreter.
#pragma once

#include <cstdint>

namespace tri::fp {

float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
float bf16_to_f32(uint16_t b);
uint16_t f32_to_bf16(float f);
float f8e4m3_to_f32(uint8_t v);
uint8_t f32_to_f8e4m3(float f);
float f8e5m2_to_f32(uint8_t v);
uint8_t f32_to_f8e5m2(float f);

}  // namespace tri::fp
