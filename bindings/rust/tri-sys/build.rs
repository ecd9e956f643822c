// Tells the linker where libtri.so is when it is not in a system folder: TRI_LIB_DIR names the
// folder (a build tree's `src/`, or an install prefix's `lib/`). Without it the system's library
// search path applies, as for any -ltri.
fn main() {
    println!("cargo:rerun-if-env-changed=TRI_LIB_DIR");
    if let Ok(dir) = std::env::var("TRI_LIB_DIR") {
        if !dir.is_empty() {
            println!("cargo:rustc-link-search=native={}", dir);
        }
    }
}
