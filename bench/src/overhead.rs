//! Item 2: launch overhead with a loaded plan.
//!
//! - Host time clpart adds per launch: `RunReport::host_us`, the launch's
//!   wall time minus the time inside OpenCL calls (the launcher times every
//!   OpenCL call it makes), for `vadd` and for an 8-buffer kernel, on one
//!   device and split 50/50 over two. The launches do not ask for
//!   `bytes_exact` (`LaunchOptions::exact_bytes` off), as the layer's do not.
//! - Wall time per launch of a tiny kernel (`vadd`, 1024 ints) through
//!   clpart on one device against the same launch through opencl3 directly
//!   (buffers created, written, kernel, read, finish, released: what
//!   `launch` does), interleaved, timed the same way from outside.

use std::time::Instant;

use anyhow::{anyhow, Context, Result};
use launcher::{LaunchOptions, Runtime};
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context as ClContext;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL};
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use opencl3::platform::get_platforms;
use opencl3::program::Program;
use opencl3::types::CL_NON_BLOCKING;
use serde::{Deserialize, Serialize};

use crate::common::{ready, spawn_worker, LaunchSpec};
use crate::run::{Report, Settings};
use crate::stats::median;
use crate::table::Row;

/// A kernel with 8 buffer arguments (4 read, 4 written).
pub const ARGS8_SOURCE: &str = "\
__kernel void args8(__global const float *a0, __global const float *a1,
                    __global const float *a2, __global const float *a3,
                    __global float *b0, __global float *b1,
                    __global float *b2, __global float *b3)
{
    int i = get_global_id(0);
    b0[i] = a0[i] + a1[i];
    b1[i] = a1[i] * a2[i];
    b2[i] = a2[i] - a3[i];
    b3[i] = a3[i] + a0[i];
}
";

/// What the parent asks the worker.
#[derive(Serialize, Deserialize)]
pub struct Param {
    pub vadd_source: String,
    /// Timed launches per figure (after warm-up).
    pub n_launches: usize,
    /// Only this figure (`vadd/1`, `vadd/2`, `args8/1`, `args8/2`: kernel
    /// and devices; or `tiny`), for profiling one launch path (`perf`,
    /// valgrind's callgrind) by hand: `echo '{..., "only": "vadd/1"}' |
    /// clpart-bench --worker launch`. `None` (the bench): every figure.
    #[serde(default)]
    pub only: Option<String>,
}

/// Host time of one kernel on some devices.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HostTime {
    pub kernel: String,
    pub n_buffers: usize,
    pub n_devices: usize,
    pub n_elements: u64,
    /// Median `host_us` over the launches.
    pub host_us: f64,
    /// Median launch wall time, microseconds.
    pub wall_us: f64,
    pub n_launches: usize,
}

/// The tiny-kernel comparison.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Tiny {
    pub n_elements: u64,
    /// Median wall time per launch through clpart (one device), µs.
    pub clpart_us: f64,
    /// Median wall time per launch through opencl3 directly, µs.
    pub direct_us: f64,
    /// Median wall time per launch through opencl3 with clpart's pattern of
    /// OpenCL calls (profiling queue, a flush after the enqueues, the kernel
    /// event's profiling times read), µs: separates the cost of those calls
    /// from clpart's host time.
    pub direct_pattern_us: f64,
    /// Median kernel time (profiling events) of clpart's subkernel and of
    /// the original kernel through opencl3 with clpart's pattern, µs.
    pub clpart_kernel_us: f64,
    pub direct_kernel_us: f64,
    /// Median host time clpart adds (`RunReport::host_us`) in these launches.
    pub clpart_host_us: f64,
    /// `clpart_us / direct_us`.
    pub ratio: f64,
    pub n_launches: usize,
}

/// The worker's answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Output {
    pub host: Vec<HostTime>,
    /// `None` only when [`Param::only`] names another figure.
    pub tiny: Option<Tiny>,
    pub platform_version: String,
}

fn vadd_spec(source: &str, n: u64) -> LaunchSpec {
    LaunchSpec {
        file: "kernels/basics/vadd.cl".into(),
        source: source.into(),
        build: vec![],
        kernel: "vadd".into(),
        global: vec![n],
        local: vec![64],
        args: vec![
            format!("a=rand:{n}:1"),
            format!("b=rand:{n}:2"),
            format!("c=zeros:{n}"),
        ],
    }
}

fn args8_spec(n: u64) -> LaunchSpec {
    let mut args: Vec<String> = (0..4).map(|i| format!("a{i}=rand:{n}:{i}")).collect();
    args.extend((0..4).map(|i| format!("b{i}=zeros:{n}")));
    LaunchSpec {
        file: "args8.cl".into(),
        source: ARGS8_SOURCE.into(),
        build: vec![],
        kernel: "args8".into(),
        global: vec![n],
        local: vec![64],
        args,
    }
}

/// The worker (run with `POCL_DEVICES="pthread pthread"`).
pub fn worker(p: &Param) -> Result<Output> {
    let rt = Runtime::new()?;
    let n_elements = 1024;
    let mut host = Vec::new();
    for (spec, n_buffers) in [
        (vadd_spec(&p.vadd_source, n_elements), 3),
        (args8_spec(n_elements), 8),
    ] {
        let mut r = ready(&rt, &spec)?;
        r.plan.prepare(&[0, 1])?;
        // the figures are of a hot path that does not read `bytes_exact`
        let opts = LaunchOptions {
            exact_bytes: false,
            ..Default::default()
        };
        let share_sets: [&[(usize, f64)]; 2] = [&[(0, 1.0)], &[(0, 0.5), (1, 0.5)]];
        for shares in share_sets {
            let name = format!("{}/{}", spec.kernel, shares.len());
            if p.only.as_ref().is_some_and(|o| *o != name) {
                continue;
            }
            let mut hosts = Vec::with_capacity(p.n_launches);
            let mut walls = Vec::with_capacity(p.n_launches);
            for i in 0..p.n_launches + p.n_launches / 10 {
                let rep = launcher::launch(&mut r.plan, &r.nd, &mut r.args, shares, &opts)?;
                if rep.split != (shares.len() > 1) && shares.len() > 1 {
                    return Err(anyhow!("{} did not split: {:?}", spec.kernel, rep.reason));
                }
                if i >= p.n_launches / 10 {
                    hosts.push(rep.host_us);
                    walls.push(rep.wall_ms * 1e3);
                }
            }
            host.push(HostTime {
                kernel: spec.kernel.clone(),
                n_buffers,
                n_devices: shares.len(),
                n_elements,
                host_us: median(&hosts),
                wall_us: median(&walls),
                n_launches: hosts.len(),
            });
        }
    }
    let (tiny, platform_version) = if p.only.as_ref().is_none_or(|o| o == "tiny") {
        let (t, v) = tiny(&rt, &p.vadd_source, n_elements, p.n_launches)?;
        (Some(t), v)
    } else {
        (
            None,
            first_platform()?.version().map_err(|e| anyhow!("{e}"))?,
        )
    };
    Ok(Output {
        host,
        tiny,
        platform_version,
    })
}

/// The first OpenCL platform (PoCL's, as the launcher's devices).
fn first_platform() -> Result<opencl3::platform::Platform> {
    get_platforms()
        .map_err(|e| anyhow!("clGetPlatformIDs: {e}"))?
        .into_iter()
        .next()
        .context("no OpenCL platform")
}

/// The plain-opencl3 side of the comparison: one context and queue on the
/// first PoCL device (no profiling: what a direct user would create), the
/// program built once.
struct Direct {
    /// Profiling queue, flush, kernel event times: clpart's call pattern.
    pattern: bool,
    context: ClContext,
    queue: CommandQueue,
    kernel: Kernel,
    a: Vec<i32>,
    b: Vec<i32>,
    c: Vec<i32>,
}

impl Direct {
    fn new(source: &str, n: usize, pattern: bool) -> Result<(Direct, String)> {
        let platform = first_platform()?;
        let version = platform.version().map_err(|e| anyhow!("{e}"))?;
        let id = *platform
            .get_devices(CL_DEVICE_TYPE_ALL)
            .map_err(|e| anyhow!("clGetDeviceIDs: {e}"))?
            .first()
            .context("no OpenCL device")?;
        let context = ClContext::from_device(&Device::new(id))
            .map_err(|e| anyhow!("clCreateContext: {e}"))?;
        let props = if pattern {
            opencl3::command_queue::CL_QUEUE_PROFILING_ENABLE
        } else {
            0
        };
        let queue = CommandQueue::create_default_with_properties(&context, props, 0)
            .map_err(|e| anyhow!("clCreateCommandQueueWithProperties: {e}"))?;
        let program = Program::create_and_build_from_source(&context, source, "-cl-std=CL1.2")
            .map_err(|e| anyhow!("build vadd: {e}"))?;
        let kernel =
            Kernel::create(&program, "vadd").map_err(|e| anyhow!("clCreateKernel: {e}"))?;
        let a = (0..n as i32).collect();
        let b = (0..n as i32).map(|x| 2 * x).collect();
        Ok((
            Direct {
                pattern,
                context,
                queue,
                kernel,
                a,
                b,
                c: vec![0; n],
            },
            version,
        ))
    }

    /// One launch: three buffers, two writes, the kernel, one read, finish.
    /// Returns the kernel time (profiling) in µs with the pattern, else 0.
    fn launch(&mut self) -> Result<f64> {
        let n = self.a.len();
        let e = |what: &'static str| move |err| anyhow!("{what}: {err}");
        // SAFETY: no host pointer is given; the host vectors outlive the
        // queue's finish below, which every enqueued command precedes.
        unsafe {
            let mut a =
                Buffer::<i32>::create(&self.context, CL_MEM_READ_WRITE, n, std::ptr::null_mut())
                    .map_err(e("clCreateBuffer"))?;
            let mut b =
                Buffer::<i32>::create(&self.context, CL_MEM_READ_WRITE, n, std::ptr::null_mut())
                    .map_err(e("clCreateBuffer"))?;
            let c =
                Buffer::<i32>::create(&self.context, CL_MEM_READ_WRITE, n, std::ptr::null_mut())
                    .map_err(e("clCreateBuffer"))?;
            self.queue
                .enqueue_write_buffer(&mut a, CL_NON_BLOCKING, 0, &self.a, &[])
                .map_err(e("clEnqueueWriteBuffer"))?;
            self.queue
                .enqueue_write_buffer(&mut b, CL_NON_BLOCKING, 0, &self.b, &[])
                .map_err(e("clEnqueueWriteBuffer"))?;
            let kev = ExecuteKernel::new(&self.kernel)
                .set_arg(&a)
                .set_arg(&b)
                .set_arg(&c)
                .set_global_work_size(n)
                .set_local_work_size(64)
                .enqueue_nd_range(&self.queue)
                .map_err(e("clEnqueueNDRangeKernel"))?;
            self.queue
                .enqueue_read_buffer(&c, CL_NON_BLOCKING, 0, &mut self.c, &[])
                .map_err(e("clEnqueueReadBuffer"))?;
            if self.pattern {
                // the launcher flushes after each device's enqueues, and
                // again before it waits
                self.queue.flush().map_err(e("clFlush"))?;
                self.queue.flush().map_err(e("clFlush"))?;
            }
            self.queue.finish().map_err(e("clFinish"))?;
            if self.pattern {
                kev.wait().map_err(e("clWaitForEvents"))?;
                let t0 = kev
                    .profiling_command_start()
                    .map_err(e("clGetEventProfilingInfo"))?;
                let t1 = kev
                    .profiling_command_end()
                    .map_err(e("clGetEventProfilingInfo"))?;
                return Ok(t1.saturating_sub(t0) as f64 / 1e3);
            }
        }
        Ok(0.0)
    }
}

fn tiny(rt: &Runtime, vadd_source: &str, n: u64, n_launches: usize) -> Result<(Tiny, String)> {
    let spec = vadd_spec(vadd_source, n);
    let mut r = ready(rt, &spec)?;
    r.plan.prepare(&[0])?;
    let (mut direct, version) = Direct::new(vadd_source, n as usize, false)?;
    let (mut pattern, _) = Direct::new(vadd_source, n as usize, true)?;
    let opts = LaunchOptions {
        exact_bytes: false,
        ..Default::default()
    };
    let mut via_clpart = Vec::with_capacity(n_launches);
    let mut via_direct = Vec::with_capacity(n_launches);
    let mut via_pattern = Vec::with_capacity(n_launches);
    let (mut k_clpart, mut k_direct, mut host) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n_launches + n_launches / 10 {
        let t = Instant::now();
        let rep = launcher::launch(&mut r.plan, &r.nd, &mut r.args, &[(0, 1.0)], &opts)?;
        let c = t.elapsed().as_secs_f64() * 1e6;
        let t = Instant::now();
        direct.launch()?;
        let d = t.elapsed().as_secs_f64() * 1e6;
        let t = Instant::now();
        let kd = pattern.launch()?;
        let pt = t.elapsed().as_secs_f64() * 1e6;
        if i >= n_launches / 10 {
            via_clpart.push(c);
            via_direct.push(d);
            via_pattern.push(pt);
            k_clpart.push(rep.devices[0].kernel_ms * 1e3);
            k_direct.push(kd);
            host.push(rep.host_us);
        }
    }
    // the direct run computes a + 2a; check it did run
    if direct.c.get(3) != Some(&9) {
        return Err(anyhow!(
            "the direct opencl3 launch computed {:?} for c[3], not 9",
            direct.c.get(3)
        ));
    }
    let clpart_us = median(&via_clpart);
    let direct_us = median(&via_direct);
    Ok((
        Tiny {
            n_elements: n,
            clpart_us,
            direct_us,
            direct_pattern_us: median(&via_pattern),
            clpart_kernel_us: median(&k_clpart),
            direct_kernel_us: median(&k_direct),
            clpart_host_us: median(&host),
            ratio: clpart_us / direct_us,
            n_launches: via_clpart.len(),
        },
        version,
    ))
}

/// Item 2, launch overhead: measures it and adds its rows and JSON to
/// `out`; returns the OpenCL platform it ran on.
pub(crate) fn report(s: &Settings, out: &mut Report) -> Result<String> {
    let Settings {
        root,
        scale,
        corpus,
        ..
    } = s;
    let Report { rows, results, .. } = out;
    eprintln!(
        "== 2. launch overhead ({} launches per figure)",
        scale.n_launches
    );
    let vadd = corpus
        .iter()
        .find(|k| k.name == "vadd")
        .context("kernels/basics/vadd.cl")?;
    let p = Param {
        vadd_source: vadd.source.clone(),
        n_launches: scale.n_launches,
        only: None,
    };
    let o: Output = spawn_worker("launch", &p, &[("POCL_DEVICES", "pthread pthread")], root)?;
    for h in &o.host {
        let what = if h.n_devices == 1 {
            "1 device".to_string()
        } else {
            format!("{} devices 50/50", h.n_devices)
        };
        rows.push(Row::target(
            2,
            format!(
                "host time per launch outside OpenCL, {} ({} buffers, {} elements, {what})",
                h.kernel, h.n_buffers, h.n_elements
            ),
            format!("{:.1} µs (of {:.0} µs wall)", h.host_us, h.wall_us),
            "< 20 µs",
            h.host_us < 20.0,
        ));
    }
    let t = o
        .tiny
        .as_ref()
        .context("the launch worker made no tiny-kernel figure")?;
    rows.push(Row::target(
        2,
        format!(
            "tiny kernel wall per launch, clpart 1 device / opencl3 direct (vadd {} ints)",
            t.n_elements
        ),
        format!(
            "{:.3} ({:.1} µs / {:.1} µs)",
            t.ratio, t.clpart_us, t.direct_us
        ),
        "< 1.10",
        t.ratio < 1.10,
    ));
    rows.push(Row::info(
            2,
            "  the same through opencl3 with clpart's OpenCL call pattern (profiling queue, flush, event times) / opencl3 direct",
            format!("{:.3} ({:.1} µs)", t.direct_pattern_us / t.direct_us, t.direct_pattern_us),
        ));
    rows.push(Row::info(
            2,
            "  in those launches: clpart host time; kernel time clpart subkernel / original kernel (profiling)",
            format!("{:.1} µs; {:.1} µs / {:.1} µs", t.clpart_host_us, t.clpart_kernel_us, t.direct_kernel_us),
        ));
    let platform_version = o.platform_version.clone();
    results.insert("launch".into(), serde_json::to_value(&o)?);
    Ok(platform_version)
}
