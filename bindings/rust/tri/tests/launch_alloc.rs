// Launches allocate nothing on the Rust side: a direct launch checks its arguments against the
// kernel's signature and hands them to tri_launch from a buffer on the stack, a plan's launch is
// one C call. A counting global allocator watches this test binary's Rust allocations (the
// library's own, in C++, are not Rust's and not counted).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use tri::{Arg, CompileOptions, Context, Module, Target};

struct Counting;

thread_local! {
    // const-initialized: reading it never allocates, so the allocator may use it.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn allocations() -> usize {
    ALLOCATIONS.with(|n| n.get())
}

// SAFETY: forwards to the system allocator, counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // A thread being torn down has no counter any more: its allocations go uncounted.
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn launches_allocate_nothing() {
    let ctx = Context::new().unwrap();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/vector_add.tri");
    let module = Module::from_file(&ctx, path).unwrap();
    let kernel = module.compile("vector_add", &CompileOptions::builder().target(Target::Cpu).build().unwrap()).unwrap();
    let x: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let mut out = vec![0.0f32; 1000];
    {
        let args = [Arg::slice(&x), Arg::slice(&x), Arg::slice_mut(&mut out), Arg::i32(1000)];
        // SAFETY: vector_add reads x and writes out within n = 1000 elements.
        unsafe { kernel.launch(1, &args) }.unwrap();
        let before = allocations();
        for _ in 0..100 {
            // SAFETY: as above.
            unsafe { kernel.launch(1, &args) }.unwrap();
        }
        assert_eq!(allocations() - before, 0, "direct launches allocated");
    }
    assert_eq!(out[999], 1998.0);
    let raw_x = x.as_ptr() as *const std::ffi::c_void;
    // SAFETY: x outlives the plan; vector_add only reads it here.
    let xa = unsafe { Arg::from_raw_parts(raw_x, 4000, tri::DType::F32) };
    let mut plan = kernel.plan(1, &[xa, xa, Arg::slice_mut(&mut out), Arg::i32(1000)]).unwrap();
    let before = allocations();
    for _ in 0..100 {
        // SAFETY: the plan's buffers are alive and large enough.
        unsafe { plan.launch() }.unwrap();
    }
    assert_eq!(allocations() - before, 0, "plan launches allocated");
}

#[test]
fn launches_of_more_arguments_than_the_stack_buffer_holds() {
    // 40 arguments: past the 32 a launch keeps on the stack. The kernel stores its last one.
    let mut ir = String::from("kernel @wide(%out: ptr<i32>");
    for i in 0..39 {
        ir += &format!(", %a{}: i32", i);
    }
    ir += ") {\n  %z = const[value=0] : i32\n  %p = addptr %out, %z : ptr<i32>\n  store %p, %a38\n  return\n}\n";
    let ctx = Context::new().unwrap();
    let module = Module::new(&ctx, ir.as_bytes(), "wide.tri").unwrap();
    let kernel = module.compile("wide", &CompileOptions::builder().target(Target::Cpu).build().unwrap()).unwrap();
    let mut out = [0i32; 1];
    let mut args = vec![Arg::slice_mut(&mut out)];
    args.extend((0..39).map(|i| Arg::i32(100 + i)));
    // SAFETY: the kernel writes one i32 to out.
    unsafe { kernel.launch(1, &args) }.unwrap();
    drop(args);
    assert_eq!(out[0], 138);
}
