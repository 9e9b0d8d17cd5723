//! Item 11: real applications under the layer. Each host program of
//! [`PROGRAMS`] (`tests/apps/<name>/`, PolyBench-style: its own CPU check,
//! its own timing of the launches and `clFinish` as `device section: X ms`)
//! is built with gcc and run from its folder (it reads `kernel.cl` by a
//! relative path), every run on `POCL_DEVICES="pthread basic"` with one
//! PoCL thread:
//!
//! - plain, cold (a fresh `POCL_CACHE_DIR`) and warm (PoCL's cache where
//!   the caller has it, kept from run to run: PoCL compiles a kernel once
//!   per local size, and a program whose NDRange shrinks per step, with a
//!   local size left to the driver, fills it only over several runs),
//! - under `clpart exec` with the default split (auto), cold (fresh PoCL
//!   and clpart analysis caches: `POCL_CACHE_DIR`, `CLPART_CACHE_DIR`) and
//!   second (the run right after the cold one, back to back, as a user
//!   running a program twice: what the cold run left in the background
//!   may still be at work) and warm (both kept: started once the second
//!   run's processes, the analyses and builds it left in the background
//!   included, have ended),
//! - under `clpart exec --split 0:0.5,1:0.5` (warm), for correctness.
//!
//! The reports give launches and split launches per kernel, and, when the
//! layer writes them, `n_analyses` and `n_builds`. Every run is killed
//! (its whole process group) after a time limit and shows as `timeout`,
//! or once the group's resident memory passes a limit (`memory`): on a
//! shared machine a run that grows without bound would otherwise bring
//! the kernel's OOM killer onto other processes.

use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::layer::find_layer;
use crate::run::{Report, Settings};
use crate::stats::geomean;
use crate::table::Row;

/// One program: its folder under `tests/apps/`, its arguments at the
/// benchmark's sizes and at smoke-run sizes (`--quick`).
pub struct Program {
    pub name: &'static str,
    pub args: &'static [&'static str],
    pub quick_args: &'static [&'static str],
    /// Few launches doing most of the work: counted in the geomean.
    pub compute_bound: bool,
}

/// The programs, at sizes where the plain program's device section takes
/// about 0.3 to 5 s on one single-threaded PoCL device (see BENCHMARKS.md),
/// but jacobi1d, whose 20,000 launches of a tiny kernel measure launch
/// cost. fdtd2d stays at 512 x 512: past it, 500 steps drift beyond the
/// program's own 1e-3 tolerance even plain (PoCL contracts `a - b * c`
/// into a fused multiply-add, its CPU reference does not).
pub const PROGRAMS: &[Program] = &[
    Program {
        name: "lu_shrinking",
        args: &["1024"],
        quick_args: &["64"],
        compute_bound: false,
    },
    Program {
        name: "gramschmidt",
        args: &["640", "640"],
        quick_args: &["64", "64"],
        compute_bound: false,
    },
    Program {
        name: "adi",
        args: &["512", "170"],
        quick_args: &["128", "10"],
        compute_bound: false,
    },
    Program {
        name: "conv3d",
        args: &["256"],
        quick_args: &["48"],
        compute_bound: true,
    },
    Program {
        name: "fdtd2d",
        args: &["512", "512", "500"],
        quick_args: &["128", "128", "20"],
        compute_bound: false,
    },
    Program {
        name: "jacobi1d",
        args: &["4096", "10000"],
        quick_args: &["1024", "200"],
        compute_bound: false,
    },
    Program {
        name: "gemm",
        args: &["768", "768", "768"],
        quick_args: &["256", "256", "256"],
        compute_bound: true,
    },
    Program {
        name: "2mm",
        args: &["768", "768", "768", "768"],
        quick_args: &["192", "192", "192", "192"],
        compute_bound: true,
    },
    Program {
        name: "3mm",
        args: &["640", "640", "640", "640", "640"],
        quick_args: &["128", "128", "128", "128", "128"],
        compute_bound: true,
    },
    Program {
        name: "syrk",
        args: &["1024", "1024"],
        quick_args: &["256", "256"],
        compute_bound: true,
    },
    Program {
        name: "correlation",
        args: &["512", "512"],
        quick_args: &["256", "256"],
        compute_bound: true,
    },
    // a relaxation that splits and a reduction that does not (its last
    // work-group draws a ticket), launched in turn: the reduction runs
    // where the relaxation left the grids
    Program {
        name: "residual",
        args: &["1024", "100"],
        quick_args: &["256", "20"],
        compute_bound: false,
    },
    // an anti-diagonal at each launch, every access through a subscript
    // macro (the guard checks each expansion at its site)
    Program {
        name: "wavefront",
        args: &["2048", "500"],
        quick_args: &["256", "100"],
        compute_bound: false,
    },
];

/// What the `apps` item runs.
pub struct Options {
    /// Programs to run (all of [`PROGRAMS`] when empty).
    pub only: Vec<String>,
    /// `NAME=ARGS` overrides of a program's arguments (space separated).
    pub args: Vec<String>,
    pub quick: bool,
    pub time_limit: Duration,
    /// Resident bytes of a run's process group at which it is killed.
    pub memory_limit: u64,
}

/// How one run ended and what the program printed.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    /// `ok`, `timeout`, `memory` (killed past the memory limit), `exit N`,
    /// or `signal N`.
    pub status: String,
    /// From the line `...: N mismatches`.
    pub mismatches: Option<u64>,
    /// The lines with `mismatches` (the program's own check).
    pub check_lines: Vec<String>,
    /// From the line `device section: X ms`.
    pub device_ms: Option<f64>,
    /// The whole process's wall time (`clpart exec` included).
    pub wall_ms: f64,
}

/// What a `clpart exec --report` file says.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ReportCounts {
    pub launches: u64,
    pub split_launches: u64,
    /// Analyses made (absent from layers that do not count them).
    pub n_analyses: Option<u64>,
    /// Subkernel programs built (likewise).
    pub n_builds: Option<u64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct AppResult {
    pub name: String,
    pub args: Vec<String>,
    pub compute_bound: bool,
    pub plain_cold: Run,
    pub plain_warm: Run,
    pub clpart_cold: Run,
    /// The run right after the cold one, back to back.
    pub clpart_second: Run,
    pub clpart_warm: Run,
    pub clpart_even: Run,
    pub report_cold: Option<ReportCounts>,
    pub report_second: Option<ReportCounts>,
    pub report_warm: Option<ReportCounts>,
    pub report_even: Option<ReportCounts>,
}

impl AppResult {
    /// Plain device section over clpart's, warm (both caches kept).
    pub fn device_speedup_warm(&self) -> Option<f64> {
        ratio(self.plain_warm.device_ms, self.clpart_warm.device_ms)
    }
}

fn ratio(plain: Option<f64>, clpart: Option<f64>) -> Option<f64> {
    match (plain, clpart) {
        (Some(p), Some(c)) if c > 0.0 => Some(p / c),
        _ => None,
    }
}

/// The geomean of the warm device-section speed-ups of the compute-bound
/// programs that finished both ways, with how many counted.
pub fn geomean_compute_bound(results: &[AppResult]) -> (f64, usize, usize) {
    let bound: Vec<&AppResult> = results.iter().filter(|r| r.compute_bound).collect();
    let v: Vec<f64> = bound
        .iter()
        .filter_map(|r| r.device_speedup_warm())
        .collect();
    (geomean(&v), v.len(), bound.len())
}

/// The programs to run with their arguments, checked against the options.
fn selected(o: &Options) -> Result<Vec<(&'static Program, Vec<String>)>> {
    let names: Vec<&str> = PROGRAMS.iter().map(|p| p.name).collect();
    for n in &o.only {
        if !names.contains(&n.as_str()) {
            bail!("--apps: no program '{n}' (programs: {})", names.join(", "));
        }
    }
    let mut overrides = Vec::new();
    for a in &o.args {
        let (n, args) = a
            .split_once('=')
            .with_context(|| format!("--apps-args: '{a}' is not NAME=ARGS"))?;
        if !names.contains(&n) {
            bail!(
                "--apps-args: no program '{n}' (programs: {})",
                names.join(", ")
            );
        }
        overrides.push((
            n.to_string(),
            args.split_whitespace()
                .map(String::from)
                .collect::<Vec<_>>(),
        ));
    }
    Ok(PROGRAMS
        .iter()
        .filter(|p| o.only.is_empty() || o.only.iter().any(|n| n == p.name))
        .map(|p| {
            let args = overrides
                .iter()
                .rev()
                .find(|(n, _)| n == p.name)
                .map(|(_, a)| a.clone())
                .unwrap_or_else(|| {
                    let a = if o.quick { p.quick_args } else { p.args };
                    a.iter().map(|s| s.to_string()).collect()
                });
            (p, args)
        })
        .collect())
}

pub fn run(clpart: &Path, root: &Path, o: &Options) -> Result<Vec<AppResult>> {
    let layer = find_layer(clpart)?;
    let programs = selected(o)?;
    let mut results = Vec::new();
    for (p, args) in programs {
        let dir = root.join("tests/apps").join(p.name);
        let tmp = tempfile::Builder::new()
            .prefix(&format!("clpart-bench-{}-", p.name))
            .tempdir()
            .context("cannot make a temporary folder")?;
        let exe = tmp.path().join(p.name);
        compile(&dir, &exe)?;
        let pocl_plain = tmp.path().join("pocl-plain");
        let pocl_clpart = tmp.path().join("pocl-clpart");
        let clpart_cache = tmp.path().join("clpart-cache");
        for d in [&pocl_plain, &pocl_clpart, &clpart_cache] {
            std::fs::create_dir(d)?;
        }
        eprintln!("  {} {}", p.name, args.join(" "));
        let plain = |what: &str, pocl_cache: Option<&Path>| -> Result<Run> {
            let mut c = Command::new(&exe);
            c.args(&args);
            let r = run_limited(c, &dir, pocl_cache, tmp.path(), o, false)?;
            eprintln!("    plain {what}: {}", run_text(&r));
            Ok(r)
        };
        let plain_cold = plain("cold", Some(&pocl_plain))?;
        let plain_warm = plain("warm", None)?;
        let under = |what: &str,
                     split: Option<&str>,
                     settle: bool|
         -> Result<(Run, Option<ReportCounts>)> {
            let report = tmp.path().join(format!("report-{what}.json"));
            let _ = std::fs::remove_file(&report);
            let mut c = Command::new(clpart);
            c.arg("exec");
            if let Some(s) = split {
                c.args(["--split", s]);
            }
            c.arg("--report")
                .arg(&report)
                .arg("--")
                .arg(&exe)
                .args(&args);
            c.env("CLPART_LAYER", &layer)
                .env("CLPART_CACHE", "1")
                .env("CLPART_CACHE_DIR", &clpart_cache);
            let r = run_limited(c, &dir, Some(&pocl_clpart), tmp.path(), o, settle)?;
            let counts = read_report(&report);
            eprintln!(
                "    clpart {what}: {}{}",
                run_text(&r),
                counts.as_ref().map_or(String::new(), |c| format!(
                    ", {}/{} launches split",
                    c.split_launches, c.launches
                ))
            );
            Ok((r, counts))
        };
        let (clpart_cold, report_cold) = under("cold", None, false)?;
        // an application's first run may exit before the analyses and
        // builds it started are done (they go on in the background and
        // reach the caches), as may the second: the warm run starts once
        // they have all ended
        let (clpart_second, report_second) = under("second", None, true)?;
        let (clpart_warm, report_warm) = under("warm", None, false)?;
        // (and the next program starts once this one's background work,
        // which forced splits start, has ended)
        let (clpart_even, report_even) = under("50-50", Some("0:0.5,1:0.5"), true)?;
        results.push(AppResult {
            name: p.name.to_string(),
            args,
            compute_bound: p.compute_bound,
            plain_cold,
            plain_warm,
            clpart_cold,
            clpart_second,
            clpart_warm,
            clpart_even,
            report_cold,
            report_second,
            report_warm,
            report_even,
        });
    }
    Ok(results)
}

pub(crate) fn compile(dir: &Path, exe: &Path) -> Result<()> {
    let out = Command::new("gcc")
        .args([
            "-O2",
            "-std=c99",
            "-DCL_TARGET_OPENCL_VERSION=120",
            "-Wno-deprecated-declarations",
            "-o",
        ])
        .arg(exe)
        .arg(dir.join("main.c"))
        .args(["-lOpenCL", "-lm"])
        .output()
        .context("running gcc")?;
    if !out.status.success() {
        bail!(
            "gcc {}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

/// Runs `c` in `dir` on "pthread basic" with one PoCL thread and PoCL's
/// kernel cache in `pocl_cache` (the caller's when `None`), its output in
/// files under `tmp`; kills its process group past the time or memory
/// limit of `o`. `settle`: then waits (within the same time limit) until
/// every process of its group has ended, the background work that
/// `clpart exec` leaves included.
fn run_limited(
    mut c: Command,
    dir: &Path,
    pocl_cache: Option<&Path>,
    tmp: &Path,
    o: &Options,
    settle: bool,
) -> Result<Run> {
    use std::os::unix::process::CommandExt;
    let out_path = tmp.join("stdout.txt");
    let err_path = tmp.join("stderr.txt");
    c.current_dir(dir)
        .env("POCL_DEVICES", "pthread basic")
        .env("POCL_MAX_PTHREAD_COUNT", "1")
        .env_remove("OPENCL_LAYERS")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path)?)
        .stderr(std::fs::File::create(&err_path)?)
        .process_group(0);
    if let Some(d) = pocl_cache {
        c.env("POCL_CACHE_DIR", d);
    }
    let t = Instant::now();
    let mut child = c.spawn().context("cannot start the program")?;
    let pgid = child.id() as i32;
    let mut n_polls = 0u64;
    let status: Result<ExitStatus, &str> = loop {
        if let Some(s) = child.try_wait()? {
            break Ok(s);
        }
        let over = if t.elapsed() >= o.time_limit {
            Some("timeout")
        } else if n_polls.is_multiple_of(50) && group_rss_bytes(pgid) > o.memory_limit {
            Some("memory")
        } else {
            None
        };
        if let Some(why) = over {
            // The whole group: `clpart exec` and the program it started.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
            let _ = child.wait();
            break Err(why);
        }
        n_polls += 1;
        // every 2 ms for a second (a program of 100 ms is timed to a few
        // per cent), then every 20
        let step = if t.elapsed() < Duration::from_secs(1) {
            2
        } else {
            20
        };
        std::thread::sleep(Duration::from_millis(step));
    };
    let wall_ms = t.elapsed().as_secs_f64() * 1e3;
    if settle {
        // SAFETY: signal 0 only asks whether the group has a process.
        while unsafe { libc::kill(-pgid, 0) } == 0 {
            if t.elapsed() >= o.time_limit {
                unsafe {
                    libc::kill(-pgid, libc::SIGKILL);
                }
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        eprintln!(
            "    (its background work ended {:.0} ms after it)",
            t.elapsed().as_secs_f64() * 1e3 - wall_ms
        );
    }
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let status = match status {
        Err(why) => why.to_string(),
        Ok(s) if s.success() => "ok".to_string(),
        Ok(s) => match s.code() {
            Some(code) => format!("exit {code}"),
            None => {
                use std::os::unix::process::ExitStatusExt;
                format!("signal {}", s.signal().unwrap_or(0))
            }
        },
    };
    if !["ok", "timeout", "memory"].contains(&status.as_str()) {
        let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
        let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
        eprintln!(
            "    ({status}) {}",
            tail.into_iter().rev().collect::<Vec<_>>().join("\n    ")
        );
    }
    Ok(Run {
        status,
        mismatches: stdout.lines().find_map(mismatches),
        check_lines: stdout
            .lines()
            .filter(|l| l.contains("mismatches"))
            .map(String::from)
            .collect(),
        // (on standard output, or on standard error where a program keeps
        // its output the same from run to run)
        device_ms: stdout
            .lines()
            .chain(
                std::fs::read_to_string(&err_path)
                    .unwrap_or_default()
                    .lines(),
            )
            .find_map(|l| {
                l.strip_prefix("device section: ")?
                    .strip_suffix(" ms")?
                    .trim()
                    .parse()
                    .ok()
            }),
        wall_ms,
    })
}

/// The resident bytes of the processes in group `pgid` (from
/// `/proc/PID/stat`: the group is its 5th field, the resident pages its
/// 24th).
fn group_rss_bytes(pgid: i32) -> u64 {
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut pages = 0;
    for e in dir.flatten() {
        let name = e.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // After the command's closing parenthesis: field 3 onwards.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.get(2).and_then(|g| g.parse::<i32>().ok()) == Some(pgid) {
            pages += f.get(21).and_then(|r| r.parse::<u64>().ok()).unwrap_or(0);
        }
    }
    pages * page
}

/// `N` of a line `...: N mismatches`.
fn mismatches(line: &str) -> Option<u64> {
    let (_, rest) = line.rsplit_once(": ")?;
    rest.strip_suffix(" mismatches")?.trim().parse().ok()
}

fn read_report(path: &Path) -> Option<ReportCounts> {
    let text = std::fs::read_to_string(path).ok()?;
    let r: serde_json::Value = serde_json::from_str(&text).ok()?;
    let sum = |field: &str| -> u64 {
        r["kernels"]
            .as_array()
            .map_or(0, |ks| ks.iter().filter_map(|k| k[field].as_u64()).sum())
    };
    Some(ReportCounts {
        launches: sum("launches"),
        split_launches: sum("split_launches"),
        n_analyses: r["n_analyses"].as_u64(),
        n_builds: r["n_builds"].as_u64(),
    })
}

fn run_text(r: &Run) -> String {
    format!(
        "{}, {} mismatches, device {} ms, wall {:.0} ms",
        r.status,
        r.mismatches.map_or("-".into(), |m| m.to_string()),
        r.device_ms.map_or("-".into(), |d| format!("{d:.0}")),
        r.wall_ms
    )
}

/// The detail table, one row per program.
pub fn table(results: &[AppResult]) -> String {
    let check = |r: &Run| match (r.status.as_str(), r.mismatches) {
        ("timeout" | "memory", s) if s.is_none() => r.status.clone(),
        ("ok", Some(m)) => m.to_string(),
        (_, Some(m)) => format!("{m} ({})", r.status),
        (s, None) => s.to_string(),
    };
    let ms = |x: Option<f64>| {
        x.map_or("-".to_string(), |v| {
            if v < 100.0 {
                format!("{v:.1}")
            } else {
                format!("{v:.0}")
            }
        })
    };
    let killed = |r: &Run| r.status == "timeout" || r.status == "memory";
    let wall = |r: &Run| {
        if killed(r) {
            r.status.clone()
        } else {
            format!("{:.0}", r.wall_ms)
        }
    };
    let dev = |r: &Run| {
        if killed(r) {
            r.status.clone()
        } else {
            ms(r.device_ms)
        }
    };
    let x = |v: Option<f64>| {
        v.map_or("-".to_string(), |v| {
            if v < 0.1 {
                format!("{v:.3}")
            } else {
                format!("{v:.2}")
            }
        })
    };
    let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    let counts = |c: &Option<ReportCounts>, f: &dyn Fn(&ReportCounts) -> String| {
        c.as_ref().map_or("-".to_string(), f)
    };
    let wall_ok = |r: &Run| (r.status == "ok").then_some(r.wall_ms);
    let cells: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            vec![
                format!("{} {}", r.name, r.args.join(" ")),
                format!(
                    "{} / {} / {}",
                    check(&r.plain_warm),
                    check(&r.clpart_warm),
                    check(&r.clpart_even)
                ),
                format!(
                    "{} / {}",
                    counts(&r.report_second, &|c| c.split_launches.to_string()),
                    counts(&r.report_warm, &|c| {
                        format!("{} / {}", c.split_launches, c.launches)
                    })
                ),
                format!(
                    "{} / {}",
                    counts(&r.report_cold, &|c| opt(c.n_analyses)),
                    counts(&r.report_warm, &|c| opt(c.n_analyses))
                ),
                format!(
                    "{} / {}",
                    counts(&r.report_cold, &|c| opt(c.n_builds)),
                    counts(&r.report_warm, &|c| opt(c.n_builds))
                ),
                format!("{} / {}", dev(&r.plain_cold), dev(&r.plain_warm)),
                format!(
                    "{} / {} / {}",
                    dev(&r.clpart_cold),
                    dev(&r.clpart_second),
                    dev(&r.clpart_warm)
                ),
                format!(
                    "{} / {} / {}",
                    x(ratio(r.plain_cold.device_ms, r.clpart_cold.device_ms)),
                    x(ratio(r.plain_warm.device_ms, r.clpart_second.device_ms)),
                    x(r.device_speedup_warm())
                ),
                format!("{} / {}", wall(&r.plain_cold), wall(&r.plain_warm)),
                format!("{} / {}", wall(&r.clpart_cold), wall(&r.clpart_warm)),
                format!(
                    "{} / {}",
                    x(ratio(wall_ok(&r.plain_cold), wall_ok(&r.clpart_cold))),
                    x(ratio(wall_ok(&r.plain_warm), wall_ok(&r.clpart_warm)))
                ),
            ]
        })
        .collect();
    crate::table::detail(
        &[
            "program and arguments",
            "mismatches plain / auto / 50-50",
            "split launches (auto): second / warm of launches",
            "analyses cold / warm",
            "builds cold / warm",
            "device ms plain cold / warm",
            "device ms clpart cold / second / warm",
            "device speed-up cold / second / warm",
            "wall ms plain cold / warm",
            "wall ms clpart cold / warm",
            "wall speed-up cold / warm",
        ],
        &cells,
    )
}

/// Item 11, real host programs under `clpart exec`: measures it and adds
/// its rows, detail table and JSON to `out`.
pub(crate) fn report(s: &Settings, out: &mut Report) -> Result<()> {
    let Settings {
        clpart, root, cli, ..
    } = s;
    let Report {
        rows,
        details,
        results,
    } = out;
    let options = Options {
        only: cli.apps.clone(),
        args: cli.apps_args.clone(),
        quick: cli.quick,
        time_limit: std::time::Duration::from_secs(cli.apps_time_limit),
        memory_limit: cli.apps_memory_limit << 30,
    };
    eprintln!(
        "== 11. real applications under `clpart exec` ({} s and {} GiB limit per run)",
        cli.apps_time_limit, cli.apps_memory_limit
    );
    let a = run(clpart, root, &options)?;
    let (g, n_counted, n_bound) = geomean_compute_bound(&a);
    rows.push(Row::info(
            11,
            format!("apps: device-section speed-up under `clpart exec` (auto, warm caches) over plain, geomean over {n_counted} of {n_bound} compute-bound programs"),
            if n_counted == 0 { "-".into() } else { format!("{g:.2}x") },
        ));
    for r in &a {
        let bad = |run: &Run| run.status != "ok" || run.mismatches != Some(0);
        if bad(&r.plain_warm) || bad(&r.clpart_warm) || bad(&r.clpart_even) {
            rows.push(Row::info(
                11,
                format!("apps: {} own check plain / auto / 50-50", r.name),
                format!(
                    "{} / {} / {}",
                    r.plain_warm.status, r.clpart_warm.status, r.clpart_even.status
                ),
            ));
        }
    }
    details.push_str(&format!(
            "\nReal applications: plain and under `clpart exec` (auto split) on POCL_DEVICES=\"pthread basic\", POCL_MAX_PTHREAD_COUNT=1; plain cold = a fresh PoCL cache, plain warm = the caller's PoCL cache (filled by earlier runs); clpart cold = fresh PoCL and clpart caches, clpart warm = both kept; speed-up = plain / clpart; limits per run {} s, {} GiB resident\n\n{}",
            cli.apps_time_limit,
            cli.apps_memory_limit,
            table(&a)
        ));
    results.insert("apps".into(), serde_json::to_value(&a)?);
    Ok(())
}
