//! The resident model of a run under the layer ("the bytes are
//! within 1.25x of its resident model"), replayed from the report's launch
//! log (`clpart exec --report-launches`).
//!
//! The model follows each byte of each buffer: which holders (the host,
//! each of clpart's devices) have it valid. In the log's order:
//!
//! - `sync_in` (clpart took the application's contents): the host holds
//!   every byte; the bytes that changed are valid on the host only;
//! - `launch`: each device reads exactly what its work-groups read, and
//!   gets each byte it lacks from the host (one move), or from the device
//!   that holds it through the host (two moves: the host then holds it
//!   too); what a device writes is valid on that device only. A buffer the
//!   layer does not keep resident (backed by host memory) starts the
//!   launch on the host only and ends with the host holding every byte;
//! - `sync_out` (the application's copy brought up to date): the host gets
//!   every byte it lacks (one move each);
//! - at the end nothing more: the application reads what it reads through
//!   syncs.
//!
//! The accesses come from the independent oracle: the kernel's coarsened C
//! compiled with gcc and run over the launch's NDRange with every global
//! access traced with its work-group ([`run_coarsened`]), over zero-filled
//! buffers of the logged sizes and the logged scalar values. That is exact
//! for kernels whose accesses depend only on the NDRange and the scalars,
//! as every kernel of the apps it is used on does (read off their
//! sources); a kernel that indexes through buffer contents (a histogram)
//! would be modelled with the accesses of all-zero data, so it is not
//! used there. An access is taken to touch `elem_size` bytes (the logged
//! element size of its argument), as it does in kernels that do not cast
//! their pointers. A work-group belongs to the device whose logged slice
//! holds its id along the split dimension.
//!
//! What the layer moves is `bytes_total` (to and from clpart's devices in
//! launches) plus `bytes_gathered` (to the host outside launches: for the
//! syncs, and when a buffer is seen with other elements); the traffic
//! between the application's device and the host (`bytes_app_sync*`) is the
//! same for any split and not modelled.

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use clpart_tests::cdriver::{run_coarsened, DriverOptions, Traced};
use launcher::{ArgValue, ElemType, HostBuffer, KernelArgs, NdRange};
use serde_json::Value;

const HOST: u8 = 1;

/// The bytes the model and the layer moved, in all and per kernel.
pub struct Comparison {
    pub model: u64,
    pub moved: u64,
    /// Per kernel (and `(syncs)`, `(other gathers)`): model, moved.
    pub per_kernel: BTreeMap<String, (u64, u64)>,
    /// Launches replayed.
    pub n_launches: usize,
    /// The launches that moved more than the model: log position, kernel,
    /// model, moved.
    pub over: Vec<(usize, String, u64, u64)>,
}

impl Comparison {
    pub fn ratio(&self) -> f64 {
        if self.model == 0 {
            if self.moved == 0 {
                1.0
            } else {
                f64::INFINITY
            }
        } else {
            self.moved as f64 / self.model as f64
        }
    }

    /// One line per kernel: `name: model M, moved N (R x)`.
    pub fn per_kernel_text(&self) -> String {
        self.per_kernel
            .iter()
            .map(|(k, (m, n))| {
                let r = if *m == 0 {
                    "-".to_string()
                } else {
                    format!("{:.2}x", *n as f64 / *m as f64)
                };
                format!("  {k}: model {m} B, moved {n} B ({r})")
            })
            .chain(
                self.over.iter().take(8).map(|(at, k, m, n)| {
                    format!("  launch_log[{at}] {k}: model {m} B, moved {n} B")
                }),
            )
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The traced accesses of one launch configuration, by what decides them.
type TraceKey = String;

fn traces() -> &'static Mutex<HashMap<TraceKey, Arc<Vec<Traced>>>> {
    static T: std::sync::OnceLock<Mutex<HashMap<TraceKey, Arc<Vec<Traced>>>>> =
        std::sync::OnceLock::new();
    T.get_or_init(Default::default)
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// The accesses of a logged launch, traced once per program, kernel,
/// NDRange and argument sizes and values (cached for the test process).
fn trace_of(programs: &[Value], launch: &Value) -> Result<Arc<Vec<Traced>>, String> {
    let kernel = launch["kernel"].as_str().unwrap();
    let p = &programs[launch["program"].as_u64().unwrap() as usize];
    let source = p["source"].as_str().unwrap();
    let options: Vec<String> = p["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap().to_string())
        .collect();
    // Buffer ids do not change the accesses; sizes and values do.
    let args: Vec<Value> = launch["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let mut a = a.clone();
            a.as_object_mut().unwrap().remove("buffer");
            a
        })
        .collect();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    source.hash(&mut h);
    let key = format!(
        "{:x} {options:?} {kernel} {} {} {} {}",
        h.finish(),
        launch["global"],
        launch["local"],
        launch["offset"],
        Value::from(args.clone())
    );
    if let Some(t) = traces().lock().unwrap().get(&key) {
        return Ok(t.clone());
    }
    let program = coarsen::parse_program(
        &format!("{kernel}.cl"),
        source,
        &coarsen::ParseOptions {
            clang_args: options,
        },
    )
    .map_err(|e| e.to_string())?;
    let function = program.kernel(Some(kernel)).map_err(|e| e.to_string())?;
    let mut infos = partitioner::args::arg_infos(function);
    infos.sort_by_key(|a| a.index);
    if infos.len() != args.len() {
        return Err(format!(
            "kernel '{kernel}' has {} arguments, the log {}",
            infos.len(),
            args.len()
        ));
    }
    let values = infos
        .iter()
        .zip(&args)
        .map(|(info, a)| match a["kind"].as_str().unwrap() {
            "buffer" => ArgValue::Buffer(HostBuffer::from_bytes(
                ElemType::parse(&info.elem_type, info.elem_size),
                vec![0; a["bytes"].as_u64().unwrap() as usize],
            )),
            "scalar" => ArgValue::Scalar {
                bytes: hex(a["value"].as_str().unwrap()),
                int: a["int"].as_i64(),
            },
            "local" => ArgValue::Local {
                bytes: a["bytes"].as_u64().unwrap(),
            },
            other => panic!("argument kind '{other}'"),
        })
        .collect();
    let mut kargs = KernelArgs::from_values(kernel, &infos, values).map_err(|e| e.to_string())?;
    let nd = NdRange::with_offset(
        &u64s(&launch["global"]),
        &u64s(&launch["local"]),
        &u64s(&launch["offset"]),
    )
    .map_err(|e| e.to_string())?;
    let dir = tempfile::tempdir().unwrap();
    let mut trace = run_coarsened(
        &program,
        kernel,
        &nd,
        &mut kargs,
        dir.path(),
        &DriverOptions { trace: true },
    )?;
    trace.sort_unstable();
    trace.dedup();
    let trace = Arc::new(trace);
    traces().lock().unwrap().insert(key, trace.clone());
    Ok(trace)
}

/// Bytes the resident model moves over the run `report` logged (see the
/// module's doc), beside what the layer moved.
pub fn compare(report: &Value) -> Result<Comparison, String> {
    let log = report["launch_log"]
        .as_array()
        .ok_or("the report has no launch log")?;
    if report["launch_log_truncated"] != false {
        return Err("the launch log is truncated".into());
    }
    let programs = report["programs"].as_array().ok_or("no programs")?;
    let mut holders: HashMap<u64, Vec<u8>> = HashMap::new();
    let mut per_kernel: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut n_launches = 0;
    let mut over = Vec::new();
    for (at, e) in log.iter().enumerate() {
        match e["event"].as_str().unwrap() {
            "sync_in" => {
                let n = e["bytes"].as_u64().unwrap() as usize;
                let h = holders
                    .entry(e["buffer"].as_u64().unwrap())
                    .or_insert_with(|| vec![HOST; n]);
                for m in h.iter_mut() {
                    *m |= HOST;
                }
                for r in e["changed"].as_array().unwrap() {
                    let (lo, hi) = (r[0].as_u64().unwrap(), r[1].as_u64().unwrap());
                    h[lo as usize..hi as usize].fill(HOST);
                }
            }
            "sync_out" => {
                let h = holders
                    .get_mut(&e["buffer"].as_u64().unwrap())
                    .ok_or_else(|| format!("a sync of a buffer never launched: {e}"))?;
                let mut moved = 0;
                for m in h.iter_mut().filter(|m| **m & HOST == 0) {
                    *m |= HOST;
                    moved += 1;
                }
                let s = per_kernel.entry("(syncs)".into()).or_default();
                s.0 += moved;
                s.1 += e["gathered"].as_u64().unwrap();
            }
            "launch" => {
                n_launches += 1;
                let moved = replay(programs, e, &mut holders)?;
                let kernel = e["kernel"].as_str().unwrap().to_string();
                let layer = e["bytes_to_devices"].as_u64().unwrap()
                    + e["bytes_from_devices"].as_u64().unwrap();
                if layer > moved {
                    over.push((at, kernel.clone(), moved, layer));
                }
                let k = per_kernel.entry(kernel).or_default();
                k.0 += moved;
                k.1 += layer;
            }
            other => return Err(format!("unknown event '{other}'")),
        }
    }
    let total = |f: &str| {
        report[f]
            .as_u64()
            .unwrap_or_else(|| panic!("no '{f}' in the report"))
    };
    let moved = total("bytes_total") + total("bytes_gathered");
    let logged: u64 = per_kernel.values().map(|v| v.1).sum();
    if moved > logged {
        per_kernel.insert("(other gathers)".into(), (0, moved - logged));
    }
    Ok(Comparison {
        model: per_kernel.values().map(|v| v.0).sum(),
        moved,
        per_kernel,
        n_launches,
        over,
    })
}

/// One launch of the model over `holders`; returns the bytes it moves.
fn replay(
    programs: &[Value],
    launch: &Value,
    holders: &mut HashMap<u64, Vec<u8>>,
) -> Result<u64, String> {
    let trace = trace_of(programs, launch)?;
    let args = launch["args"].as_array().unwrap();
    // Per argument: the buffer's holders (a buffer not kept resident gets
    // its own, on the host only), its element size.
    let mut own: HashMap<usize, Vec<u8>> = HashMap::new();
    let mut bufs: Vec<Option<(u64, u64)>> = Vec::new();
    for (i, a) in args.iter().enumerate() {
        if a["kind"] != "buffer" {
            bufs.push(None);
            continue;
        }
        let n = a["bytes"].as_u64().unwrap() as usize;
        let id = a["buffer"].as_u64().unwrap();
        if a["resident"] == true {
            holders.entry(id).or_insert_with(|| vec![HOST; n]);
        } else {
            own.insert(i, vec![HOST; n]);
        }
        bufs.push(Some((id, a["elem_size"].as_u64().unwrap())));
    }
    let split = launch["split"] == true;
    let dim = launch["split_dim"].as_u64().unwrap_or(0) as usize;
    let devices: Vec<(u8, u64, u64)> = launch["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                2u8 << d["index"].as_u64().unwrap(),
                d["slice"][0].as_u64().unwrap(),
                d["slice"][1].as_u64().unwrap(),
            )
        })
        .collect();
    let mut moved = 0u64;
    let mut writes: Vec<(usize, u8, usize, usize)> = Vec::new();
    for t in trace.iter() {
        let bit = if split {
            match devices.iter().find(|d| (d.1..d.2).contains(&t.group[dim])) {
                Some(d) => d.0,
                None => return Err(format!("work-group {:?} is in no slice", t.group)),
            }
        } else {
            devices[0].0
        };
        let arg = t.arg_index as usize;
        let (id, es) = bufs[arg].ok_or_else(|| format!("argument {arg} is not a buffer"))?;
        let lo = t.index as usize * es as usize;
        let hi = lo + es as usize;
        if t.is_write {
            writes.push((arg, bit, lo, hi));
            continue;
        }
        let h = match own.get_mut(&arg) {
            Some(h) => h,
            None => holders.get_mut(&id).expect("made above"),
        };
        for m in &mut h[lo..hi] {
            if *m & bit == 0 {
                if *m & HOST == 0 {
                    // from the device that holds it, through the host
                    moved += 1;
                    *m |= HOST;
                }
                moved += 1;
                *m |= bit;
            }
        }
    }
    for (arg, bit, lo, hi) in writes {
        let h = match own.get_mut(&arg) {
            Some(h) => h,
            None => holders.get_mut(&bufs[arg].unwrap().0).unwrap(),
        };
        h[lo..hi].fill(bit);
    }
    // Buffers not kept resident: the host gets back what it lacks.
    for h in own.values() {
        moved += h.iter().filter(|m| **m & HOST == 0).count() as u64;
    }
    Ok(moved)
}
