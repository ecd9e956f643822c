// Runs the example program (examples/vector_add_softmax.rs) on the CPU and on the interpreter,
// so `cargo test` checks what the README shows.

#[path = "../examples/vector_add_softmax.rs"]
mod example;

use tri::{Context, Target};

#[test]
fn vector_add_and_softmax_on_the_cpu() {
    let ctx = Context::new().unwrap();
    example::vector_add(&ctx, Target::Cpu, 100_003).unwrap();
    example::softmax(&ctx, Target::Cpu, 64, 1000).unwrap();
}

#[test]
fn vector_add_and_softmax_on_the_interpreter() {
    let ctx = Context::new().unwrap();
    example::vector_add(&ctx, Target::Interp, 2049).unwrap();
    example::softmax(&ctx, Target::Interp, 3, 777).unwrap();
}

#[test]
fn the_error_cases_name_the_argument() {
    let ctx = Context::new().unwrap();
    let wrong = example::wrong_argument(&ctx).unwrap();
    assert!(wrong.message().contains("argument 0 (%x) of kernel @vector_add"), "{}", wrong);
    assert!(wrong.to_string().starts_with("TRI_ERROR_LAUNCH_ARGS: "), "{}", wrong);
    let short = example::too_short(&ctx).unwrap();
    assert!(short.message().contains("vector_add.tri:21:9"), "{}", short);
    assert!(short.message().contains("argument %x (extent 200 bytes)"), "{}", short);
}

#[test]
fn the_whole_program_runs() {
    example::run().unwrap();
}
