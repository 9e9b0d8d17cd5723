//! The machine the bench runs on: how much CPU is free for it
//! ([`cpu_capacity`]), and its description for the tables ([`machine`]).

use std::process::Command;

use crate::stats::{self, median};

/// How much of the machine's CPU this process can get right now: a fixed
/// amount of integer work on one thread, then on two threads at once;
/// `2 * t1 / t2` (2.0 when two cores are idle, about 1.0 when other load
/// leaves one). The median of three tries.
pub(crate) fn cpu_capacity() -> f64 {
    fn spin() -> u64 {
        let mut x = 1u64;
        for i in 0..200_000_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
        std::hint::black_box(x)
    }
    let tries: Vec<f64> = (0..3)
        .map(|_| {
            let (t1, _) = stats::time_ms(spin);
            let (t2, _) = stats::time_ms(|| {
                std::thread::scope(|s| {
                    let a = s.spawn(spin);
                    let b = s.spawn(spin);
                    (a.join().unwrap_or(0), b.join().unwrap_or(0))
                })
            });
            2.0 * t1 / t2
        })
        .collect();
    median(&tries)
}

/// The machine, the OpenCL platform and the PoCL package, as Markdown lines.
pub(crate) fn machine(platform: Option<String>) -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let n_cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines().next().map(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|k| k.parse::<u64>().ok())
                    .unwrap_or(0)
            })
        })
        .map_or("unknown".to_string(), |kb| {
            format!("{:.0} GiB", kb as f64 / (1u64 << 20) as f64)
        });
    let run = |cmd: &str, args: &[&str]| -> String {
        Command::new(cmd)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_else(|| "unknown".into())
    };
    let pocl = run("dpkg-query", &["-W", "-f=${Version}", "pocl-opencl-icd"]);
    let date = run("date", &["-u", "+%Y-%m-%d %H:%M UTC"]);
    let kernel = run("uname", &["-sr"]);
    let load = std::fs::read_to_string("/proc/loadavg").map_or("unknown".into(), |l| {
        l.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    });
    format!(
        "machine: {cpu}, {n_cpus} CPUs, {mem} RAM, {kernel}\nOpenCL: {}; pocl-opencl-icd {pocl}\ndate: {date}; load average at the end {load}\n",
        platform.unwrap_or_else(|| "(platform not queried in this run)".into())
    )
}
