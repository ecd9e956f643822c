// Host teams (docs/distributed.md): a ring of 2 and 4 ranks on "cpu" (and 2 on "interp") whose
// kernel sends each rank's block to the next rank with put + signal, answers the previous rank
// through symm_at + notify, and waits for both signals; every rank's result is read back from the
// symmetric heap. Then the errors: ranks, offsets and sizes the library refuses (with its
// message), argument lists the crate refuses, a wait that times out after the team's timeout,
// and a GPU-team call on a host team. The GPU teams themselves are in tests/team_gpu.rs.

use std::time::{Duration, Instant};

use tri::{Arg, CompileOptions, Context, ErrorKind, Kernel, Module, Target, Team};

// Rank r: src holds its 16 inputs. It puts them into rank r+1's dst and signals r+1's sig = 1;
// stores its rank into rank r-1's ack[1] through symm_at and notifies r-1's ack[0] = 1; waits for
// its own sig and ack[0]; then out[i] = dst[i] (rank r-1's src) + 1000 * ack[1] (rank r+1).
const RING: &str = r#"
kernel @ring(%src: ptr<i32>, %dst: ptr<i32>, %sig: ptr<i32>, %ack: ptr<i32>, %out: ptr<i32>) {
  %me = rank : i32
  %n = num_ranks : i32
  %c1 = const[value=1] : i32
  %me1 = add %me, %c1 : i32
  %next = srem %me1, %n : i32
  %men = add %me, %n : i32
  %men1 = sub %men, %c1 : i32
  %prev = srem %men1, %n : i32
  %r = arange[start=0, end=16] : <16 x i32>
  %sb = splat %src : <16 x ptr<i32>>
  %sp = addptr %sb, %r : <16 x ptr<i32>>
  %x = load %sp : <16 x i32>
  %db = splat %dst : <16 x ptr<i32>>
  %dp = addptr %db, %r : <16 x ptr<i32>>
  put %dp, %x, %next, signal=%sig, signal_value=%c1
  %a1 = addptr %ack, %c1 : ptr<i32>
  %peer_a1 = symm_at %a1, %prev : ptr<i32>
  store %peer_a1, %me
  notify %ack, %c1, %prev
  %t_data = wait %sig, %c1 : i32
  %dp2 = consume_token %dp, %t_data : <16 x ptr<i32>>
  %y = load %dp2 : <16 x i32>
  %t_ack = wait %ack, %c1 : i32
  %a1b = consume_token %a1, %t_ack : ptr<i32>
  %who = load %a1b : i32
  %k = const[value=1000] : i32
  %w = mul %who, %k : i32
  %wv = splat %w : <16 x i32>
  %z = add %y, %wv : <16 x i32>
  %ob = splat %out : <16 x ptr<i32>>
  %op = addptr %ob, %r : <16 x ptr<i32>>
  store %op, %z
  return
}

kernel @never(%sig: ptr<i32>) {
  %c1 = const[value=1] : i32
  %t = wait %sig, %c1 : i32
  return
}
"#;

fn compile(target: Target, name: &str) -> Kernel {
    let ctx = Context::builder().cache_dir("").build().unwrap();
    let module = Module::new(&ctx, RING.as_bytes(), "ring.tri").unwrap();
    module.compile(name, &CompileOptions::builder().target(target).build().unwrap()).unwrap()
}

fn input(rank: u32, i: usize) -> i32 {
    rank as i32 * 100 + i as i32
}

fn ring(target: Target, ranks: u32) {
    let ctx = Context::builder().cache_dir("").build().unwrap();
    let kernel = compile(target, "ring");
    let team = Team::new(&ctx, ranks, 1000).unwrap();
    assert_eq!((team.rank(), team.num_ranks(), team.heap_bytes(), team.is_gpu()), (0, ranks, 1024, false));
    let src = team.alloc(16 * 4).unwrap();
    let dst = team.alloc(16 * 4).unwrap();
    let sig = team.alloc(4).unwrap();
    let ack = team.alloc(8).unwrap();
    let out = team.alloc(16 * 4).unwrap();
    let offsets = [src, dst, sig, ack, out];
    assert!(offsets.iter().all(|o| o % 64 == 0), "{:?}", offsets);
    for (i, a) in offsets.iter().enumerate() {
        assert!(offsets[i + 1..].iter().all(|b| b != a), "{:?}", offsets);
    }
    for r in 0..ranks {
        // Rank r's input, written through the host address tri_team_ptr gives.
        let p = team.ptr(r, src).unwrap() as *mut i32;
        assert_eq!(p as usize % 64, 0);
        // SAFETY: 16 i32s at a 64-byte aligned allocation of 64 bytes; no launch is running.
        let s = unsafe { std::slice::from_raw_parts_mut(p, 16) };
        assert!(s.iter().all(|&v| v == 0), "alloc zeroes: {:?}", s);
        for (i, v) in s.iter_mut().enumerate() {
            *v = input(r, i);
        }
        team.write(r, out, &[-1i32; 16]).unwrap();
    }
    let args: Vec<Vec<Arg>> = (0..ranks)
        .map(|r| {
            vec![
                team.arg::<i32>(r, src, 16).unwrap(),
                team.arg::<i32>(r, dst, 16).unwrap(),
                team.arg::<i32>(r, sig, 1).unwrap(),
                team.arg::<i32>(r, ack, 2).unwrap(),
                team.arg::<i32>(r, out, 16).unwrap(),
            ]
        })
        .collect();
    // SAFETY: ring stays within each buffer and the heaps of the team.
    unsafe { team.launch(&kernel, 1, &args) }.unwrap_or_else(|e| panic!("{:?} {} ranks: {}", target, ranks, e));
    for r in 0..ranks {
        let (prev, next) = ((r + ranks - 1) % ranks, (r + 1) % ranks);
        let mut got = [0i32; 16];
        team.read(r, out, &mut got).unwrap();
        let want: Vec<i32> = (0..16).map(|i| input(prev, i) + 1000 * next as i32).collect();
        assert_eq!(got.to_vec(), want, "{:?}, rank {} of {}", target, r, ranks);
        let mut received = [0i32; 16];
        team.read(r, dst, &mut received).unwrap();
        assert!(received.iter().enumerate().all(|(i, &v)| v == input(prev, i)), "{:?}", received);
        let (mut s, mut a) = ([0i32; 1], [0i32; 2]);
        team.read(r, sig, &mut s).unwrap();
        team.read(r, ack, &mut a).unwrap();
        assert_eq!((s, a), ([1], [1, next as i32]), "signals of rank {} of {}", r, ranks);
    }
    drop(args);
    // A host team has nothing to wait for.
    team.barrier().unwrap();
    for o in offsets {
        team.free(o).unwrap();
    }
    // Freed space is found again, first fit.
    assert_eq!(team.alloc(1024).unwrap(), 0);
    drop(ctx); // the team keeps its context alive
    drop(kernel);
    drop(team);
}

#[test]
fn a_ring_of_two_ranks_on_the_cpu() {
    ring(Target::Cpu, 2);
}

#[test]
fn a_ring_of_four_ranks_on_the_cpu() {
    ring(Target::Cpu, 4);
}

#[test]
fn a_ring_of_two_ranks_on_the_interpreter() {
    ring(Target::Interp, 2);
}

#[test]
fn a_team_may_be_shared_across_threads() {
    let kernel = compile(Target::Cpu, "ring");
    let ctx = Context::new().unwrap();
    let team = Team::new(&ctx, 2, 4096).unwrap();
    // Two launches of the same team at once, on different buffers.
    let sets: Vec<Vec<u64>> = (0..2).map(|_| (0..5).map(|_| team.alloc(64).unwrap()).collect()).collect();
    for set in &sets {
        for r in 0..2 {
            team.write(r, set[0], &(0..16).map(|i| input(r, i)).collect::<Vec<i32>>()).unwrap();
        }
    }
    std::thread::scope(|s| {
        for set in &sets {
            let (team, kernel) = (&team, &kernel);
            s.spawn(move || {
                let args: Vec<Vec<Arg>> =
                    (0..2).map(|r| set.iter().map(|&o| team.arg::<i32>(r, o, 16).unwrap()).collect()).collect();
                // SAFETY: each thread's launch uses its own buffers.
                unsafe { team.launch(kernel, 1, &args) }.unwrap();
            });
        }
    });
    for set in &sets {
        for r in 0..2u32 {
            let mut got = [0i32; 16];
            team.read(r, set[4], &mut got).unwrap();
            assert_eq!(got[3], input(1 - r, 3) + 1000 * (1 - r) as i32, "rank {}", r);
        }
    }
}

#[test]
fn heap_errors_carry_the_library_message() {
    let ctx = Context::new().unwrap();
    assert_eq!(Team::new(&ctx, 0, 64).err().unwrap().kind(), ErrorKind::InvalidArgument);
    assert_eq!(Team::new(&ctx, 2, 0).err().unwrap().kind(), ErrorKind::InvalidArgument);
    assert_eq!(Team::new(&ctx, 1025, 64).err().unwrap().kind(), ErrorKind::LimitExceeded);
    let team = Team::new(&ctx, 2, 256).unwrap();
    let buf = team.alloc(128).unwrap();
    // A rank out of range: the library's error, with its message.
    let e = team.ptr(5, buf).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(e.code(), tri::sys::TRI_ERROR_INVALID_ARGUMENT);
    assert!(e.message().contains("rank 5"), "{}", e);
    assert_eq!(e.message(), tri::last_error_message());
    assert!(team.arg::<i32>(2, buf, 4).err().unwrap().message().contains("rank 2"));
    assert!(team.write(9, buf, &[1i32]).err().unwrap().message().contains("rank 9"));
    assert_eq!(team.ptr(0, 4096).unwrap_err().kind(), ErrorKind::InvalidArgument);
    // Elements past the heap are refused by the crate before any copy.
    let e = team.arg::<f32>(1, buf, 65).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("past the end"), "{}", e);
    assert_eq!(team.read(0, 200, &mut [0i64; 8]).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert!(team.arg::<f32>(1, buf, 64).is_ok());
    // The allocator: zero bytes, no room, an offset that is not an allocation's.
    assert_eq!(team.alloc(0).unwrap_err().kind(), ErrorKind::InvalidArgument);
    let e = team.alloc(256).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::OutOfMemory);
    assert!(!e.message().is_empty());
    assert_eq!(team.free(buf + 64).unwrap_err().kind(), ErrorKind::InvalidArgument);
    team.free(buf).unwrap();
    assert_eq!(team.free(buf).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(team.alloc(256).unwrap(), 0);
}

#[test]
fn launches_check_every_ranks_arguments() {
    let kernel = compile(Target::Cpu, "ring");
    let ctx = Context::new().unwrap();
    let team = Team::new(&ctx, 2, 4096).unwrap();
    let bufs: Vec<u64> = (0..5).map(|_| team.alloc(64).unwrap()).collect();
    let list = |r: u32| -> Vec<Arg> { bufs.iter().map(|&o| team.arg::<i32>(r, o, 16).unwrap()).collect() };
    // One list for a team of two.
    let e = unsafe { team.launch(&kernel, 1, &[list(0)]) }.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LaunchArgs);
    assert!(e.message().contains("team of 2 ranks"), "{}", e);
    // A wrong argument count in rank 1's list, and a wrong type in rank 0's.
    let mut short = list(1);
    short.pop();
    let e = unsafe { team.launch(&kernel, 1, &[list(0), short]) }.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LaunchArgs);
    assert!(e.message().starts_with("rank 1: kernel @ring takes 5 arguments"), "{}", e);
    let mut wrong = list(0);
    wrong[4] = team.arg::<f32>(0, bufs[4], 16).unwrap();
    let e = unsafe { team.launch(&kernel, 1, &[wrong, list(1)]) }.unwrap_err();
    assert!(e.message().starts_with("rank 0: argument 4 (%out)"), "{}", e);
    // The library checks the raw arguments too: rank 1 with one argument too few per rank.
    let raw = [tri::sys::tri_arg { value: tri::sys::tri_arg_value { i: 0 }, extent: 0, kind: 0, dtype: 0 }; 4];
    let code = unsafe { tri::sys::tri_team_launch(kernel.as_raw(), team.as_raw(), 1, 1, 1, raw.as_ptr(), 2) };
    assert_eq!(code, tri::sys::TRI_ERROR_LAUNCH_ARGS);
    // A GPU team's call on a host team: refused by the library.
    let e = unsafe { team.launch_async(&kernel, std::ptr::null_mut(), 1, &list(0)) }.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(!e.message().is_empty());
    // A "cuda" kernel (PTX for a named architecture, made without a GPU) on a host team.
    let ctx2 = Context::builder().cache_dir("").build().unwrap();
    let module = Module::new(&ctx2, RING.as_bytes(), "ring.tri").unwrap();
    let cuda = module.compile("never", &CompileOptions::builder().target(Target::Cuda).arch("sm_90").build().unwrap());
    let cuda = cuda.unwrap();
    let e = unsafe {
        team.launch(&cuda, 1, &[[team.arg::<i32>(0, bufs[2], 1).unwrap()], [team.arg::<i32>(1, bufs[2], 1).unwrap()]])
    }
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("host team"), "{}", e);
    // Nothing ran: the signals are still zero.
    let mut s = [7i32];
    team.read(0, bufs[2], &mut s).unwrap();
    assert_eq!(s, [0]);
}

#[test]
fn a_wait_without_its_signal_times_out_after_the_teams_timeout() {
    let kernel = compile(Target::Cpu, "never");
    let ctx = Context::new().unwrap();
    let team = Team::new(&ctx, 2, 64).unwrap();
    let sig = team.alloc(4).unwrap();
    team.set_wait_timeout(Duration::from_millis(100)).unwrap();
    let args = [[team.arg::<i32>(0, sig, 1).unwrap()], [team.arg::<i32>(1, sig, 1).unwrap()]];
    let start = Instant::now();
    let e = unsafe { team.launch(&kernel, 1, &args) }.unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(20), "{:?}", start.elapsed());
    assert_eq!(e.kind(), ErrorKind::Runtime);
    assert!(e.message().starts_with("rank "), "{}", e);
    assert!(e.message().contains("100 ms"), "{}", e);
    // The signal arrives from the host: the same launch succeeds.
    team.write(0, sig, &[1i32]).unwrap();
    team.write(1, sig, &[1i32]).unwrap();
    team.set_wait_timeout(Duration::ZERO).unwrap();
    unsafe { team.launch(&kernel, 1, &args) }.unwrap();
}
