/* Tri: an embeddable JIT runtime for block-level GPU kernels. The C API.
 *
 * This header compiles as C99 and as C++. Every function is a real exported symbol (no macros or
 * inline wrappers around versioned functions), uses fixed-width types and takes no varargs, so
 * any FFI can bind it.
 *
 * Conventions, written once here and repeated per function:
 *  - Results. Every call that can fail returns a tri_result (TRI_OK is 0). On failure a message
 *    is stored for the calling thread; read it with tri_last_error_message(). A message names
 *    the place (`source:line:col` for IR) and what was expected.
 *  - Out-parameters come last, are named out_*, and are written only on success.
 *  - Ownership. Objects are opaque handles made by tri_X_create and released by tri_X_destroy.
 *    destroy accepts NULL and cannot fail. A child keeps its parent alive: a module keeps its
 *    context alive, so handles may be destroyed in any order (garbage-collected hosts can
 *    finalize freely). Strings returned as `const char*` are owned by the object they came from
 *    and stay valid until it is destroyed.
 *  - Nothing escapes: no C++ exception, abort, exit or printing. Diagnostics go to the log
 *    callback of the context (silent by default).
 *  - Threads. A context and a module may be used from many threads at once; the last-error
 *    message is per thread. Options objects are not thread-safe.
 *  - Callbacks (the log sink, which also receives `print` output) may call the library,
 *    launches of the same context included: Tri holds no lock of its own while calling out, apart
 *    from the one that serializes the print output of one launch. A nested CPU launch made from a
 *    callback runs on the calling thread (or one temporary thread) rather than on the context's
 *    busy workers. A call that fails inside a callback does not change the message that
 *    tri_last_error_message reports for the call that made the callback. A callback must not
 *    wait for another thread's launch on the same context to finish (that launch may be waiting
 *    for the callback's own launch to end), nor compile the very specialization whose compile
 *    logged the message (refused with TRI_ERROR_INVALID_ARGUMENT).
 *  - No global mutable state: several contexts coexist in one process.
 */
#ifndef TRI_TRI_H_
#define TRI_TRI_H_

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define TRI_API __declspec(dllimport)
#elif defined(__GNUC__)
#define TRI_API __attribute__((visibility("default")))
#else
#define TRI_API
#endif

/* Two libraries implement this header. libtri has all of it. libtri_rt is the runtime alone:
 * contexts, packages (docs/aot.md), reflection, launches and prepared launches, teams and devices,
 * with no compiler and no LLVM, for programs that ship kernels compiled ahead of time. Functions
 * declared `TRI_API TRI_COMPILER` are libtri's only. A program that links libtri_rt defines
 * TRI_RUNTIME_ONLY before including this header: a call to one of them is then an error at
 * compile time ("unavailable") rather than at link time. */
#if defined(TRI_RUNTIME_ONLY) && (defined(__GNUC__) || defined(__clang__))
#define TRI_COMPILER __attribute__((unavailable("libtri only: libtri_rt has no compiler (docs/aot.md)")))
#else
#define TRI_COMPILER
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Versions ------------------------------------------------------------------------------
 * The library is compatible with a header of the same major version and an equal or lower
 * minor version. Symbols are only added within a major version. */
#define TRI_VERSION_MAJOR 0
#define TRI_VERSION_MINOR 2
#define TRI_VERSION_PATCH 0
#define TRI_VERSION_NUMBER (TRI_VERSION_MAJOR * 10000 + TRI_VERSION_MINOR * 100 + TRI_VERSION_PATCH)

/* The version of the library that is running, as TRI_VERSION_NUMBER encodes it. Since 0.1. */
TRI_API uint32_t tri_version(void);

/* ---- Results -------------------------------------------------------------------------------- */
typedef int32_t tri_result;

#define TRI_OK 0
#define TRI_ERROR_INVALID_ARGUMENT 1   /* a NULL handle or pointer, an empty input, a bad option */
#define TRI_ERROR_PARSE 2              /* malformed IR text */
#define TRI_ERROR_VERIFY 3             /* IR that breaks a typing or structure rule */
#define TRI_ERROR_CORRUPT_BINARY 4     /* binary IR that is truncated, corrupted or inconsistent */
#define TRI_ERROR_UNSUPPORTED_VERSION 5/* binary IR of a newer format, or header/library mismatch */
#define TRI_ERROR_NOT_FOUND 6          /* no function or parameter of that name or index */
#define TRI_ERROR_LIMIT_EXCEEDED 7     /* nesting too deep, a count or size too large */
#define TRI_ERROR_OUT_OF_MEMORY 8
#define TRI_ERROR_SPECIALIZE 9         /* a constexpr missing, of the wrong type, or out of range */
#define TRI_ERROR_LAUNCH_ARGS 10       /* launch arguments that do not match the kernel */
#define TRI_ERROR_UNSUPPORTED 11       /* a target or feature that is not available here */
#define TRI_ERROR_COMPILE 12           /* the backend failed (a bug in Tri; the message has the IR) */
#define TRI_ERROR_RUNTIME 13           /* a kernel failed while running (checked mode, assert) */
#define TRI_ERROR_IO 14                /* a file could not be read or written */
#define TRI_ERROR_INTERNAL 15          /* a bug in Tri */
#define TRI_ERROR_CANCELLED 16         /* a launch or compile stopped by tri_context_cancel (since 0.2) */
#define TRI_ERROR_UNTRUSTED 17         /* a bundle not signed by a key the context trusts (since 0.2) */

/* The constant's name ("TRI_ERROR_PARSE"); "TRI_ERROR_UNKNOWN" for other values. The string is
 * static. Since 0.1. */
TRI_API const char* tri_result_name(tri_result result);

/* Copies the calling thread's last error message, NUL-terminated and truncated to fit, into
 * buffer (which may be NULL when capacity is 0) and returns the size the whole message needs,
 * NUL included. Call once with capacity 0 to learn the size. The message is "" (size 1) when no
 * call on this thread has failed. Since 0.1. */
TRI_API size_t tri_last_error_message(char* buffer, size_t capacity);

/* ---- Context options ---------------------------------------------------------------------- */
typedef struct tri_context_options tri_context_options;

#define TRI_LOG_ERROR 0
#define TRI_LOG_WARNING 1
#define TRI_LOG_INFO 2
#define TRI_LOG_DEBUG 3

/* A log sink. `message` is valid for the duration of the call. It may be called from any thread
 * that uses the context, and may call the library (see "Callbacks" above). */
typedef void (*tri_log_fn)(void* user, int32_t level, const char* message);

/* Host memory hooks. alloc returns memory aligned to `align` (a power of two) or NULL; free
 * receives the pointer and the size that were allocated. */
typedef void* (*tri_alloc_fn)(void* self, size_t size, size_t align);
typedef void (*tri_free_fn)(void* self, void* ptr, size_t size);

/* Creates options with defaults: no log sink, the C library's allocator, the default disk cache
 * directory, a 1 GiB cache bound. The caller owns *out_options. Since 0.1. */
TRI_API tri_result tri_context_options_create(tri_context_options** out_options);
/* Releases options; NULL is allowed. Since 0.1. */
TRI_API void tri_context_options_destroy(tri_context_options* options);
/* Sets the log sink and the most verbose level passed to it (TRI_LOG_*); fn NULL turns logging
 * off. Since 0.1. */
TRI_API tri_result tri_context_options_set_log(tri_context_options* options, tri_log_fn fn, void* user,
                                              int32_t max_level);
/* Sets the host allocator; both functions NULL restores the default (malloc/free). It receives
 * the memory of the objects behind handles: the context itself, each module with its reflection
 * tables (the strings the reflection calls return included), and each blob with its bytes. The
 * IR a module holds, options, error messages, and temporaries while parsing, verifying and
 * printing come from the C++ heap, not from this allocator. alloc may return NULL: the call that
 * needed the memory fails with TRI_ERROR_OUT_OF_MEMORY. The allocator must outlive every object
 * made from the context. Since 0.1. */
TRI_API tri_result tri_context_options_set_allocator(tri_context_options* options, void* self,
                                                    tri_alloc_fn alloc, tri_free_fn free);
/* Sets the directory of the disk cache of compiled kernels (copied; made 0700 with its parents
 * when missing). "" turns the disk cache off. NULL (and the default) means: $TRI_CACHE_DIR when
 * set, else $XDG_CACHE_HOME/tri, else $HOME/.cache/tri. The cache holds code this process runs,
 * so it trusts the directory only when it is this user's own: one that another user owns, or
 * that its group or others may write, is refused (see tri_context_options_set_cache_shared), as
 * is a directory that cannot be made or written; either turns the cache off with one
 * TRI_LOG_WARNING line on the first compile, and compiles still work. docs/cache.md describes
 * the cache and its trust model. Since 0.1 (the default directory since 0.2). */
TRI_API TRI_COMPILER tri_result tri_context_options_set_cache_dir(tri_context_options* options, const char* path);
/* shared nonzero: the cache directory is shared by the users of its group. The directory and
 * its files may then belong to any of them and be writable by the group (never by every user),
 * the files Tri makes are readable by the group, and the cache's secret (which seals every
 * entry) is readable by the group: every user who can read it can make entries that the others
 * run, so a shared cache trusts the whole group. 0 (the default): private to this user.
 * Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_context_options_set_cache_shared(tri_context_options* options, int32_t shared);
/* Sets the disk cache's size bound in bytes (default 1 GiB; 0: no bound). When an entry written
 * takes the directory past it, the least recently used entries are removed. Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_context_options_set_cache_max_bytes(tri_context_options* options, uint64_t max_bytes);
/* Sets the budget of the "interp" target's working memory per launch, in bytes (0, the default:
 * none). A launch whose kernel would need more (an estimate from its block values: 8 bytes a
 * lane, 12 for pointers, 4 more in checked mode, every value of the kernel and of the device
 * functions it calls held at once, doubled for copies) fails before running with
 * TRI_ERROR_LIMIT_EXCEEDED. Other targets ignore it. Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_context_options_set_interp_memory_limit(tri_context_options* options, uint64_t bytes);
/* Sets how many compiled specializations each module of the context keeps in memory for
 * tri_kernel_compile to hand out again (default 64). Past that, the least recently compiled or
 * looked-up one is dropped from the module's memory; a kernel handle still holding it keeps it
 * alive, and compiling it again while such a handle lives returns the same code. 0 keeps none
 * that no handle holds. Since 0.2. */
TRI_API tri_result tri_context_options_set_kernel_cache_capacity(tri_context_options* options, uint32_t count);

/* Sizes of the Ed25519 keys that sign bundles (tri_sign_keypair, "Signing bundles" below). */
#define TRI_SIGN_PUBLIC_KEY_BYTES 32
#define TRI_SIGN_SECRET_KEY_BYTES 64
/* Adds an Ed25519 public key (TRI_SIGN_PUBLIC_KEY_BYTES bytes, copied) that the context trusts
 * to sign bundles. Once the options hold a key, tri_cache_import takes only bundles signed by
 * one of the keys they hold (anything else is TRI_ERROR_UNTRUSTED, and no code of it is
 * written or loaded); with none (the default) unsigned bundles are imported too. Errors:
 * TRI_ERROR_INVALID_ARGUMENT (NULL options or key, public_key_bytes not
 * TRI_SIGN_PUBLIC_KEY_BYTES). Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_context_options_add_trusted_key(tri_context_options* options, const uint8_t* public_key,
                                                      size_t public_key_bytes);

/* ---- Context ------------------------------------------------------------------------------ */
typedef struct tri_context tri_context;

/* Creates a context. `header_version` must be TRI_VERSION_NUMBER as seen by the caller: it is
 * checked against the library (same major, minor not newer), and a mismatch gives
 * TRI_ERROR_UNSUPPORTED_VERSION. options may be NULL for defaults; they are copied. The caller
 * owns *out_context. Thread-safe to use from many threads. Since 0.1. */
TRI_API tri_result tri_context_create(const tri_context_options* options, uint32_t header_version,
                                      tri_context** out_context);
/* Releases the caller's reference; the context lives on while modules made from it live. NULL
 * is allowed. Since 0.1. */
TRI_API void tri_context_destroy(tri_context* context);
/* Stops every launch of the context on a host target ("cpu", "interp") that is running when it
 * is called: each stops at its next loop back-edge (`for`, `while`) or before its next program
 * instance and returns TRI_ERROR_CANCELLED (the stores it made stay made). Launches that begin
 * after the call run normally. GPU launches cannot be preempted: a "cuda" launch already on a
 * stream runs to its end, and cancel has no effect on it. It also stops every tri_kernel_compile
 * (and tri_tune's compiles) of the context that began before the call: each returns
 * TRI_ERROR_CANCELLED at its next stage boundary: between Tri's IR passes, before lowering to
 * LLVM, between LLVM's optimization passes (the rest are skipped), before code generation, and
 * before the driver's PTX-to-SASS JIT. A pass or stage that has begun runs to its end: one LLVM
 * pass, LLVM's code generation, the driver's JIT (ptxas); the limits (docs/capi.md "Limits":
 * parameters per function, elements per thread) bound how long those take. A compile made by a
 * launch (launch-time specialization) is not stopped. Thread-safe, and callable from a callback
 * (the log sink) or a watchdog thread. Errors: TRI_ERROR_INVALID_ARGUMENT for a NULL context.
 * Since 0.2 (compiles since 0.2). */
TRI_API tri_result tri_context_cancel(tri_context* context);

/* ---- Modules ------------------------------------------------------------------------------
 * A module is a verified set of kernels and device functions, made from IR text or binary IR
 * (told apart by the binary format's magic bytes), or from Triton's TTIR text (told apart by
 * its content; docs/import.md). */
typedef struct tri_module tri_module;

/* Parses (text) or reads (binary) `size` bytes of IR and verifies them. source_name (may be
 * NULL) names the input in diagnostics: "softmax.tri:12:9: error: ...". The bytes are not kept.
 * Errors: TRI_ERROR_INVALID_ARGUMENT (NULL context, NULL data, size 0), TRI_ERROR_PARSE,
 * TRI_ERROR_CORRUPT_BINARY, TRI_ERROR_UNSUPPORTED_VERSION, TRI_ERROR_VERIFY, TRI_ERROR_UNSUPPORTED
 * (TTIR with an op, type or libdevice function Tri lacks),
 * TRI_ERROR_LIMIT_EXCEEDED (input over 1 GiB, nesting deeper than 64, calls nested deeper
 * than 256, tables past their limits: docs/capi.md "Limits"; a block of more than 2^20
 * elements is TRI_ERROR_VERIFY),
 * TRI_ERROR_OUT_OF_MEMORY. A failure's message also goes to the context's log sink at
 * TRI_LOG_ERROR. The caller owns *out_module; it keeps the context alive. Since 0.1. */
TRI_API TRI_COMPILER tri_result tri_module_create(tri_context* context, const void* data, size_t size, const char* source_name,
                                     tri_module** out_module);
/* Releases the module; NULL is allowed. Since 0.1. */
TRI_API void tri_module_destroy(tri_module* module);

/* ---- Bytes returned by the library --------------------------------------------------------
 * A blob owns a copy of its bytes: it stays valid after the module it came from is destroyed,
 * and keeps that module's context alive (its memory came from the context's allocator). A
 * blob made without a context (tri_tune_plot's) is malloc's. */
typedef struct tri_blob tri_blob;

/* The blob's bytes (not NUL-terminated) and their count; NULL and 0 for a NULL blob.
 * Since 0.1. */
TRI_API const void* tri_blob_data(const tri_blob* blob);
TRI_API size_t tri_blob_size(const tri_blob* blob);
/* Releases a blob; NULL is allowed. Since 0.1. */
TRI_API void tri_blob_destroy(tri_blob* blob);

/* The module as canonical IR text (not NUL-terminated), without comments: it depends only on the
 * module, so a module and its binary form give the same text. The caller owns *out_text.
 * Since 0.1. */
TRI_API TRI_COMPILER tri_result tri_module_to_text(const tri_module* module, tri_blob** out_text);
/* What `tri fmt` writes: the canonical text with the `//` comments of the text the module was
 * created from, each printed where it was (docs/ir.md, "Comments"); the same as
 * tri_module_to_text for a module created from binary. Formatting its result again gives the
 * same text. The caller owns *out_text. Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_module_to_text_with_comments(const tri_module* module, tri_blob** out_text);
/* The module as binary IR (docs/format.md). The caller owns *out_binary. Since 0.1. */
TRI_API TRI_COMPILER tri_result tri_module_to_binary(const tri_module* module, tri_blob** out_binary);

/* ---- Reflection ---------------------------------------------------------------------------
 * Functions are numbered 0..count-1 in module order; a kernel's parameters are numbered with its
 * runtime parameters first, in order, then its constexpr parameters. Returned strings are owned
 * by the module. */
#define TRI_FUNCTION_KERNEL 0
#define TRI_FUNCTION_DEVICE 1

#define TRI_PARAM_VALUE 0      /* a runtime argument given at launch */
#define TRI_PARAM_CONSTEXPR 1  /* a compile-time value given at compile (or its default) */

/* Type kinds and element types, as reported for parameters. */
#define TRI_TYPE_SCALAR 0
#define TRI_TYPE_POINTER 1
#define TRI_TYPE_BLOCK 2

#define TRI_DTYPE_I1 0
#define TRI_DTYPE_I8 1
#define TRI_DTYPE_I16 2
#define TRI_DTYPE_I32 3
#define TRI_DTYPE_I64 4
#define TRI_DTYPE_F16 5
#define TRI_DTYPE_BF16 6
#define TRI_DTYPE_F32 7
#define TRI_DTYPE_F64 8
#define TRI_DTYPE_F8E4M3 9
#define TRI_DTYPE_F8E5M2 10

/* Number of kernels and device functions. Since 0.1. */
TRI_API tri_result tri_module_function_count(const tri_module* module, uint32_t* out_count);
/* Index of the function with this name, or TRI_ERROR_NOT_FOUND. Since 0.1. */
TRI_API tri_result tri_module_find_function(const tri_module* module, const char* name, uint32_t* out_index);
/* Name (without '@') and kind (TRI_FUNCTION_*) of function `index`. Since 0.1. */
TRI_API tri_result tri_module_function_name(const tri_module* module, uint32_t index, const char** out_name);
TRI_API tri_result tri_module_function_kind(const tri_module* module, uint32_t index, int32_t* out_kind);
/* Number of parameters of function `index` (runtime ones, then constexprs). Since 0.1. */
TRI_API tri_result tri_module_param_count(const tri_module* module, uint32_t index, uint32_t* out_count);
/* Name (without '%') and kind (TRI_PARAM_*) of a parameter. Since 0.1. */
TRI_API tri_result tri_module_param_name(const tri_module* module, uint32_t index, uint32_t param,
                                         const char** out_name);
TRI_API tri_result tri_module_param_kind(const tri_module* module, uint32_t index, uint32_t param,
                                         int32_t* out_kind);
/* The parameter's type: its kind (TRI_TYPE_*), its element type (TRI_DTYPE_*; for a pointer,
 * the pointee; for a block, its element, or its element's pointee) and its canonical IR text
 * ("ptr<f32>", "i32", "<BLOCK x f32>"). A constexpr's type is a scalar. Since 0.1. */
TRI_API tri_result tri_module_param_type(const tri_module* module, uint32_t index, uint32_t param,
                                         int32_t* out_type_kind, int32_t* out_dtype, const char** out_text);
/* The facts a runtime parameter declares: alignment in bytes and divisibility (0 when not
 * declared), and noalias (0 or 1). A constexpr declares none: all three are 0. Since 0.1. */
TRI_API tri_result tri_module_param_facts(const tri_module* module, uint32_t index, uint32_t param,
                                          uint32_t* out_align, uint32_t* out_divisible, int32_t* out_noalias);
/* A constexpr's default value as IR text ("1024", "true", "0.5"), or NULL when it has none.
 * TRI_ERROR_INVALID_ARGUMENT for a runtime parameter. Since 0.1. */
TRI_API tri_result tri_module_param_default(const tri_module* module, uint32_t index, uint32_t param,
                                            const char** out_text);

/* ---- Compiling kernels ---------------------------------------------------------------------
 * tri_kernel_compile specializes one kernel of a module on its constexpr values and on facts
 * about its arguments, canonicalizes it and compiles it for a target:
 *   "interp"  the reference interpreter (slow, exact; with checked mode, a debugging tool)
 *   "cpu"     LLVM ORC JIT for the host CPU; program instances run on the context's threads
 *   "cuda"    NVIDIA GPUs: PTX through LLVM's NVPTX backend, launched through the CUDA driver
 *             (libcuda, loaded at run time) on the caller's stream
 * Compiling the same kernel with the same options again returns the compiled code the module
 * already holds (while it is among the module's most recently used specializations, see
 * tri_context_options_set_kernel_cache_capacity, or a kernel handle holds it), and concurrent
 * compiles of one specialization compile it once. */
typedef struct tri_compile_options tri_compile_options;
typedef struct tri_kernel tri_kernel;

/* Creates compile options: target "cpu", no constexpr values (defaults apply), no extra facts,
 * checked mode off. The caller owns *out_options. Not thread-safe. Since 0.1. */
TRI_API tri_result tri_compile_options_create(tri_compile_options** out_options);
/* Releases options; NULL is allowed. Since 0.1. */
TRI_API void tri_compile_options_destroy(tri_compile_options* options);
/* Sets the target by name ("interp", "cpu"); an unknown name is TRI_ERROR_INVALID_ARGUMENT.
 * Since 0.1. */
TRI_API tri_result tri_compile_options_set_target(tri_compile_options* options, const char* target);
/* Checked mode (target "interp" only; TRI_ERROR_UNSUPPORTED at compile for other targets):
 * every memory access is bounds-checked against the extents given at launch, and uses of
 * masked-off lanes of loads without `other` are reported with the op's location. Since 0.1. */
TRI_API tri_result tri_compile_options_set_checked(tri_compile_options* options, int32_t on);
/* Sets a constexpr's value by name (copied). Integer values suit integer and i1 constexprs
 * (0 or 1), float values float constexprs; an integer value also suits a float constexpr when
 * that type represents it exactly (2048 is an f16, 2049 and 70000 are not). The kernel's
 * declared types are checked at compile (TRI_ERROR_SPECIALIZE). Setting a name twice keeps the
 * last value. Since 0.1. */
TRI_API tri_result tri_compile_options_set_constexpr_int(tri_compile_options* options, const char* name,
                                                         int64_t value);
TRI_API tri_result tri_compile_options_set_constexpr_float(tri_compile_options* options, const char* name,
                                                           double value);
/* Sets the warps per program instance of GPU targets: 1, 2, 4, 8, 16 or 32 (default 4); other
 * values are TRI_ERROR_INVALID_ARGUMENT. Host targets ignore it. Since 0.2. */
TRI_API tri_result tri_compile_options_set_num_warps(tri_compile_options* options, int32_t num_warps);
/* Sets how a `for` loop that feeds a `dot` loads its operands: with n stages, n - 1 iterations
 * ahead (1: each iteration's data when it starts; 2: the next iteration's while this one
 * computes; the loads move before the loop and to the end of its body, masked off past the
 * last iteration, so the results are the same). 0 (the default) means the target's choice: 3
 * on "cuda" (where tensor-core operand tiles then arrive in shared memory by cp.async), 1
 * elsewhere. Values above 8 are TRI_ERROR_INVALID_ARGUMENT (Triton's kernels use up to 5 or 6). Since 0.2. */
TRI_API tri_result tri_compile_options_set_num_stages(tri_compile_options* options, int32_t num_stages);
/* Launch-time specialization, on by default for the "cuda" target and off by default for "cpu"
 * ("interp" ignores it): each tri_launch
 * classes its arguments (pointers aligned to 16 bytes, integers other than i1 equal to 1 or
 * divisible by 16, for the first 32 runtime parameters; a few bit tests) and runs the variant of the kernel
 * compiled for those classes, which may use 16-byte vector memory accesses. A variant is
 * compiled once, on the first launch that needs it (other launches of it wait), and logged at
 * TRI_LOG_INFO with the classes it was made for. After `max_variants` (at most 16) variants,
 * launches of new classes run the kernel as compiled (logged once per launch). on = 0 never
 * compiles on the launch path: every launch runs the kernel as compiled, which suits hosts that
 * must never stall (declare facts with tri_compile_options_set_arg_align instead). Since 0.2. */
TRI_API tri_result tri_compile_options_set_launch_specialization(tri_compile_options* options, int32_t on,
                                                                 uint32_t max_variants);
/* Opts runtime parameter `param` (0-based, below 32) out of launch-time specialization (on = 0)
 * or back in (on = 1, the default): its class never selects a variant, so a parameter whose
 * alignment or divisibility changes from launch to launch costs no compiles. Since 0.2. */
TRI_API tri_result tri_compile_options_set_arg_specialization(tri_compile_options* options, uint32_t param,
                                                              int32_t on);
/* Sets the GPU architecture to compile for, as "sm_XY" ("sm_80", "sm_86", "sm_89", "sm_90",
 * "sm_90a"; copied). NULL or "" (the default) means the architecture of the device of the
 * calling thread's current CUDA context (or device 0), which needs a driver; naming one lets a
 * machine without a GPU make PTX. The name is checked at compile. Since 0.2. */
TRI_API tri_result tri_compile_options_set_arch(tri_compile_options* options, const char* arch);
/* Promises that runtime parameter `param` (0-based among the runtime parameters) is aligned to
 * `align` bytes (a pointer; power of two) or divisible by `divisible` (an integer), in addition
 * to what the IR declares. 0 withdraws the promise. Since 0.1. */
TRI_API tri_result tri_compile_options_set_arg_align(tri_compile_options* options, uint32_t param, uint32_t align);
TRI_API tri_result tri_compile_options_set_arg_divisible(tri_compile_options* options, uint32_t param,
                                                         uint32_t divisible);

/* Compiles kernel `name` of the module. options may be NULL for defaults. Errors:
 * TRI_ERROR_NOT_FOUND (no such kernel), TRI_ERROR_SPECIALIZE (a constexpr unknown, missing,
 * of the wrong type, or not a power of two where it is a block dimension), TRI_ERROR_VERIFY
 * (the specialized IR breaks a rule, a block over 2^20 elements included), TRI_ERROR_UNSUPPORTED
 * (target unknown here, or an op the target cannot run, such as inline_asm on "interp" or
 * "cpu"), TRI_ERROR_LIMIT_EXCEEDED (on "cuda": a block value with more than 2048 elements per
 * thread, docs/capi.md "Limits"), TRI_ERROR_CANCELLED (tri_context_cancel). The caller owns
 * *out_kernel; it keeps the module alive. A kernel may be launched from many threads at once.
 * Since 0.1. */
TRI_API TRI_COMPILER tri_result tri_kernel_compile(tri_module* module, const char* name, const tri_compile_options* options,
                                      tri_kernel** out_kernel);
/* Releases the kernel; NULL is allowed. Since 0.1. */
TRI_API void tri_kernel_destroy(tri_kernel* kernel);
/* The specialized, canonicalized IR the kernel was compiled from, as text. Since 0.1. */
TRI_API TRI_COMPILER tri_result tri_kernel_to_text(const tri_kernel* kernel, tri_blob** out_text);
/* Code the target made for the kernel, by kind: "llvm" (targets "cuda" and "cpu": the LLVM IR
 * after optimization), "asm" (target "cpu": the host assembly), "ptx" (target "cuda": the PTX
 * module), "metadata" (target "cuda": the launch descriptor as JSON, docs/capi.md "Launch
 * descriptor"), "cubin" (target "cuda": the machine code the driver made from the PTX, binary;
 * only where a driver compiled it for the current device). A stage the compile did not keep
 * (the cpu target keeps only machine code; a kernel read from the disk cache, only its entry)
 * is made on the first call by compiling the kernel again in memory, so compiles that never ask
 * pay nothing. TRI_ERROR_NOT_FOUND when the target makes nothing of that kind (the message lists
 * the kinds it makes). The caller owns *out_code. Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_kernel_code(const tri_kernel* kernel, const char* kind, tri_blob** out_code);
/* The variants launch-time specialization has made for this kernel so far, as JSON
 * (docs/capi.md "Variants"): for each, its key, the argument classes it was compiled for, and
 * why it was made ("argument 3 (%n) changed class: not divisible by 16 -> divisible by 16").
 * The caller owns *out_json. Since 0.2. */
TRI_API tri_result tri_kernel_variants(const tri_kernel* kernel, tri_blob** out_json);
/* Number of runtime arguments tri_launch expects. Since 0.1. */
TRI_API tri_result tri_kernel_arg_count(const tri_kernel* kernel, uint32_t* out_count);

/* ---- Launching -----------------------------------------------------------------------------
 * One argument per runtime parameter, in order. `kind` and `dtype` say what the caller passes
 * and must match the parameter exactly (reflection tells what it is):
 *   kind TRI_TYPE_SCALAR:  dtype the scalar's TRI_DTYPE_*; value.i for integer types (the low
 *                          bits are used), value.f for float types (rounded to the type)
 *   kind TRI_TYPE_POINTER: dtype the pointee's TRI_DTYPE_*; value.p the address; extent the
 *                          size in bytes of the buffer it points into (0: unknown), which
 *                          checked mode uses. NULL is accepted (a pointer the kernel leaves
 *                          unused, or uses only under a mask that is off). Dereferencing it
 *                          is TRI_ERROR_RUNTIME on "interp" (an out-of-bounds access in
 *                          checked mode, whatever the extent; without checked mode any access
 *                          below address 4096); on "cpu" and "cuda" it is undefined behaviour
 *                          as in C (a fault), as is any other access out of the buffer.
 * The struct is 24 bytes and frozen for the 0.x ABI. */
typedef struct tri_arg {
  union {
    int64_t i;
    double f;
    const void* p;
  } value;
  uint64_t extent;
  int32_t kind;
  int32_t dtype;
} tri_arg;

/* Runs the kernel over a grid of grid_x * grid_y * grid_z program instances and returns when
 * they have finished (CPU and interpreter targets). The grid limits are the same on every target
 * (CUDA's): grid_x at most 2^31 - 1, grid_y and grid_z at most 65535, so program ids and
 * num_programs fit the IR's i32. A grid with a zero dimension launches nothing and returns TRI_OK
 * once the arguments have been checked (no GPU driver call is made for it). `stream` is for GPU
 * targets and must be NULL for the others. Errors: TRI_ERROR_LAUNCH_ARGS (argument count,
 * checked before anything else about the arguments, kind or dtype that does not match the
 * kernel, naming the argument), TRI_ERROR_INVALID_ARGUMENT (a grid past its limits),
 * TRI_ERROR_RUNTIME (a failed `assert`, or a checked-mode violation with the op's location, the
 * lane and the address), TRI_ERROR_CANCELLED (tri_context_cancel), TRI_ERROR_LIMIT_EXCEEDED (the
 * interpreter's memory budget), TRI_ERROR_OUT_OF_MEMORY (the CPU target could start no worker
 * thread; the launch may be retried). Nothing is compiled or allocated on this path once the
 * kernel exists, apart from the interpreter's own working memory and the CPU target's threads,
 * started on the context's first CPU launch. Thread-safe. Since 0.1. */
TRI_API tri_result tri_launch(const tri_kernel* kernel, uint32_t grid_x, uint32_t grid_y, uint32_t grid_z,
                              void* stream, const tri_arg* args, uint32_t num_args);

/* ---- Prepared launches ---------------------------------------------------------------------
 * A plan binds a kernel to a grid, a stream and arguments once; hot loops then update what
 * changes in place and launch with one call, which skips checking and encoding every argument
 * again. A plan keeps its kernel alive. It is not thread-safe: use one plan per thread. */
typedef struct tri_launch_plan tri_launch_plan;

/* Makes a plan with the same arguments tri_launch takes (checked and encoded now: the errors of
 * tri_launch). The caller owns *out_plan. Since 0.2. */
TRI_API tri_result tri_launch_plan_create(const tri_kernel* kernel, uint32_t grid_x, uint32_t grid_y, uint32_t grid_z,
                                          void* stream, const tri_arg* args, uint32_t num_args,
                                          tri_launch_plan** out_plan);
/* Replaces argument `index` (checked against the kernel's parameter like tri_launch does).
 * Since 0.2. */
TRI_API tri_result tri_launch_plan_set_arg(tri_launch_plan* plan, uint32_t index, const tri_arg* arg);
/* Replaces the grid (the limits of tri_launch; a zero dimension makes launches empty) or the
 * stream. Since 0.2. */
TRI_API tri_result tri_launch_plan_set_grid(tri_launch_plan* plan, uint32_t grid_x, uint32_t grid_y, uint32_t grid_z);
TRI_API tri_result tri_launch_plan_set_stream(tri_launch_plan* plan, void* stream);
/* Launches as tri_launch would with the plan's kernel, grid, stream and arguments. Since 0.2. */
TRI_API tri_result tri_launch_plan_launch(tri_launch_plan* plan);
/* Releases the plan; NULL is allowed. Since 0.2. */
TRI_API void tri_launch_plan_destroy(tri_launch_plan* plan);

/* ---- Packages: kernels compiled ahead of time ----------------------------------------------
 * A package (`tri aot`, docs/aot.md; its format: docs/format.md) holds a module's kernels
 * compiled ahead of time: for each specialization (constexprs, warps, stages, argument facts) a
 * few variants for argument classes, each with code for several machines (a cubin and PTX per GPU
 * architecture, a shared object per x86-64 level). Loading one compiles nothing; both libraries
 * load packages, and libtri_rt, which has no compiler, runs only what they hold. */

/* Makes a module of the package in [data, data + size) (copied; the caller may free it after the
 * call). `name` (may be NULL) names it in messages. Its reflection (tri_module_param_* ...) is the
 * package's; in libtri it also has the package's IR when the package carries it, so
 * tri_kernel_compile compiles what the package does not hold. Errors:
 * TRI_ERROR_CORRUPT_BINARY (not a package, damaged: the checksum is checked before anything is
 * read), TRI_ERROR_UNSUPPORTED_VERSION (a newer format). Since 0.2. */
TRI_API tri_result tri_module_load_package(tri_context* context, const void* data, size_t size, const char* name,
                                           tri_module** out_module);
/* The kernel `name` that the package of `module` holds for `options` (NULL: the defaults; only
 * the target, constexprs, warps, stages and argument facts matter, and a constexpr not set must
 * be at its default in the package), with its code for this machine: on "cuda" the cubin of the
 * current context's GPU, else a cubin of an older architecture of its family, else the PTX of
 * the newest architecture it runs, which the driver JIT-compiles at the first load (logged at
 * TRI_LOG_WARNING); on "cpu" the best x86-64 level the CPU runs. A launch whose argument classes
 * have no variant runs the package's variant with the most facts they satisfy. Compiles nothing
 * (tri_kernel_compile on such a module does the same, then compiles from the IR if the package
 * lacks the specialization). Errors: TRI_ERROR_NOT_FOUND naming what the package holds for
 * `name`, or the machines it has code for and this one; TRI_ERROR_INVALID_ARGUMENT for a module
 * not made by tri_module_load_package. The caller owns *out_kernel. Since 0.2. */
TRI_API tri_result tri_module_kernel(tri_module* module, const char* name, const tri_compile_options* options,
                                     tri_kernel** out_kernel);

/* What the package of `module` holds, as JSON: {"schema": 1, "producer", "name", "ir": whether it
 * carries the IR, "kernels": [{"name", "target", "num_warps", "num_stages", "constexprs": {NAME:
 * value}, "variants": [{"classes": 16 hex digits (two bits per runtime parameter, as
 * tri_kernel_variants reports them), "code": [{"machine": "sm_90a", "kind": "ptx+cubin", "bytes"}]}]}]}.
 * TRI_ERROR_INVALID_ARGUMENT for a module not made by tri_module_load_package. Since 0.2. */
TRI_API tri_result tri_module_package_info(const tri_module* module, tri_blob** out_json);

/* Builds packages (libtri only). */
typedef struct tri_package_builder tri_package_builder;
/* Which variants tri_package_builder_add makes besides the one without argument facts (flags). */
#define TRI_PACKAGE_ALIGNED 1   /* every pointer aligned to 16 bytes */
#define TRI_PACKAGE_DIVISIBLE 2  /* that, and every integer (not i1) a multiple of 16 */
/* Flags of tri_package_builder_create. */
#define TRI_PACKAGE_NO_IR 1      /* leave the module's IR out (libtri then compiles nothing from it) */

/* Starts a package of `module`'s kernels (a module from IR). The builder keeps the module alive.
 * Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_package_builder_create(tri_module* module, uint32_t flags, tri_package_builder** out_builder);
/* Compiles kernel `name` as `options` asks (NULL: the defaults) for each machine of `machines`, a
 * comma-separated list, with the variants `variants` asks for (TRI_PACKAGE_*), and adds it.
 * Machines: for "cuda" GPU architectures ("sm_80,sm_90a": PTX for each, and its cubin made by
 * ptxas, found as $TRI_PTXAS, on PATH or in /usr/local/cuda/bin; TRI_PTXAS=none: PTX only); for
 * "cpu" x86-64 levels ("x86-64-v2,x86-64-v3,x86-64-v4": a shared object each, linked by the C
 * compiler driver, $CC or cc). NULL or "": those two lists. Notes (no ptxas: PTX only) go to the
 * log at TRI_LOG_WARNING. Errors: those of tri_kernel_compile; TRI_ERROR_UNSUPPORTED for the
 * "interp" target; TRI_ERROR_NOT_FOUND when there is no C compiler driver for "cpu". Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_package_builder_add(tri_package_builder* builder, const char* name,
                                           const tri_compile_options* options, const char* machines, uint32_t variants);
/* Adds the tuned config of each kernel of the module from the tuning store `store` (docs/tune.md):
 * a file tri_tune_export wrote, one result's file, or a directory of results (a disk cache
 * directory: its tune/ folder). For every result of a kernel of the module and of `target`
 * ("cuda" or "cpu"; NULL: both), the winning config (its constexprs, warps and stages) is
 * compiled as tri_package_builder_add compiles (`machines`, `variants` as there) and marked tuned:
 * tri_module_kernel gives it to a request that sets none of its values otherwise (docs/aot.md).
 * The same config is added once; results for larger key values come first. Results of another
 * Tri version, and results without a measured winner, are skipped (logged at TRI_LOG_WARNING).
 * `*out_added` (may be NULL): how many entries were added. Errors: TRI_ERROR_IO (the store
 * cannot be read), TRI_ERROR_CORRUPT_BINARY (a result does not parse), those of
 * tri_package_builder_add. Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_package_builder_add_tuned(tri_package_builder* builder, const char* store,
                                                 const char* target, const char* machines, uint32_t variants,
                                                 uint32_t* out_added);
/* The package so far, as a file's bytes. The builder may go on adding. Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_package_builder_finish(tri_package_builder* builder, tri_blob** out_package);
/* Releases the builder; NULL is allowed. Since 0.2. */
TRI_API TRI_COMPILER void tri_package_builder_destroy(tri_package_builder* builder);

/* ---- Teams: distributed kernels on the host ----------------------------------------------
 * A team runs one kernel as several ranks that share a symmetric heap, the model of multi-GPU
 * kernels that overlap compute with communication (docs/distributed.md): every rank owns a heap
 * of the same size, a buffer allocated on the team lies at the same offset of every rank's heap,
 * and the IR's distributed ops (rank, num_ranks, symm_at, put, get, notify, wait) reach a peer's
 * copy. These functions run teams on the host targets ("cpu" and "interp"): each rank is a group
 * of threads of this process and each heap is host memory, so the semantics can be tested
 * without GPUs. The "cuda" target cannot compile distributed ops yet (it needs NVSHMEM).
 * A kernel that holds a `wait` runs every program instance of every rank at once, each on a
 * thread of its own (a wait assumes the programs it waits for are running); such a launch may
 * have at most 1024 program instances over all ranks. Outside a team (tri_launch) a kernel is
 * rank 0 of 1 and has no heap: symm_at to rank 0 is the identity. */
typedef struct tri_team tri_team;

/* Makes a team of num_ranks ranks (1 to 1024), each with a symmetric heap of
 * heap_bytes_per_rank bytes (rounded up to a multiple of 64) of host memory from the context's
 * allocator, 64-byte aligned. Waits time out after 30 s (tri_team_set_wait_timeout). Errors:
 * TRI_ERROR_INVALID_ARGUMENT (NULL context or out_team, num_ranks or heap_bytes_per_rank 0),
 * TRI_ERROR_LIMIT_EXCEEDED (num_ranks above 1024, heaps past the address space),
 * TRI_ERROR_OUT_OF_MEMORY. The caller owns *out_team; it keeps the context alive. A team may be
 * used from many threads at once. Since 0.2. */
TRI_API tri_result tri_team_create(tri_context* context, uint32_t num_ranks, uint64_t heap_bytes_per_rank,
                                   tri_team** out_team);
/* Releases the team and its heaps; NULL is allowed. No launch of the team may be running, and
 * pointers from tri_team_ptr are invalid afterwards. A destroy made while tri_team_launch calls
 * of the team still run (a host bug) is logged at TRI_LOG_WARNING and takes effect when the
 * last of them returns, instead of freeing the heaps under them. Since 0.2. */
TRI_API void tri_team_destroy(tri_team* team);
/* Allocates `bytes` (more than 0) in every rank's heap at one offset, 64-byte aligned, and fills
 * them with zeros; *out_offset receives the offset (first fit: the lowest that fits). Errors:
 * TRI_ERROR_INVALID_ARGUMENT (NULL team or out_offset, bytes 0), TRI_ERROR_OUT_OF_MEMORY (no
 * free range of that size is left in the heaps; the message says how much is free). Since 0.2. */
TRI_API tri_result tri_team_alloc(tri_team* team, uint64_t bytes, uint64_t* out_offset);
/* Frees the allocation at `offset` (from tri_team_alloc) on every rank. Errors:
 * TRI_ERROR_INVALID_ARGUMENT (NULL team, an offset that is not an allocation's, or a
 * tri_team_launch of the team running: the buffer may be in use, and a later alloc would hand
 * out its offset again; launches made with tri_team_launch_async are not tracked). Since 0.2. */
TRI_API tri_result tri_team_free(tri_team* team, uint64_t offset);
/* The host address of byte `offset` of rank `rank`'s heap into *out_ptr, for the host to fill
 * and read buffers and to pass as kernel arguments (a rank's arguments are its own addresses).
 * Valid until the team is destroyed. Errors: TRI_ERROR_INVALID_ARGUMENT (NULL team or out_ptr,
 * a rank past the team, an offset past the heap). Since 0.2. */
TRI_API tri_result tri_team_ptr(const tri_team* team, uint32_t rank, uint64_t offset, void** out_ptr);
/* How long a `wait` of this team's launches may go without its signal before the launch fails
 * with TRI_ERROR_RUNTIME naming the wait (its location, the signal's address and value, the
 * rank); 0 waits forever, and so does any value too large to count (UINT64_MAX included: it
 * saturates, never wraps). The default is 30000 ms. Launches that begin later use it. Errors:
 * TRI_ERROR_INVALID_ARGUMENT (NULL team). Since 0.2. */
TRI_API tri_result tri_team_set_wait_timeout(tri_team* team, uint64_t timeout_ms);
/* Runs the kernel on every rank of the team, each over the grid grid_x * grid_y * grid_z, all
 * ranks at once, and returns when every rank has finished. `args` holds num_ranks *
 * num_args_per_rank arguments, rank-major (rank 0's, then rank 1's, ...), each checked as
 * tri_launch checks them; num_args_per_rank is the kernel's argument count. The kernel must be
 * compiled for "cpu" or "interp". A failure on any rank stops the waits of the others and is
 * reported with its rank ("rank 2: file:line:col: error: ..."); when several ranks fail, the
 * lowest rank's own failure is reported (not a rank that stopped because of it). Errors: those of
 * tri_launch, TRI_ERROR_INVALID_ARGUMENT (NULL kernel, team or args; a kernel for the "cuda"
 * target on a host team), TRI_ERROR_LIMIT_EXCEEDED (a kernel with `wait` whose ranks
 * together have more than 1024 program instances), TRI_ERROR_RUNTIME (a wait timed out, a rank
 * or an address outside the team's heaps in symm_at, put, get or notify, a failed assert).
 * Thread-safe. Since 0.2. */
TRI_API tri_result tri_team_launch(const tri_kernel* kernel, tri_team* team, uint32_t grid_x, uint32_t grid_y,
                                   uint32_t grid_z, const tri_arg* args, uint32_t num_args_per_rank);

/* ---- GPU teams: one rank per process, each on its own GPU, on NVSHMEM ---------------------
 * A GPU team's ranks are processes of one node (every pair of GPUs connected by NVLink or PCIe
 * peer access); NVSHMEM's host library (libnvshmem_host.so.3, found through $TRI_NVSHMEM_LIB or
 * the library path; its device library, libnvshmem_device.bc beside it or $TRI_NVSHMEM_BC, is
 * linked into kernels with distributed ops when present) bootstraps them from a unique id that one process makes and the host sends
 * to the others by any means (a pipe, a file, MPI, a socket). tri_team_alloc, tri_team_ptr,
 * tri_team_set_wait_timeout, tri_team_launch and tri_team_destroy work on GPU teams too; in a GPU
 * team tri_team_alloc, tri_team_free and tri_team_destroy are collective (every rank makes the
 * same calls in the same order), tri_team_ptr gives device addresses (a peer's as mapped on this
 * GPU), and tri_team_launch takes this process's rank's arguments only (num_args_per_rank of
 * them) and returns when its kernel has finished. A `wait` that times out on the GPU prints its
 * message and stops the kernel (the launch fails with the driver's error for a device-side
 * assert; the context cannot launch again). Kernels must be compiled for "cuda". */
#define TRI_TEAM_ID_BYTES 128
/* Makes the unique id of a new GPU team into out_id (id_bytes at least TRI_TEAM_ID_BYTES). The
 * process that makes it must join the team as rank 0. Errors: TRI_ERROR_UNSUPPORTED (NVSHMEM
 * cannot be loaded; the message says how to point Tri at it), TRI_ERROR_INVALID_ARGUMENT. Since 0.2. */
TRI_API tri_result tri_team_make_id(tri_context* context, void* out_id, size_t id_bytes);
/* Joins the GPU team of `id` as rank `rank` of `num_ranks`, on CUDA device `device` (0-based),
 * whose primary context becomes current on the calling thread; each rank's symmetric heap is
 * heap_bytes_per_rank bytes (rounded up to 64) of that GPU's memory from NVSHMEM, zeroed. Blocks
 * until every rank has joined. One GPU team per process at a time. Errors:
 * TRI_ERROR_UNSUPPORTED (no driver, no NVSHMEM, peers not reachable by load and store, a second
 * team in this process), TRI_ERROR_INVALID_ARGUMENT (an id of another size, rank past
 * num_ranks, a device past the count), TRI_ERROR_OUT_OF_MEMORY, TRI_ERROR_RUNTIME (NVSHMEM's
 * bootstrap failed). The caller owns *out_team (tri_team_destroy, collective). Since 0.2. */
TRI_API tri_result tri_team_join(tri_context* context, const void* id, size_t id_bytes, uint32_t rank,
                                 uint32_t num_ranks, uint32_t device, uint64_t heap_bytes_per_rank,
                                 tri_team** out_team);
/* This process's rank and the team's size (either pointer may be NULL). A host team reports rank
 * 0. Errors: TRI_ERROR_INVALID_ARGUMENT (NULL team). Since 0.2. */
TRI_API tri_result tri_team_rank(const tri_team* team, uint32_t* out_rank, uint32_t* out_num_ranks);
/* Waits until this rank's GPU work is done and every rank of the team has called it (a host
 * team returns at once). Errors: TRI_ERROR_RUNTIME (a kernel of this rank failed). Since 0.2. */
TRI_API tri_result tri_team_barrier(tri_team* team);
/* Launches this process's rank of a GPU team's kernel on `stream` (a CUstream; NULL: the default
 * stream of the team's context) and returns without waiting, as tri_launch does. args holds
 * this rank's num_args arguments. Errors: those of tri_launch, TRI_ERROR_INVALID_ARGUMENT (a
 * host team, a kernel not compiled for "cuda"). Since 0.2. */
TRI_API tri_result tri_team_launch_async(const tri_kernel* kernel, tri_team* team, uint32_t grid_x, uint32_t grid_y,
                                         uint32_t grid_z, const tri_arg* args, uint32_t num_args, void* stream);

/* ---- Autotuning -----------------------------------------------------------------------------
 * tri_tune compiles one kernel under each config of a space (constexpr values, warps, stages),
 * times a launch of each, keeps the fastest and returns it compiled, with every config's time as
 * JSON (docs/tune.md). Results are stored by key beside the context's disk cache, so a later
 * call with the same key (in this process or another) benchmarks nothing; they can be exported
 * to a file and imported elsewhere, and a frozen mode never benchmarks. The key is the kernel's
 * module text, its name, the base compile options, the space, the values of the space's key
 * arguments (optionally rounded up to a power of two), the types of all arguments, the target
 * and what it runs on (the CPU model and features; the GPU's name and architecture), and Tri's
 * version. Configs that cannot fit the target's program (threads, shared memory, registers) are
 * pruned before compiling. Host targets ("cpu", "interp") are timed with a steady clock;
 * "cuda" with CUDA events on the caller's stream, the L2 cleared between repetitions. */
typedef struct tri_tune_space tri_tune_space;

/* Creates an empty space: no configs, no key arguments, 10 timed repetitions per config. Not
 * thread-safe (like options). The caller owns *out_space. Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_tune_space_create(tri_tune_space** out_space);
/* Releases a space; NULL is allowed. Since 0.2. */
TRI_API TRI_COMPILER void tri_tune_space_destroy(tri_tune_space* space);
/* Appends a config: `count` constexpr values by name (names copied; they add to or replace the
 * base options' values), num_warps (1, 2, 4, 8, 16 or 32) and num_stages (0 to 8; as
 * tri_compile_options_set_num_stages). Configs are numbered from 0 in the order added; the
 * number is the tie-break (below). *out_index (may be NULL) receives it. Errors:
 * TRI_ERROR_INVALID_ARGUMENT (a bad warps or stages value, a NULL name, names NULL with count
 * above 0). Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_tune_space_add_config(tri_tune_space* space, const char* const* names, const int64_t* values,
                                             uint32_t count, int32_t num_warps, int32_t num_stages,
                                             uint32_t* out_index);
/* Appends the product of value lists: every combination of `num_names` constexprs, where
 * constexpr i (names[i]) takes the counts[i] values of values[i], times each of the
 * `num_warps_values` warps values (NULL or 0 of them: 4) and each of the `num_stages_values`
 * stages values (NULL or 0: 0, the target's default). The first name varies slowest, stages
 * fastest. `filter` (may be NULL) keeps only the combinations for which an integer expression
 * over the names, `warps` and `stages` is nonzero, such as "BM * BN <= 32768 && warps <= BM / 16"
 * (C's operators + - * / % == != < <= > >= && || ! and parentheses; docs/tune.md). *out_added
 * (may be NULL) receives how many configs were appended. Errors: TRI_ERROR_INVALID_ARGUMENT (a
 * NULL name or list, a count of 0, a bad warps or stages value, a filter that does not parse,
 * names an unknown value or divides by zero), TRI_ERROR_LIMIT_EXCEEDED (more than 4096 configs
 * in the space). Nothing is appended on error. Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_tune_space_add_product(tri_tune_space* space, const char* const* names,
                                              const int64_t* const* values, const uint32_t* counts,
                                              uint32_t num_names, const int32_t* warps, uint32_t num_warps_values,
                                              const int32_t* stages, uint32_t num_stages_values,
                                              const char* filter, uint32_t* out_added);
/* *out_count receives the number of configs in the space. Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_tune_space_count(const tri_tune_space* space, uint32_t* out_count);
/* *out_value receives config `index`'s value of `name`: one of its constexprs, or "warps" or
 * "stages" (so a grid function can size the grid of a product's config). Errors:
 * TRI_ERROR_INVALID_ARGUMENT (index out of range), TRI_ERROR_NOT_FOUND (the config has no value
 * of that name). Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_tune_space_value(const tri_tune_space* space, uint32_t index, const char* name,
                                        int64_t* out_value);
/* Sets the key arguments: runtime parameters (0-based among them, as tri_launch numbers its
 * arguments) that must be integer scalars, whose values select a result; with bucket nonzero
 * each value is rounded up to a power of two first (1000 and 1024 share a result). Replaces an
 * earlier key. Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_tune_space_set_key(tri_tune_space* space, const uint32_t* params, uint32_t count,
                                          int32_t bucket);
/* Sets the timed launches per config (1 to 10000; default 10). Each config is launched once
 * untimed first; its time is the median of the timed ones. Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_tune_space_set_repetitions(tri_tune_space* space, uint32_t repetitions);

/* Stages of a tuning run, for tri_tune_space_set_progress. */
#define TRI_TUNE_STAGE_COMPILE 0   /* a config finished compiling (or failed to, or was pruned) */
#define TRI_TUNE_STAGE_BENCHMARK 1 /* a config finished benchmarking (or was skipped) */
/* Receives each config as it finishes a stage: the stage (TRI_TUNE_STAGE_*), the config's index,
 * how many configs have finished that stage (this one included) of `count`, its status (TRI_OK,
 * or the error that skipped it) and, for a benchmark, its median time in nanoseconds (0
 * otherwise). Compiles run on the context's threads and are reported in the order they finish;
 * benchmarks run one at a time, in index order. Called on the thread that called tri_tune, which
 * may draw a progress bar from it. Since 0.2. */
typedef void (*tri_tune_stage_fn)(void* user, int32_t stage, uint32_t config, uint32_t done, uint32_t count,
                                  tri_result status, double median_ns);
/* Sets the callback that follows tri_tune's compiles and benchmarks over this space (NULL: none),
 * and the user pointer it receives. It is called besides tri_tune's own `progress`, which sees
 * the benchmarks only. Nothing is reported for a result that was stored or imported (nothing is
 * compiled or measured but the chosen config). Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_tune_space_set_progress(tri_tune_space* space, tri_tune_stage_fn fn, void* user);

/* Flags for tri_tune. */
#define TRI_TUNE_FROZEN 1  /* never benchmark: a key with no stored or imported result uses config 0 (logged) */
#define TRI_TUNE_RETUNE 2  /* ignore stored and imported results: benchmark, then store the new result */
/* An imported result for this kernel, space and key values that was made on another device
 * (another GPU model or architecture, another CPU) is reported at TRI_LOG_WARNING, never used
 * silently. By default the key is tuned here (or, frozen, config 0 is used); with this flag the
 * other device's choice is used without benchmarking. */
#define TRI_TUNE_USE_OTHER_DEVICE 4

/* Receives each config as it finishes benchmarking: its index, the number of configs, its
 * status (TRI_OK, or the error that skipped it) and its median time in nanoseconds (0 when
 * skipped). Called on the thread that called tri_tune. */
typedef void (*tri_tune_progress_fn)(void* user, uint32_t config, uint32_t count, tri_result status,
                                     double median_ns);
/* Gives config `config`'s grid: grid points to three values (x, y, z) that hold the grid
 * passed to tri_tune and may be changed (a grid that depends on a block size). Called on the
 * thread that called tri_tune. */
typedef void (*tri_tune_grid_fn)(void* user, uint32_t config, uint32_t* grid);

/* Tunes kernel `name` of the module over `space` and returns the chosen config compiled (the
 * options are `options`, NULL for defaults, with the config's constexprs, warps and stages).
 * The arguments are tri_launch's; a pointer argument the kernel stores to (or updates
 * atomically) must have its extent set: its bytes are saved before and restored before every
 * launch and after the last, so each launch sees the same inputs and the call leaves the
 * buffers as it found them. All configs compile at once on the context's threads; a config
 * whose compile or launch fails is skipped, its error kept in the result and logged at
 * TRI_LOG_WARNING; so is one pruned before compiling (TRI_ERROR_LIMIT_EXCEEDED, with the bound
 * it passes). Configs run one at a time. The choice: the fastest median; configs within 1%
 * of it tie, and the lowest index among them wins, so the same measurements always choose the
 * same config. A stored or imported result for the key is used without benchmarking
 * (TRI_TUNE_RETUNE ignores them); with TRI_TUNE_FROZEN nothing is benchmarked. progress,
 * grid_fn (either may be NULL) and user are as their types say. *out_result (may be NULL)
 * receives the result as JSON: every config with its status, error and times, the chosen
 * index, and where the result came from (docs/tune.md). Errors: TRI_ERROR_INVALID_ARGUMENT (an
 * empty space, a key parameter out of range or not an integer scalar, a written pointer with
 * extent 0, a stream on a host target), TRI_ERROR_NOT_FOUND (no such kernel),
 * TRI_ERROR_LAUNCH_ARGS (arguments that do not match the kernel), a driver error on "cuda",
 * the error of the first config when no config compiles and runs, or
 * of the chosen config's compile. The caller owns *out_kernel (and *out_result). Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_tune(tri_module* module, const char* name, const tri_compile_options* options,
                            const tri_tune_space* space, uint32_t grid_x, uint32_t grid_y, uint32_t grid_z,
                            void* stream, const tri_arg* args, uint32_t num_args, uint32_t flags,
                            tri_tune_progress_fn progress, tri_tune_grid_fn grid_fn, void* user,
                            tri_kernel** out_kernel, tri_blob** out_result);

/* Writes every tuning result the context knows (stored in its cache directory, made or
 * imported in this context) to a JSON file at `path` (replacing it). *out_count (may be NULL)
 * receives the number written. Errors: TRI_ERROR_IO. Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_tune_export(tri_context* context, const char* path, uint32_t* out_count);
/* Reads a file tri_tune_export wrote and makes its results the context's answers for their
 * keys (ahead of stored ones), so an application can ship its tuning and never tune on a
 * user's machine. A result made on another device matches no key here (the key includes the
 * device); tri_tune reports it for the same kernel, space and key values, and uses it only
 * with TRI_TUNE_USE_OTHER_DEVICE. One made by another Tri version is never used, and is logged
 * at TRI_LOG_WARNING. Errors: TRI_ERROR_IO,
 * TRI_ERROR_CORRUPT_BINARY (not an export, or a damaged result: nothing is imported),
 * TRI_ERROR_UNSUPPORTED_VERSION. *out_imported (may be NULL) receives the count. Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_tune_import(tri_context* context, const char* path, uint32_t* out_imported);

/* Counters for tri_tune_stat, counting this context's calls since it was made. */
#define TRI_TUNE_STAT_TRIALS 0   /* configs benchmarked */
#define TRI_TUNE_STAT_STORED 1   /* tri_tune calls answered by a stored or imported result */
#define TRI_TUNE_STAT_DEFAULTS 2 /* frozen tri_tune calls that found no result and used config 0 */
#define TRI_TUNE_STAT_PRUNED 3   /* configs pruned before compiling */
#define TRI_TUNE_STAT_OTHER_DEVICE 4 /* tri_tune calls that met an imported result of another device */

/* One counter (TRI_TUNE_STAT_*) into *out_value; an unknown one is
 * TRI_ERROR_INVALID_ARGUMENT. Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_tune_stat(tri_context* context, int32_t stat, uint64_t* out_value);

/* Draws a tuning result as an SVG picture (docs/tune.md "Plots"). `result`/`size`: one result's
 * JSON, as tri_tune's out_result, a stored result file or one entry of a tri_tune_export file
 * holds it. The names whose value differs between configs (constexprs, then "warps" and
 * "stages") are the axes: with two or more, a heatmap over the first two, each cell the fastest
 * config with those values and its median time; with one (or a grid of more than 4096 cells), a
 * bar per config. The chosen config is outlined and named; failed and unmeasured configs say so.
 * `title` (UTF-8; NULL: "@kernel on target") heads it. The same result always gives the same
 * bytes. *out_svg receives the SVG text (UTF-8, not NUL-terminated); the blob belongs to no
 * context (its memory comes from malloc), and the caller owns it. Errors:
 * TRI_ERROR_INVALID_ARGUMENT (NULL result or out_svg), TRI_ERROR_CORRUPT_BINARY (not a tuning
 * result), TRI_ERROR_LIMIT_EXCEEDED (more than 4096 configs). Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_tune_plot(const void* result, size_t size, const char* title, tri_blob** out_svg);

/* ---- Disk cache ----------------------------------------------------------------------------
 * Compiled kernels ("cpu": object code; "cuda": PTX) are kept in one file per kernel in the
 * context's cache directory (tri_context_options_set_cache_dir), so a later process compiles
 * nothing; processes that need the same missing kernel at once compile it once. The cache is
 * opened on the first call that needs it. docs/cache.md describes the files. All calls are
 * thread-safe. */

/* Statistics for tri_cache_stat. The counters count this context's use since it was made; the
 * usage values scan the directory now. */
#define TRI_CACHE_STAT_HITS 0           /* compiles answered from the disk (each compile is one hit */
#define TRI_CACHE_STAT_MISSES 1         /* or one miss: compiles that found no usable entry) */
#define TRI_CACHE_STAT_STORES 2         /* entries written */
#define TRI_CACHE_STAT_BYTES_READ 3     /* bytes of entries read on hits */
#define TRI_CACHE_STAT_BYTES_WRITTEN 4  /* bytes of entries written */
#define TRI_CACHE_STAT_EVICTIONS 5      /* entries removed to keep the size bound (or by prune) */
#define TRI_CACHE_STAT_CORRUPT 6        /* unusable entry files found and removed: damaged, forged,
                                          * foreign, not a regular file, too large, or not this
                                          * user's (docs/cache.md) */
#define TRI_CACHE_STAT_WRITE_FAILURES 7 /* entries that could not be written (a full disk) */
#define TRI_CACHE_STAT_LOCK_WAITS 8     /* compiles that waited for another process's compile */
#define TRI_CACHE_STAT_ENTRIES 9        /* entries in the directory now */
#define TRI_CACHE_STAT_BYTES 10         /* bytes of those entries */
#define TRI_CACHE_STAT_MAX_BYTES 11     /* the size bound (0: none) */
#define TRI_CACHE_STAT_ENABLED 12       /* 1 when the disk cache is in use, 0 when it is off */

/* The directory the context's disk cache uses, or "" when it is off; owned by the context.
 * Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_cache_dir(tri_context* context, const char** out_path);
/* One statistic (TRI_CACHE_STAT_*) into *out_value; an unknown one is
 * TRI_ERROR_INVALID_ARGUMENT. Works with the cache off (counters and usage read 0). Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_cache_stat(tri_context* context, int32_t stat, uint64_t* out_value);
/* The entries of the cache directory as text, one line per entry sorted by key, fields separated
 * by tabs: key (32 hex digits), bytes, last use (seconds since 1970), status ("ok", "ok (another
 * build)", or "bad: <why>"), payload kind, target, kernel, what it was made for (the machine),
 * what it was specialized for ("BLOCK=256, warps=8; %x aligned to 16": constexprs, warps and
 * stages on GPU targets, the facts of a launch variant; "-" for none; empty for entries made
 * before Tri recorded it). Every entry is
 * read and checked in full; with verify nonzero, bad ones are removed (their status reads
 * "removed: <why>"). A file that is no entry under an entry's name (a FIFO, a symbolic link, a
 * file over the 256 MiB an entry may have) is listed as bad without being read, so one bad file
 * never stops the listing. TRI_ERROR_UNSUPPORTED when the cache is off. The caller owns
 * *out_text. Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_cache_list(tri_context* context, int32_t verify, tri_blob** out_text);
/* Removes least recently used entries until the rest take at most max_bytes (UINT64_MAX: the
 * context's bound; 0 empties the cache), temporary files left by writers that died more than 10
 * minutes ago, and lock files nobody holds. Files that are not the cache's are left alone.
 * *out_removed (may be NULL) receives the number of entries removed. Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_cache_prune(tri_context* context, uint64_t max_bytes, uint64_t* out_removed);
/* Writes every valid entry of the cache to a bundle file at `path` (replacing a regular file
 * there atomically), with a manifest of the target, kernel, Tri build and machine each entry was
 * made for, so that an application can ship a warm cache. The bundle is unsigned; sign it with
 * tri_bundle_sign. *out_count (may be NULL) receives the number of entries. Errors:
 * TRI_ERROR_UNSUPPORTED (cache off), TRI_ERROR_INVALID_ARGUMENT (`path` exists and is not a
 * regular file: a device, a FIFO, a directory or a symbolic link, which is left as it is),
 * TRI_ERROR_IO. Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_cache_export(tri_context* context, const char* path, uint32_t* out_count);
/* Reads a bundle and adds its entries to the cache, all or none: every entry is validated and
 * written aside first, the bundle's digest and (when the context trusts keys,
 * tri_context_options_add_trusted_key) its signature are checked, and only then do the entries
 * become loadable. Entries made by another build of Tri (they would never be used) are skipped
 * and logged at TRI_LOG_WARNING; a key that appears twice counts once. Errors:
 * TRI_ERROR_UNSUPPORTED (cache off), TRI_ERROR_IO (unreadable file, not a regular file, an entry
 * that could not be written), TRI_ERROR_CORRUPT_BINARY (not a bundle, damaged, or a signature
 * that does not verify), TRI_ERROR_UNSUPPORTED_VERSION (another bundle format),
 * TRI_ERROR_UNTRUSTED (the context trusts keys and the bundle is unsigned or signed by another
 * key); on any error nothing is imported. *out_imported (may be NULL) receives the number of
 * entries added, 0 on an error. Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_cache_import(tri_context* context, const char* path, uint32_t* out_imported);

/* ---- Signing bundles -----------------------------------------------------------------------
 * Bundles carry compiled code, so a host that imports them can require that they were signed
 * (Ed25519, libsodium) with a key it trusts (tri_context_options_add_trusted_key). The secret
 * key stays with whoever builds the bundles; the public key ships with the application. */

/* Makes a new Ed25519 key pair: TRI_SIGN_PUBLIC_KEY_BYTES bytes into out_public_key and
 * TRI_SIGN_SECRET_KEY_BYTES into out_secret_key (keep it secret: whoever holds it can sign code
 * that trusting hosts run). Errors: TRI_ERROR_INVALID_ARGUMENT (NULL buffers, other sizes).
 * Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_sign_keypair(uint8_t* out_public_key, size_t public_key_bytes, uint8_t* out_secret_key,
                                    size_t secret_key_bytes);
/* Signs the bundle at `path` (tri_cache_export's) with secret_key, replacing any signature it
 * has; the bundle is checked in full first and replaced atomically. Errors:
 * TRI_ERROR_INVALID_ARGUMENT (NULL path or key, secret_key_bytes not TRI_SIGN_SECRET_KEY_BYTES, a
 * path that is not a regular file), TRI_ERROR_IO, TRI_ERROR_CORRUPT_BINARY (not a bundle, or
 * damaged), TRI_ERROR_UNSUPPORTED_VERSION. Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_bundle_sign(const char* path, const uint8_t* secret_key, size_t secret_key_bytes);
/* Checks the bundle at `path` in full (format, every entry, digest, signature) without a cache.
 * With public_key (TRI_SIGN_PUBLIC_KEY_BYTES bytes; NULL: any or no signature), it must also be
 * signed by that key. *out_entries receives the number of entries, *out_signed 1 when the bundle
 * carries a valid signature, and out_signer (TRI_SIGN_PUBLIC_KEY_BYTES bytes) the signer's public
 * key (zeros when unsigned); each may be NULL. Errors: TRI_ERROR_INVALID_ARGUMENT, TRI_ERROR_IO,
 * TRI_ERROR_CORRUPT_BINARY (damaged, or a signature that does not verify),
 * TRI_ERROR_UNSUPPORTED_VERSION, TRI_ERROR_UNTRUSTED (public_key given and the bundle is
 * unsigned or signed by another key). Since 0.2. */
TRI_API TRI_COMPILER tri_result tri_bundle_verify(const char* path, const uint8_t* public_key, size_t public_key_bytes,
                                     uint32_t* out_entries, int32_t* out_signed, uint8_t* out_signer);

/* ---- CUDA devices --------------------------------------------------------------------------
 * What the "cuda" target can run on. libcuda.so.1 (the NVIDIA driver) is loaded at run time on
 * the first call that needs it, so libtri runs where no CUDA is installed; the environment
 * variable TRI_LIBCUDA names another driver library (a path) instead. Without a loadable driver
 * these calls fail with TRI_ERROR_UNSUPPORTED and a message that says so ("no CUDA driver:
 * libcuda.so.1 could not be loaded (...)"); with a driver and no GPU, tri_device_count reports
 * 0. Devices are numbered as the driver numbers them (CUDA_VISIBLE_DEVICES applies). All calls
 * are thread-safe; the values are read once per process and then served from memory. */

/* Attributes for tri_device_attribute. Sizes are in bytes. */
#define TRI_DEVICE_ATTR_COMPUTE_CAPABILITY_MAJOR 0 /* 9 on an H100 (sm_90) */
#define TRI_DEVICE_ATTR_COMPUTE_CAPABILITY_MINOR 1 /* 0 on an H100 */
#define TRI_DEVICE_ATTR_SM_COUNT 2                 /* streaming multiprocessors */
#define TRI_DEVICE_ATTR_SHARED_PER_BLOCK 3         /* shared memory per block without opt-in (48 KB) */
#define TRI_DEVICE_ATTR_SHARED_PER_BLOCK_OPTIN 4   /* shared memory per block a kernel may opt into */
#define TRI_DEVICE_ATTR_SHARED_PER_SM 5            /* shared memory per multiprocessor */
#define TRI_DEVICE_ATTR_L2_SIZE 6                  /* L2 cache */
#define TRI_DEVICE_ATTR_MAX_THREADS_PER_BLOCK 7
#define TRI_DEVICE_ATTR_WARP_SIZE 8
#define TRI_DEVICE_ATTR_DRIVER_VERSION 9  /* cuDriverGetVersion: 1000 * major + 10 * minor (12040 = 12.4) */
#define TRI_DEVICE_ATTR_MAX_PTX_VERSION 10 /* highest PTX ISA the driver accepts: 10 * major + minor (84 = 8.4) */

/* Number of CUDA devices into *out_count: 0 when the driver is present but sees no GPU.
 * Errors: TRI_ERROR_UNSUPPORTED when no driver can be loaded (the message gives the reason),
 * TRI_ERROR_INVALID_ARGUMENT for a NULL context or out_count. Since 0.2. */
TRI_API tri_result tri_device_count(tri_context* context, uint32_t* out_count);

/* One attribute (TRI_DEVICE_ATTR_*) of device `device` (0-based) into *out_value. Errors:
 * TRI_ERROR_UNSUPPORTED (no driver), TRI_ERROR_INVALID_ARGUMENT (a device index past the count,
 * an unknown attribute, NULL context or out_value). Since 0.2. */
TRI_API tri_result tri_device_attribute(tri_context* context, uint32_t device, int32_t attribute,
                                        int64_t* out_value);

/* Copies the device's name ("NVIDIA H100 80GB HBM3"), NUL-terminated and truncated to fit, into
 * buffer (which may be NULL when capacity is 0) and stores the size the whole name needs, NUL
 * included, in *out_size: call once with capacity 0 to learn the size. Errors as
 * tri_device_attribute's. Since 0.2. */
TRI_API tri_result tri_device_name(tri_context* context, uint32_t device, char* buffer, size_t capacity,
                                   size_t* out_size);

#ifdef __cplusplus
}
#endif

#endif /* TRI_TRI_H_ */
