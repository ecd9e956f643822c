// The reference interpreter's debugging ops (interp_impl.h): print (its text format is
// interpreter.cpp's opening comment), assert, assume, and checked mode's check of the facts
// multiple_of and max_contiguous state.
#include "interp/interp_impl.h"

namespace tri::interp::detail {
namespace {

std::string shortest(float f) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, f);
  return std::string(buf, r.ptr);
}
std::string shortest(double d) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, r.ptr);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Debugging ops

std::string Interp::format_lane(const Val& v, int64_t i) const {
  if (undef_at(v, i) != kDefined) return "undef";
  const uint64_t b = lane(v, i);
  if (elem_is_ptr(v.type)) return hex(b);
  const Scalar s = elem_scalar(v.type);
  if (s == Scalar::I1) return std::to_string(b & 1);
  if (ir::is_int(s)) return std::to_string(sext_bits(b, ir::scalar_bits(s)));
  if (s == Scalar::F64) return shortest(bits_f64(b));
  return shortest(lane_f32(b, s));
}

Status Interp::exec_print(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const std::vector<ValueId> vals = f.variadic(o);
  const Val* mask = optional(fr, o, "mask");
  TypeId shape_type = ir::kNoType;
  for (ValueId v : vals)
    if (types_.is_block(f.type_of(v))) shape_type = f.type_of(v);
  if (shape_type == ir::kNoType && mask && types_.is_block(mask->type)) shape_type = mask->type;
  const std::vector<int64_t> shape = shape_type == ir::kNoType ? std::vector<int64_t>() : shape_of(shape_type);
  const int64_t n = shape_type == ir::kNoType ? 1 : types_.num_elements(shape_type);
  const std::string prefix = str_attr(f, o, "prefix");
  const std::string pid = "pid (" + std::to_string(pid_[0]) + ", " + std::to_string(pid_[1]) + ", " +
                          std::to_string(pid_[2]) + ")";
  std::string text;
  for (int64_t i = 0; i < n; ++i) {
    bool active;
    TRI_RETURN_IF_ERROR(active_lane(fr, o, mask, i, &active));
    if (!active) continue;
    std::string line = prefix + pid;
    if (!shape.empty()) {
      line += " idx (";
      int64_t rem = i;
      std::vector<int64_t> idx(shape.size());
      for (size_t d = shape.size(); d-- > 0;) {
        idx[d] = rem % shape[d];
        rem /= shape[d];
      }
      for (size_t d = 0; d < idx.size(); ++d) line += (d ? ", " : "") + std::to_string(idx[d]);
      line += ")";
    }
    for (size_t k = 0; k < vals.size(); ++k) line += (k ? ", " : ": ") + format_lane(fr.vals[vals[k]], i);
    if (!text.empty()) text += '\n';
    text += line;
  }
  if (!text.empty() && opt_.print) opt_.print(text);
  return Status::ok();
}

Status Interp::exec_assert(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const Val& c = fr.vals[f.op(o).operands[0]];
  const Val* mask = optional(fr, o, "mask");
  const std::string msg = str_attr(f, o, "msg");
  for (int64_t i = 0; i < c.size(); ++i) {
    bool active;
    TRI_RETURN_IF_ERROR(active_lane(fr, o, mask, i, &active));
    if (!active) continue;
    TRI_RETURN_IF_ERROR(check_defined(fr, o, "cond", c, i));
    if (!(c.bits[i] & 1))
      return runtime_error(fr, o, "'assert'" + lane_str(c.type, i) + " failed" + (msg.empty() ? "" : ": " + msg));
  }
  return Status::ok();
}

// multiple_of: along dimension d, the first lane of each run of values[d] lanes is a multiple of
// values[d] (an address, for pointers). max_contiguous: along dimension d, lanes come in runs of
// values[d] consecutive values (consecutive elements, for pointers). Undefined lanes are skipped:
// their uses are reported where they happen.
Status Interp::check_hint(const Frame& fr, OpId o) const {
  const Function& f = *fr.f;
  const Val& v = fr.vals[f.op(o).operands[0]];
  const std::vector<int64_t>& values = f.attr(o, "values").ints;
  const bool multiple = f.op(o).code == Opcode::MultipleOf;
  const bool is_ptr = elem_is_ptr(v.type);
  const int w = elem_width(v.type);
  const int64_t step = is_ptr ? mem_bytes(pointee_scalar(v.type)) : 1;
  std::vector<int64_t> shape = shape_of(v.type);
  if (shape.empty()) shape = {1};
  auto show = [&](uint64_t bits) { return is_ptr ? hex(bits) : std::to_string(sext_bits(bits, w)); };
  // stride[d]: the lane distance between neighbours along dimension d.
  std::vector<int64_t> stride(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) stride[d - 1] = stride[d] * shape[d];
  for (int64_t i = 0; i < v.size(); ++i) {
    if (undef_at(v, i) != kDefined) continue;
    for (size_t d = 0; d < shape.size(); ++d) {
      const int64_t n = values[d];
      const int64_t pos = (i / stride[d]) % shape[d];
      const std::string run = " of " + std::to_string(n) + " along dimension " + std::to_string(d);
      if (multiple) {
        if (pos % n != 0) continue;
        const bool ok = is_ptr ? lane(v, i) % static_cast<uint64_t>(n) == 0 : sext_bits(lane(v, i), w) % n == 0;
        if (!ok)
          return runtime_error(fr, o, op_name(f, o) + lane_str(v.type, i) + " is " + show(lane(v, i)) +
                                          ", which is not a multiple of " + std::to_string(n) +
                                          " as the first of a run" + run);
      } else {
        if (pos % n == 0) continue;
        const int64_t prev = i - stride[d];
        if (undef_at(v, prev) != kDefined) continue;
        if (trunc_bits(lane(v, prev) + static_cast<uint64_t>(step), w) != lane(v, i))
          return runtime_error(fr, o, op_name(f, o) + lane_str(v.type, i) + " is " + show(lane(v, i)) +
                                          " but the lane before it is " + show(lane(v, prev)) + ", which breaks a run of " +
                                          std::to_string(n) + (is_ptr ? " consecutive elements" : " consecutive values") +
                                          " along dimension " + std::to_string(d));
      }
    }
  }
  return Status::ok();
}

Status Interp::exec_assume(Frame& fr, OpId o) {
  if (!checked_) return Status::ok();
  const Val& c = fr.vals[fr.f->op(o).operands[0]];
  for (int64_t i = 0; i < c.size(); ++i) {
    TRI_RETURN_IF_ERROR(check_defined(fr, o, "cond", c, i));
    if (!(c.bits[i] & 1)) return runtime_error(fr, o, "'assume'" + lane_str(c.type, i) + " is false");
  }
  return Status::ok();
}

}  // namespace tri::interp::detail
