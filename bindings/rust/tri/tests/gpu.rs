// The "cuda" target on a GPU (examples/cuda_vector_add.rs): device memory from the driver,
// launches and a plan on a non-blocking stream, results checked against Rust. Without a CUDA
// driver or device the example prints "skipped: no CUDA device" and this test returns. On a
// GPU machine:
//
//   TRI_LIB_DIR=$BUILD/src LD_LIBRARY_PATH=$BUILD/src cargo test --offline --test gpu -- --nocapture

#[path = "../examples/cuda_vector_add.rs"]
mod example;

#[test]
fn vector_add_and_softmax_on_the_gpu() {
    match example::run() {
        Ok(true) => {}
        Ok(false) => {} // the example printed "skipped: no CUDA device"
        Err(e) => panic!("{}", e),
    }
}
