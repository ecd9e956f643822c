// GPU teams (Team::make_id, Team::join) need NVSHMEM and GPUs. This test runs in a process of
// its own (its own test binary, one test) so that it can point Tri at an NVSHMEM that does not
// exist before anything loads it: then make_id and join must fail with an Error, never crash,
// on any machine. What the GPU paths do with NVSHMEM is tested through the C API
// (examples/c/allgather_gemm.c on GPUs).

use tri::{Context, ErrorKind, Team, TeamId, TEAM_ID_BYTES};

#[test]
fn gpu_team_calls_fail_cleanly_without_nvshmem() {
    // Before any Tri call of this process (NVSHMEM is loaded once, on first use).
    std::env::set_var("TRI_NVSHMEM_LIB", "/nonexistent/libnvshmem_host.so.3");
    let ctx = Context::new().unwrap();
    let e = Team::make_id(&ctx).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{}", e);
    assert!(!e.message().is_empty());

    let id = TeamId::from_bytes(&[0u8; TEAM_ID_BYTES]).unwrap();
    assert_eq!(id.as_bytes().len(), TEAM_ID_BYTES);
    assert_eq!(TeamId::from_bytes(&[0u8; 16]).unwrap_err().kind(), ErrorKind::InvalidArgument);
    // Refused by the library's own checks (no GPU is needed to see these).
    assert_eq!(Team::join(&ctx, &id, 2, 2, 0, 1 << 20).err().unwrap().kind(), ErrorKind::InvalidArgument);
    assert_eq!(Team::join(&ctx, &id, 0, 2, 0, 0).err().unwrap().kind(), ErrorKind::InvalidArgument);
    // A well-formed join: no driver, no device or no NVSHMEM here, an Error either way.
    let e = Team::join(&ctx, &id, 0, 1, 0, 1 << 20).err().unwrap();
    assert!(matches!(e.kind(), ErrorKind::Unsupported | ErrorKind::InvalidArgument | ErrorKind::Runtime), "{}", e);
    assert!(!e.message().is_empty());
}
