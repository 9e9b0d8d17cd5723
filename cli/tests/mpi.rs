//! `mpirun -n N clpart run|steps` (feature `mpi`), ranks over
//! Open MPI on loopback (`--mca btl tcp,self`), each rank with its own PoCL
//! devices.
//!
//! - `run_*_ranks_bit_exact`: outputs equal an unsplit
//!   single-process run bit for bit; the bytes sent to each rank equal the
//!   elements of the ranges the report says were sent (elements times
//!   element size), and equal what the single-process launcher sends the
//!   device with the same slice; everything written comes back.
//! - `jacobi2d_two_ranks_halo_only`: 2-D Jacobi over T steps on 2
//!   ranks: after the first two launches (the first upload), each launch
//!   sends each rank exactly its halo rows (2 rows of the grid) and nothing
//!   else; the result equals one device's.
//! - `two_ranks_in_network_namespaces`: 2 ranks in two network namespaces
//!   joined by a veth pair, traffic over TCP across the interface (root and
//!   a working `ip netns add` needed; skips with the reason otherwise, fails
//!   instead under `CLPART_REQUIRE_NETNS=1`).
//! - `rank_*`: a rank that fails, dies or hangs: rank 0 (or mpirun)
//!   names it, the job exits non-zero within a bounded time, no output file.
//! - `exec_*`: `mpirun -n N clpart exec -- ./app` over host programs of
//!   `tests/apps/` (a 2-D Jacobi, an FDTD-2D, a chained matrix product):
//!   their own check passes, every launch divides across the ranks, a time
//!   loop's steps move its halo rows only (within 1.25x of the halo model)
//!   and at most a tenth of what a whole-buffer remote driver would move;
//!   a rank that stops answering ends the application with an error.

#![cfg(feature = "mpi")]

mod host_apps;

use clpart_tests::workspace_root as root;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn mpirun_args(n: usize) -> Vec<String> {
    [
        "--allow-run-as-root",
        "--oversubscribe",
        "--mca",
        "btl",
        "tcp,self",
        "--mca",
        "btl_tcp_if_include",
        "lo",
        "--mca",
        "oob_tcp_if_include",
        "lo",
        "-n",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([n.to_string()])
    .collect()
}

/// `mpirun -n N clpart ARGS` with `POCL_DEVICES=devices` on every rank and
/// extra environment `env`.
fn mpirun(n: usize, devices: &str, env: &[(&str, &str)], args: &[&str]) -> Output {
    mpirun_in(&root(), n, devices, env, args)
}

/// [`mpirun`] in the folder `dir`.
fn mpirun_in(dir: &Path, n: usize, devices: &str, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut c = Command::new("mpirun");
    c.args(mpirun_args(n));
    for (k, _) in env {
        c.args(["-x", k]);
    }
    c.args(["-x", "POCL_DEVICES"])
        .arg(env!("CARGO_BIN_EXE_clpart"))
        .args(args);
    c.current_dir(dir).env("POCL_DEVICES", devices);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("mpirun runs")
}

fn clpart(devices: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clpart"))
        .args(args)
        .current_dir(root())
        .env("POCL_DEVICES", devices)
        .output()
        .expect("clpart runs")
}

fn ok(o: &Output) -> String {
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "status {:?}\nstdout:\n{out}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_str(&ok(o)).expect("a json report")
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Element bytes of a report's intervals.
fn bytes_of(sent: &serde_json::Value, elem: u64) -> u64 {
    let mut n = 0;
    for arr in sent.as_array().unwrap() {
        for iv in arr[1].as_array().unwrap() {
            n += (iv[1].as_i64().unwrap() - iv[0].as_i64().unwrap() + 1) as u64;
        }
    }
    n * elem
}

/// Runs `kernel` with `args` on `n` ranks (one device each) and unsplit
/// in one process; compares the `--out` buffers bit for bit and checks
/// the bytes per rank.
fn run_case(
    n: usize,
    kernel: &str,
    global: &str,
    local: &str,
    args: &[&str],
    outs: &[&str],
    elem: u64,
) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let mut common: Vec<String> = vec![
        "run".into(),
        kernel.into(),
        "--global".into(),
        global.into(),
        "--local".into(),
        local.into(),
    ];
    for a in args {
        common.push("--arg".into());
        common.push(a.to_string());
    }
    let with_outs = |tag: &str| {
        let mut v = common.clone();
        for o in outs {
            v.push("--out".into());
            v.push(format!(
                "{o}={}",
                dir.path().join(format!("{tag}_{o}.npy")).display()
            ));
        }
        v.push("--json".into());
        v
    };
    let whole = with_outs("whole");
    let whole: Vec<&str> = whole.iter().map(String::as_str).collect();
    ok(&clpart("pthread", &whole));
    let split = with_outs("ranks");
    let split: Vec<&str> = split.iter().map(String::as_str).collect();
    let r = json(&mpirun(n, "pthread", &[], &split));
    assert_eq!(r["n_ranks"], n as u64);
    assert_eq!(r["divided"], true, "{r}");
    for o in outs {
        let a = read(&dir.path().join(format!("whole_{o}.npy")));
        let b = read(&dir.path().join(format!("ranks_{o}.npy")));
        assert!(
            a == b,
            "{kernel}: buffer '{o}' differs from the unsplit run on {n} ranks"
        );
    }
    let mut total = 0;
    for rank in r["ranks"].as_array().unwrap() {
        let to = rank["bytes_to_rank"].as_u64().unwrap();
        let from = rank["bytes_from_rank"].as_u64().unwrap();
        if rank["rank"] == 0 {
            assert_eq!(to, 0, "rank 0 sends itself nothing");
            assert_eq!(from, 0);
            continue;
        }
        assert!(rank["work_groups"].as_u64().unwrap() > 0, "{r}");
        assert_eq!(
            to,
            bytes_of(&rank["sent"], elem),
            "rank {}: bytes sent are its ranges",
            rank["rank"]
        );
        // the written ranges come back, nothing more
        assert_eq!(
            from,
            bytes_of(&rank["written"], elem),
            "rank {}: bytes back are its written ranges",
            rank["rank"]
        );
        assert!(
            to + from < rank["bytes_whole_buffers"].as_u64().unwrap(),
            "{r}"
        );
        total += to + from;
    }
    assert_eq!(total, r["bytes_mpi"].as_u64().unwrap());
    // every work-group counted once, in every dimension, as `clpart run`
    // counts a device's (not the rows of the split dimension)
    let sizes = |s: &str| -> Vec<u64> { s.split(',').map(|x| x.trim().parse().unwrap()).collect() };
    let n_groups: u64 = sizes(global)
        .into_iter()
        .zip(sizes(local))
        .map(|(g, l)| g / l)
        .product();
    let counted: u64 = r["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["work_groups"].as_u64().unwrap())
        .sum();
    assert_eq!(counted, n_groups, "{r}");
    r
}

#[test]
fn run_two_ranks_bit_exact() {
    let r = run_case(
        2,
        "kernels/basics/vadd.cl",
        "1024",
        "64",
        &["a=rand:1024:1", "b=rand:1024:2", "c=zeros:1024"],
        &["c"],
        4,
    );
    // vadd: rank 1 gets half of a and b, and returns half of c
    let r1 = &r["ranks"][1];
    assert_eq!(r1["bytes_to_rank"], 2 * 512 * 4);
    assert_eq!(r1["bytes_from_rank"], 512 * 4);
    run_case(
        2,
        "kernels/linear_algebra/matmul.cl",
        "64,48",
        "16,8",
        &["c=zeros:3072", "a=rand:3072:1", "b=rand:4096:2", "width=64"],
        &["c"],
        4,
    );
}

#[test]
fn run_three_ranks_bit_exact() {
    run_case(
        3,
        "kernels/stencils/conv1d.cl",
        "1024",
        "32",
        &[
            "in=rand:997:3",
            "filt=rand:11:4",
            "out=zeros:997",
            "n=997",
            "radius=5",
        ],
        &["out"],
        4,
    );
    run_case(
        3,
        "kernels/linear_algebra/matmul.cl",
        "64,48",
        "16,8",
        &["c=zeros:3072", "a=rand:3072:1", "b=rand:4096:2", "width=64"],
        &["c"],
        4,
    );
}

#[test]
fn run_matches_the_single_process_launcher_per_device() {
    // 2 ranks of one device each vs one process with 2 devices split 0.5/0.5:
    // rank 1 is sent what device 1 is sent
    let args = [
        "run",
        "kernels/stencils/conv1d.cl",
        "--global",
        "1024",
        "--local",
        "64",
        "--arg",
        "in=rand:1024:1",
        "--arg",
        "filt=rand:7:2",
        "--arg",
        "out=zeros:1024",
        "--arg",
        "n=1024",
        "--arg",
        "radius=3",
        "--json",
    ];
    let ranks = json(&mpirun(2, "pthread", &[], &args));
    let mut one: Vec<&str> = args.to_vec();
    one.extend(["--split", "0:0.5,1:0.5"]);
    let devs = json(&clpart("pthread pthread", &one));
    let d1 = devs["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["index"] == 1)
        .unwrap();
    assert_eq!(
        ranks["ranks"][1]["bytes_to_rank"], d1["bytes_to_device"],
        "ranks {ranks}\ndevices {devs}"
    );
    assert_eq!(
        ranks["ranks"][1]["bytes_from_rank"],
        d1["bytes_from_device"]
    );
}

#[test]
fn jacobi2d_two_ranks_halo_only() {
    let dir = tempfile::tempdir().unwrap();
    let file = root().join("kernels/iterative/jacobi2d.ron");
    let file = file.to_str().unwrap();
    let a1 = dir.path().join("a1.npy");
    let a2 = dir.path().join("a2.npy");
    ok(&clpart(
        "pthread",
        &["steps", file, "--out", &format!("A={}", a1.display())],
    ));
    let r = json(&mpirun(
        2,
        "pthread",
        &[],
        &[
            "steps",
            file,
            "--json",
            "--verify",
            "--out",
            &format!("A={}", a2.display()),
        ],
    ));
    assert!(read(&a1) == read(&a2), "2 ranks differ from one device");
    assert_eq!(r["verified"], true);
    let launches = r["launches"].as_array().unwrap();
    assert_eq!(launches.len(), 20);
    // 256 x 256 floats, split along y into halves: a halo is the interior
    // of one row (the border columns are never read): 254 floats
    let row = 254 * 4;
    for (i, l) in launches.iter().enumerate() {
        let m = &l["mpi"];
        assert_eq!(m["divided"], true, "{l}");
        let (to1, from1) = (
            m["per_rank"][1][0].as_u64().unwrap(),
            m["per_rank"][1][1].as_u64().unwrap(),
        );
        if i >= 2 {
            // rank 1 lacks one row of the grid it reads (rank 0's last
            // row of its half); rank 0 lacks rank 1's first row
            assert_eq!(to1, row, "launch {i}: {m}");
            assert_eq!(from1, row, "launch {i}: {m}");
            assert_eq!(m["bytes_mpi"].as_u64().unwrap(), 2 * row);
            let sent = &m["ranks"][1]["sent"];
            assert_eq!(
                sent.as_array().unwrap().len(),
                1,
                "one array, one run: {sent}"
            );
            assert_eq!(sent[0][1].as_array().unwrap().len(), 1, "one run: {sent}");
        }
    }
    eprintln!(
        "jacobi2d on 2 ranks: {} B over mpi per step after the first, whole buffers {} B per step",
        launches[5]["mpi"]["bytes_mpi"], launches[5]["mpi"]["bytes_whole_buffers"]
    );
}

/// A fault in rank 1: the job ends non-zero in bounded time, names rank
/// 1, and leaves no output file.
fn fault(kind: &str, expect: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.npy");
    let t0 = Instant::now();
    let o = mpirun(
        2,
        "pthread",
        &[("CLPART_TEST_RANK_FAULT", &format!("1:{kind}"))],
        &[
            "run",
            "kernels/basics/vadd.cl",
            "--global",
            "1024",
            "--local",
            "64",
            "--arg",
            "a=rand:1024:1",
            "--arg",
            "b=rand:1024:2",
            "--arg",
            "c=zeros:1024",
            "--out",
            &format!("c={}", out.display()),
            "--rank-timeout",
            "5",
        ],
    );
    let took = t0.elapsed();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{kind}: the job succeeded");
    assert!(took < Duration::from_secs(60), "{kind}: took {took:?}");
    assert!(
        err.contains(expect),
        "{kind}: stderr does not say '{expect}':\n{err}"
    );
    assert!(!out.exists(), "{kind}: an output file was written");
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "{kind}: something was left in the output folder"
    );
}

#[test]
fn rank_error_is_named() {
    fault("error", "clpart: error: rank 1 failed: injected fault");
}

#[test]
fn rank_hang_times_out() {
    fault("hang", "rank 1 did not answer within 5 s");
}

#[test]
fn rank_abort_is_reported() {
    // mpirun names the rank and its signal, and stops rank 0
    fault("abort", "rank 1");
}

#[test]
fn rank_exit_is_reported() {
    // mpirun names it as process [[job,1],1] with its exit code
    fault("exit", "],1]");
}

/// Whether this process may make network namespaces: root, and an
/// `ip netns add` that works (a container without CAP_SYS_ADMIN refuses it).
fn netns_available() -> Result<(), String> {
    if unsafe_geteuid() != 0 {
        return Err("not root".into());
    }
    let probe = format!("clpprobe{}", std::process::id() % 100000);
    let o = Command::new("ip")
        .args(["netns", "add", &probe])
        .output()
        .map_err(|e| format!("no 'ip' command: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "'ip netns add' does not work here: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ));
    }
    let _ = Command::new("ip").args(["netns", "del", &probe]).output();
    Ok(())
}

fn unsafe_geteuid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

fn sh(cmd: &str) -> Result<(), String> {
    let o = Command::new("sh")
        .args(["-c", cmd])
        .output()
        .map_err(|e| e.to_string())?;
    if o.status.success() {
        Ok(())
    } else {
        Err(format!(
            "'{cmd}': {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ))
    }
}

#[test]
fn two_ranks_in_network_namespaces() {
    let Some(netns) = Netns::make("two_ranks_in_network_namespaces") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.npy");
    let whole = dir.path().join("w.npy");
    let run = [
        "run",
        "kernels/basics/vadd.cl",
        "--global",
        "4096",
        "--local",
        "64",
        "--arg",
        "a=rand:4096:1",
        "--arg",
        "b=rand:4096:2",
        "--arg",
        "c=zeros:4096",
        "--json",
    ];
    let out_arg = format!("c={}", out.display());
    let args = [&run[..], &["--out", &out_arg]].concat();
    let (o, crossed) = netns.mpirun(&root(), &[], &args);
    let r = json(&o);
    assert_eq!(r["divided"], true);
    ok(&clpart(
        "pthread",
        &[&run[..], &["--out", &format!("c={}", whole.display())]].concat(),
    ));
    assert!(
        read(&out) == read(&whole),
        "across namespaces differs from one process"
    );
    // the elements really crossed the veth: its tx+rx bytes exceed what MPI moved
    let moved = r["bytes_mpi"].as_u64().unwrap();
    assert!(
        moved > 0 && crossed >= moved,
        "veth carried {crossed} B, mpi moved {moved} B"
    );
    eprintln!("netns: mpi moved {moved} B of elements; the veth carried {crossed} B");
}

#[test]
fn exec_across_network_namespaces() {
    let Some(netns) = Netns::make("exec_across_network_namespaces") else {
        return;
    };
    // the three programs of the exec tests, each once, rank 1 in namespace b
    for (name, args, skip, per_step, halo) in [
        ("jacobi2d", &["96", "12"][..], 2, 1, Some(2 * 96 * 4)),
        ("fdtd2d", &["64", "80", "8"][..], 3, 3, Some(2 * 80 * 4)),
        ("2mm", &[][..], 0, 1, None),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("r.json");
        let layer = layer();
        let exe = app(name);
        let env = [
            ("POCL_MAX_PTHREAD_COUNT", "1"),
            ("CLPART_LAYER", layer.to_str().unwrap()),
            ("CLPART_CACHE_DIR", dir.path().to_str().unwrap()),
        ];
        let mut cmd = vec!["exec", "--wait-for-analysis", "--split", "0:0.5,1:0.5"];
        cmd.extend([
            "--report",
            report.to_str().unwrap(),
            "--report-launches",
            "--",
        ]);
        cmd.push(exe.to_str().unwrap());
        cmd.extend(args);
        let (o, crossed) = netns.mpirun(&root().join("tests/apps").join(name), &env, &cmd);
        let out = ok(&o);
        assert!(out.contains(" 0 mismatches"), "{name}: {out}");
        let r: serde_json::Value = serde_json::from_slice(&read(&report)).unwrap();
        assert_eq!(r["rank_launches_divided"], r["rank_launches"], "{name}");
        if let Some(h) = halo {
            halo_only(&r, skip, per_step, h);
        }
        let moved = r["bytes_mpi"].as_u64().unwrap();
        assert!(
            moved > 0 && crossed >= moved,
            "{name}: the veth carried {crossed} B in all, mpi moved {moved} B"
        );
        eprintln!("netns exec {name}: mpi moved {moved} B of elements; the veth carried {crossed} B so far");
    }
}

/// Two network namespaces joined by a veth pair, removed when dropped.
struct Netns {
    a: String,
    b: String,
    va: String,
}

impl Netns {
    /// The namespaces, or `None` (the test skips, saying why) where this
    /// machine cannot make them; `CLPART_REQUIRE_NETNS=1` (where the
    /// machine is known to allow it) makes the skip a failure.
    fn make(test: &str) -> Option<Netns> {
        if let Err(why) = netns_available() {
            assert!(
                std::env::var_os("CLPART_REQUIRE_NETNS").is_none_or(|v| v != "1"),
                "{test}: CLPART_REQUIRE_NETNS=1 but {why}"
            );
            eprintln!("{test}: skipped: {why}");
            return None;
        }
        // names unique to this run and test
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let tag = (std::process::id() % 10000) * 10
            + NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let n = Netns {
            a: format!("clpa{tag}"),
            b: format!("clpb{tag}"),
            va: format!("cva{tag}"),
        };
        let (a, b, va) = (&n.a, &n.b, &n.va);
        let vb = format!("cvb{tag}");
        let setup = (|| -> Result<(), String> {
            sh(&format!("ip netns add {a}"))?;
            sh(&format!("ip netns add {b}"))?;
            sh(&format!("ip link add {va} type veth peer name {vb}"))?;
            sh(&format!("ip link set {va} netns {a}"))?;
            sh(&format!("ip link set {vb} netns {b}"))?;
            sh(&format!("ip -n {a} addr add 10.218.0.1/24 dev {va}"))?;
            sh(&format!("ip -n {b} addr add 10.218.0.2/24 dev {vb}"))?;
            sh(&format!(
                "ip -n {a} link set {va} up && ip -n {a} link set lo up"
            ))?;
            sh(&format!(
                "ip -n {b} link set {vb} up && ip -n {b} link set lo up"
            ))?;
            Ok(())
        })();
        if let Err(e) = setup {
            drop(n);
            panic!("netns setup failed: {e}");
        }
        Some(n)
    }

    /// `mpirun -n 2 clpart ARGS` in folder `dir`, rank 0 in namespace a,
    /// rank 1 in b (its daemon started through an rsh agent), out-of-band
    /// and MPI traffic over the veth only; returns the job's output and the
    /// bytes the veth carried.
    fn mpirun(&self, dir: &Path, env: &[(&str, &str)], args: &[&str]) -> (Output, u64) {
        let tmp = tempfile::tempdir().unwrap();
        let agent = tmp.path().join("agent.sh");
        std::fs::write(
            &agent,
            format!(
                "#!/bin/sh\nshift\nexec ip netns exec {} sh -c \"$*\"\n",
                self.b
            ),
        )
        .unwrap();
        sh(&format!("chmod +x {}", agent.display())).unwrap();
        let hosts = tmp.path().join("hosts");
        std::fs::write(&hosts, "10.218.0.1 slots=1\n10.218.0.2 slots=1\n").unwrap();
        let mut c = Command::new("ip");
        c.args([
            "netns",
            "exec",
            &self.a,
            "mpirun",
            "--allow-run-as-root",
            "--hostfile",
        ])
        .arg(&hosts);
        c.args(["--mca", "plm_rsh_agent"]).arg(&agent);
        c.args([
            "--mca",
            "oob_tcp_if_include",
            "10.218.0.0/24",
            "--mca",
            "btl",
            "tcp,self",
            "--mca",
            "btl_tcp_if_include",
            "10.218.0.0/24",
            "-x",
            "POCL_DEVICES",
        ]);
        for (k, _) in env {
            c.args(["-x", k]);
        }
        c.args(["-n", "2", env!("CARGO_BIN_EXE_clpart")]).args(args);
        c.current_dir(dir)
            .env("POCL_DEVICES", "pthread")
            .stdin(Stdio::null());
        for (k, v) in env {
            c.env(k, v);
        }
        let o = c.output().expect("mpirun runs");
        let stats = Command::new("ip")
            .args(["-n", &self.a, "-s", "-j", "link", "show", &self.va])
            .output()
            .unwrap();
        let s: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
        let st = &s[0]["stats64"];
        let crossed = st["tx"]["bytes"].as_u64().unwrap() + st["rx"]["bytes"].as_u64().unwrap();
        (o, crossed)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = sh(&format!("ip netns del {}", self.a));
        let _ = sh(&format!("ip netns del {}", self.b));
    }
}

/// Under mpirun, as in one process, every `--out` is reserved before the
/// launches: one that cannot be written stops the run before anything
/// runs, with its name, and no other output is written.
#[test]
fn outputs_under_mpirun_are_all_written_or_none() {
    let dir = tempfile::tempdir().unwrap();
    let ok = dir.path().join("c.npy");
    let bad = dir.path().join("missing").join("a.npy");
    let (c, a) = (
        format!("c={}", ok.display()),
        format!("a={}", bad.display()),
    );
    let mut args = vec!["run", "kernels/basics/vadd.cl"];
    args.extend_from_slice(clpart_tests::VADD_RUN_ARGS);
    args.extend_from_slice(&["--out", &c, "--out", &a]);
    let o = mpirun(2, "pthread", &[], &args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("--out 'a="), "{err}");
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "an output was written: {err}"
    );
}

use host_apps::layer;

/// `tests/apps/<app>` built once per test run.
fn app(name: &str) -> std::path::PathBuf {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    static BUILT: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let dir = DIR.get_or_init(|| tempfile::tempdir().unwrap()).path();
    let mut built = BUILT.lock().unwrap();
    if !built.iter().any(|b| b == name) {
        host_apps::compile(name, dir);
        built.push(name.to_string());
    }
    dir.join(name)
}

/// `mpirun -n N clpart exec --split split -- tests/apps/<name> args` on one
/// single-core PoCL device per rank, in the program's folder, waiting for
/// each kernel's analysis, with the launch log; returns the job's output
/// and the report.
fn exec_ranks(
    n: usize,
    name: &str,
    args: &[&str],
    split: &str,
    env: &[(&str, &str)],
    rank_timeout_s: u32,
) -> (Output, Option<serde_json::Value>) {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r.json");
    let layer = layer();
    let exe = app(name);
    let mut all_env = vec![
        ("POCL_MAX_PTHREAD_COUNT", "1"),
        ("CLPART_LAYER", layer.to_str().unwrap()),
        ("CLPART_CACHE_DIR", dir.path().to_str().unwrap()),
    ];
    all_env.extend_from_slice(env);
    let mut cmd = vec!["exec", "--wait-for-analysis", "--split", split];
    cmd.extend(["--report", report.to_str().unwrap(), "--report-launches"]);
    let timeout = rank_timeout_s.to_string();
    cmd.extend(["--rank-timeout", &timeout, "--", exe.to_str().unwrap()]);
    cmd.extend(args);
    let o = mpirun_in(
        &root().join("tests/apps").join(name),
        n,
        "pthread",
        &all_env,
        &cmd,
    );
    let r = std::fs::read(&report)
        .ok()
        .map(|b| serde_json::from_slice(&b).expect("a json report"));
    (o, r)
}

/// Runs `name` across `n` ranks at even shares: its own check passes and
/// every launch divides across the ranks. Returns the report.
fn exec_divides(n: usize, name: &str, args: &[&str]) -> serde_json::Value {
    let even = (0..n)
        .map(|r| format!("{r}:{}", 1.0 / n as f64))
        .collect::<Vec<_>>()
        .join(",");
    let (o, r) = exec_ranks(n, name, args, &even, &[], 120);
    let out = ok(&o);
    assert!(out.contains(" 0 mismatches"), "{name} on {n} ranks:\n{out}");
    let r = r.expect("a report");
    assert_eq!(r["n_ranks"], n as u64);
    for k in r["kernels"].as_array().unwrap() {
        assert!(k["launches"].as_u64().unwrap() > 0, "{k}");
        assert_eq!(k["split_launches"], k["launches"], "{name}: {k}");
    }
    assert_eq!(r["rank_launches"], r["rank_launches_divided"], "{name}");
    for rank in r["ranks"].as_array().unwrap() {
        assert!(rank["work_groups"].as_u64().unwrap() > 0, "{name}: {rank}");
        assert_eq!(rank["devices"], 1, "{name}: {rank}");
    }
    // the fields a report under mpirun adds to one process's (schema 2)
    assert_eq!(r["schema_version"], 2);
    for field in [
        "n_ranks",
        "bytes_mpi",
        "bytes_mpi_whole_buffers",
        "rank_launches",
        "rank_launches_divided",
        "ranks",
        "ranks_error",
    ] {
        assert!(r.get(field).is_some(), "{name}: no '{field}' in the report");
    }
    let moved = r["bytes_mpi"].as_u64().unwrap();
    let whole = r["bytes_mpi_whole_buffers"].as_u64().unwrap();
    assert!(moved > 0, "{name}: nothing crossed");
    eprintln!("{name} on {n} ranks: {moved} B over mpi, whole buffers {whole} B");
    r
}

/// The element bytes over MPI of each launch in the launch log.
fn mpi_per_launch(r: &serde_json::Value) -> Vec<u64> {
    r["launch_log"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "launch")
        .map(|e| e["bytes_mpi"].as_u64().expect("a launch across ranks"))
        .collect()
}

/// A time loop: after its first `skip` launches (the first scatter), the
/// bytes over MPI per `per_step` launches stay within 1.25x of
/// `halo_per_step`, and the whole run moves at most a tenth of what a
/// whole-buffer driver would.
fn halo_only(r: &serde_json::Value, skip: usize, per_step: usize, halo_per_step: u64) {
    let per = mpi_per_launch(r);
    assert!(per.len() > skip + per_step, "{per:?}");
    for step in per[skip..].chunks(per_step) {
        let b: u64 = step.iter().sum();
        assert!(
            b * 4 <= halo_per_step * 5,
            "a step moved {b} B, the halo model {halo_per_step} B: {per:?}"
        );
    }
    let moved = r["bytes_mpi"].as_u64().unwrap();
    let whole = r["bytes_mpi_whole_buffers"].as_u64().unwrap();
    assert!(
        moved * 10 <= whole,
        "{moved} B over mpi against {whole} B whole"
    );
}

#[test]
fn exec_jacobi2d_across_ranks_moves_halos() {
    // 96 x 96 floats split by rows: each boundary's halo is one row each
    // way (the interior columns, 94 floats; the model counts 96)
    for n in [2, 3] {
        let r = exec_divides(n, "jacobi2d", &["96", "12"]);
        // (the first two launches bring both grids: the scatter)
        halo_only(&r, 2, 1, (n as u64 - 1) * 2 * 96 * 4);
    }
}

#[test]
fn exec_fdtd2d_across_ranks_moves_halos() {
    // 64 x 80 fields split by rows: per step and boundary, one row of hz
    // (for ey) and one of ey (for hz), 80 floats each
    for n in [2, 3] {
        let r = exec_divides(n, "fdtd2d", &["64", "80", "8"]);
        halo_only(&r, 3, 3, (n as u64 - 1) * 2 * 80 * 4);
    }
}

#[test]
fn exec_chained_matrix_product_across_ranks() {
    for n in [2, 3] {
        let r = exec_divides(n, "2mm", &[]);
        assert_eq!(r["kernels"][0]["launches"], 2);
    }
}

#[test]
fn exec_rank_that_stops_answering_ends_the_application() {
    let t0 = Instant::now();
    let (o, _) = exec_ranks(
        2,
        "jacobi2d",
        &["96", "12"],
        "0:0.5,1:0.5",
        &[("CLPART_TEST_RANK_FAULT", "1:hang")],
        10,
    );
    let took = t0.elapsed();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "the job succeeded");
    assert!(took < Duration::from_secs(90), "took {took:?}");
    assert!(
        err.contains("rank 1 did not answer within 10 s"),
        "stderr does not name rank 1:\n{err}"
    );
    // the application saw an OpenCL error at its launch (its own message)
    assert!(err.contains("launch failed: -5"), "{err}");
    assert!(!String::from_utf8_lossy(&o.stdout).contains("0 mismatches"));
}

#[test]
fn exec_rank_that_dies_ends_the_job() {
    // rank 1 aborts at its first launch: mpirun names it and stops the
    // job, rank 0's clpart and the application with it
    let t0 = Instant::now();
    let (o, _) = exec_ranks(
        2,
        "jacobi2d",
        &["96", "12"],
        "0:0.5,1:0.5",
        &[("CLPART_TEST_RANK_FAULT", "1:abort")],
        10,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "the job succeeded");
    assert!(
        t0.elapsed() < Duration::from_secs(90),
        "took {:?}",
        t0.elapsed()
    );
    assert!(
        err.contains("rank 1"),
        "stderr does not name rank 1:\n{err}"
    );
    assert!(!String::from_utf8_lossy(&o.stdout).contains("0 mismatches"));
}

#[test]
fn exec_an_application_without_opencl_ends_every_rank() {
    // the other ranks wait for rank 0's application, which never starts MPI
    let t0 = Instant::now();
    let layer = layer();
    let env = [("CLPART_LAYER", layer.to_str().unwrap())];
    let o = mpirun_in(&root(), 2, "pthread", &env, &["exec", "--", "true"]);
    ok(&o);
    assert!(t0.elapsed() < Duration::from_secs(60));
}

#[test]
fn exec_launches_that_do_not_divide_run_on_rank_0_after_a_gather() {
    // residual: the relaxation divides across the ranks; the convergence
    // reduction (an atomic ticket) does not and runs on the application's
    // device, after what the ranks wrote is gathered; histogram's atomic
    // sums would be glued element by element, which ranks do not do: its
    // launches run whole on rank 0 and say so
    let (o, r) = exec_ranks(2, "residual", &["64", "12"], "0:0.5,1:0.5", &[], 120);
    assert!(ok(&o).contains(" 0 mismatches"));
    let r = r.expect("a report");
    let kernel = |name: &str| {
        r["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["name"] == name)
            .unwrap_or_else(|| panic!("no kernel {name}: {r}"))
            .clone()
    };
    let relax = kernel("relax");
    assert_eq!(relax["split_launches"], relax["launches"], "{relax}");
    assert!(relax["bytes_mpi"].as_u64().unwrap() > 0);
    let change = kernel("change");
    assert_eq!(change["split_launches"], 0);
    assert!(
        change["reason"].as_str().unwrap().contains("atomic"),
        "{change}"
    );
    let (o, r) = exec_ranks(2, "histogram", &[], "0:0.5,1:0.5", &[], 120);
    assert!(ok(&o).contains(" 0 mismatches"));
    let h = &r.expect("a report")["kernels"][0];
    assert_eq!(h["split_launches"], 0, "{h}");
    assert!(
        h["reason"]
            .as_str()
            .unwrap()
            .contains("which ranks do not do"),
        "{h}"
    );
}

#[test]
fn exec_auto_shares_follow_the_ranks_rates() {
    // under automatic shares (the default) each launch configuration runs
    // where it was measured faster: divided across the ranks, its windows
    // following each rank's rate, or on the application's device alone
    // (a launch too small to pay), and every result is exact
    let (o, r) = exec_ranks(2, "fdtd2d", &["64", "80", "8"], "auto", &[], 120);
    assert!(ok(&o).contains(" 0 mismatches"));
    let r = r.expect("a report");
    assert_eq!(r["rank_launches_divided"], r["rank_launches"]);
    assert!(
        r["rank_launches"].as_u64().unwrap() > 0,
        "nothing ran on the ranks"
    );
    for k in r["kernels"].as_array().unwrap() {
        let home: u64 = k["reasons"]
            .as_object()
            .map(|m| {
                m.iter()
                    .filter(|(why, _)| why.starts_with("runs on the application's device"))
                    .map(|(_, n)| n.as_u64().unwrap())
                    .sum()
            })
            .unwrap_or(0);
        assert_eq!(
            k["split_launches"].as_u64().unwrap() + home,
            k["launches"].as_u64().unwrap(),
            "a launch neither divided nor at home: {k}"
        );
    }
}

#[test]
fn exec_host_backed_buffers_across_ranks() {
    // a CL_MEM_USE_HOST_PTR buffer is not resident: each launch lends a
    // copy to the ranks and takes what they wrote back into it
    let (o, r) = exec_ranks(2, "scale_map", &[], "0:0.5,1:0.5", &[], 120);
    assert!(ok(&o).contains(" 0 mismatches"));
    let k = &r.expect("a report")["kernels"][0];
    assert_eq!(k["split_launches"], k["launches"], "{k}");
    assert!(k["bytes_mpi"].as_u64().unwrap() > 0, "{k}");
}
