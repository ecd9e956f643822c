// Tells the linker where libtri.so is, in order: TRI_LIB_DIR (a build tree's `src/`, or an install
// prefix's `lib/`); pkg-config's `tri` (tri.pc, which `cmake --install` writes; PKG_CONFIG_PATH
// points at a prefix's lib/pkgconfig, or at a build tree for its tri-uninstalled.pc); the
// system's library folders. When none has it the build stops here saying which variable to set,
// instead of the linker's "unable to find library -ltri" later. Only std: no crate is needed.
// With the feature runtime-only the library is libtri_rt.so (pkg-config's `tri_rt`), in the
// same folders.
use std::env;
use std::path::Path;
use std::process::Command;

fn main() {
    let rt = env::var_os("CARGO_FEATURE_RUNTIME_ONLY").is_some();
    let (pc, file) = if rt { ("tri_rt", "libtri_rt.so") } else { ("tri", "libtri.so") };
    println!("cargo:rerun-if-env-changed=TRI_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    if let Ok(dir) = env::var("TRI_LIB_DIR") {
        if !dir.is_empty() {
            println!("cargo:rustc-link-search=native={}", dir);
            return;
        }
    }
    if let Some(dirs) = pkg_config_lib_dirs(pc) {
        for dir in dirs {
            println!("cargo:rustc-link-search=native={}", dir);
        }
        return;
    }
    let system = ["/usr/local/lib", "/usr/lib", "/usr/lib64", "/usr/local/lib64", "/lib", "/lib64"];
    let multiarch =
        env::var("TARGET").ok().map(|t| format!("/usr/lib/{}-linux-gnu", t.split('-').next().unwrap_or("")));
    let found = system.iter().map(|d| d.to_string()).chain(multiarch).any(|d| Path::new(&d).join(file).exists());
    if !found {
        panic!(
            "\n\n{} was not found: set TRI_LIB_DIR to the folder that holds it (a build tree's src/, or \
             <prefix>/lib after `cmake --install`), or PKG_CONFIG_PATH to the folder of tri.pc \
             (<prefix>/lib/pkgconfig), or install Tri where the linker looks (cmake --install build --prefix \
             /usr/local). At run time the loader must find it too (LD_LIBRARY_PATH, or the same system \
             folder).\n\n",
            file
        );
    }
}

// The -L folders of `pkg-config --libs NAME`, or None when pkg-config or tri.pc is missing.
fn pkg_config_lib_dirs(name: &str) -> Option<Vec<String>> {
    let out = Command::new(env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string()))
        .args(["--libs-only-L", name])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    Some(text.split_whitespace().filter_map(|w| w.strip_prefix("-L")).map(str::to_string).collect())
}
