//! What the workers share: a kernel analyzed for one launch, its plan and
//! arguments; the worker protocol (a subprocess per OpenCL configuration).

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use host_data::PlanArgs;
use launcher::{KernelArgs, NdRange, Plan, Runtime};
use ranges_format::RangeFile;
use serde::de::DeserializeOwned;
use serde::Serialize;
use session::{LaunchConfig, Session};

/// One launch's kernel, sizes and `NAME=SPEC` arguments.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct LaunchSpec {
    /// Source name (`kernels/<folder>/X.cl`, or a name for an inline source).
    pub file: String,
    pub source: String,
    pub build: Vec<String>,
    pub kernel: String,
    pub global: Vec<u64>,
    pub local: Vec<u64>,
    pub args: Vec<String>,
}

impl LaunchSpec {
    /// Run `run` of a corpus kernel.
    pub fn corpus(k: &clpart_tests::CorpusKernel, run: usize) -> LaunchSpec {
        LaunchSpec {
            file: k.file(),
            source: k.source.clone(),
            build: k.build.clone(),
            kernel: k.name.clone(),
            global: k
                .run_sizes(run, "--global")
                .iter()
                .map(|&x| x as u64)
                .collect(),
            local: k
                .run_sizes(run, "--local")
                .iter()
                .map(|&x| x as u64)
                .collect(),
            args: k
                .run_args(run)
                .iter()
                .map(|(n, s)| format!("{n}={s}"))
                .collect(),
        }
    }

    /// The NDRange as `1024x768 / 16x16`.
    pub fn ndrange_text(&self) -> String {
        let j = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join("x");
        format!("{} / {}", j(&self.global), j(&self.local))
    }
}

/// A kernel ready to launch.
pub struct Ready {
    pub rf: RangeFile,
    pub plan: Plan,
    pub args: KernelArgs,
    pub nd: NdRange,
}

/// Launches of one prepared kernel, each from the same inputs, each
/// output compared bit for bit with the first launch's (the co-execution
/// and balancing workers).
pub struct Checked {
    pub ready: Ready,
    kernel: String,
    pristine: KernelArgs,
    reference: Option<Vec<u8>>,
    /// Every output so far equals the first.
    pub same_output: bool,
}

impl Checked {
    pub fn new(ready: Ready, kernel: &str) -> Checked {
        Checked {
            pristine: ready.args.clone(),
            ready,
            kernel: kernel.to_string(),
            reference: None,
            same_output: true,
        }
    }

    /// One launch with `shares` (one share: that device alone; several: it
    /// must split).
    pub fn run(&mut self, shares: &[(usize, f64)]) -> Result<launcher::RunReport> {
        let r = &mut self.ready;
        r.args = self.pristine.clone();
        let rep = launcher::launch(
            &mut r.plan,
            &r.nd,
            &mut r.args,
            shares,
            &launcher::LaunchOptions::default(),
        )?;
        if shares.len() > 1 && !rep.split {
            bail!("{} did not split: {:?}", self.kernel, rep.reason);
        }
        let out: Vec<u8> = r
            .args
            .global_buffers()
            .flat_map(|(_, b)| b.as_bytes().to_vec())
            .collect();
        match &self.reference {
            None => self.reference = Some(out),
            Some(want) => self.same_output &= *want == out,
        }
        Ok(rep)
    }
}

/// Analyzes `spec` for its launch (as `clpart run` does), makes the plan
/// and the arguments.
pub fn ready(rt: &Runtime, spec: &LaunchSpec) -> Result<Ready> {
    let config = LaunchConfig::new(&spec.global, &spec.local)
        .with_specs(&spec.args)
        .with_counts(session::Counts::All);
    let session = Session::from_source(&spec.file, &spec.source, &spec.build)
        .with_context(|| format!("parse {}", spec.file))?;
    let (rf, plan) = session
        .into_launch(rt, &spec.kernel, &config)
        .with_context(|| format!("analyze {}", spec.file))?;
    let args = plan.args_from_specs(&spec.args)?;
    let nd = NdRange::new(&spec.global, &spec.local)?;
    Ok(Ready { rf, plan, args, nd })
}

/// Readies `spec` and launches it once, half of its work-groups on each of
/// devices 0 and 1 (the bytes and coverage workers): the kernel, its
/// arguments as they were before the launch, and the launch's report.
pub fn launch_halves(
    rt: &Runtime,
    spec: &LaunchSpec,
) -> Result<(Ready, KernelArgs, launcher::RunReport)> {
    let mut r = ready(rt, spec)?;
    let pristine = r.args.clone();
    let rep = launcher::launch(
        &mut r.plan,
        &r.nd,
        &mut r.args,
        &[(0, 0.5), (1, 0.5)],
        &launcher::LaunchOptions::default(),
    )
    .with_context(|| format!("launch {}", spec.kernel))?;
    Ok((r, pristine, rep))
}

/// Runs this binary as a worker: `--worker NAME` with `env` set (PoCL
/// reads `POCL_DEVICES` and `POCL_MAX_PTHREAD_COUNT` once per process) and
/// `param` as JSON on its standard input (an argument is limited to 128
/// KiB, which the corpus's sources pass), and parses the JSON it prints.
pub fn spawn_worker<P: Serialize, R: DeserializeOwned>(
    name: &str,
    param: &P,
    env: &[(&str, &str)],
    root: &Path,
) -> Result<R> {
    let exe = std::env::current_exe().context("cannot find the bench executable")?;
    let mut cmd = Command::new(exe);
    cmd.args(["--worker", name])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let param = serde_json::to_vec(param)?;
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start worker '{name}'"))?;
    // written from a thread: a worker printing much before it has read all
    // of its parameters cannot block this side
    let mut stdin = child.stdin.take().expect("piped");
    let writer = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &param));
    let out = child
        .wait_with_output()
        .with_context(|| format!("worker '{name}' could not be waited for"))?;
    writer
        .join()
        .map_err(|_| anyhow::anyhow!("the writer of worker '{name}' panicked"))?
        .with_context(|| format!("cannot pass worker '{name}' its parameters"))?;
    if !out.status.success() {
        bail!("worker '{name}' ({env:?}) exited with {}", out.status);
    }
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim())
        .with_context(|| format!("worker '{name}' printed no valid JSON: {text}"))
}
