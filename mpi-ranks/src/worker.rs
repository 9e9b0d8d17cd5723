//! A rank other than 0: its command loop ([`serve`]).

use std::collections::HashMap;

use launcher::{
    ArgValue, BufferId, BufferSet, DeviceBuffer, ElemType, HostBuffer, KernelArgs, LaunchOptions,
    NdRange, Plan, Runtime,
};
use mpi::traits::*;

use crate::wire::{
    Cmd, LaunchCmd, LaunchedReply, Reply, WireArg, TAG_CMD, TAG_CMD_DATA, TAG_PEER_DATA, TAG_REPLY,
    TAG_REPLY_DATA,
};
use crate::{World, TEST_FAULT_VAR};

/// Serves rank 0's commands until it says `Quit`: allocates buffers,
/// stores and returns elements, runs windows of launches on this rank's
/// devices. Returns the process's exit code (0 after `Quit`; 2 when this
/// rank cannot even start, after telling rank 0 why at its first launch).
pub fn serve(world: &World) -> i32 {
    let comm = &world.world;
    let root = comm.process_at_rank(0);
    let runtime = Runtime::new();
    let mut set = BufferSet::new();
    // buffer id on the wire → id in the set
    let mut ids: HashMap<u32, BufferId> = HashMap::new();
    let mut plans: HashMap<u32, Plan> = HashMap::new();
    let fault = std::env::var(TEST_FAULT_VAR).ok().and_then(|v| {
        let (r, kind) = v.split_once(':')?;
        (r.trim().parse::<i32>().ok()? == comm.rank()).then(|| kind.trim().to_string())
    });
    let reply = |r: &Reply, data: Option<&[u8]>| {
        let text = serde_json::to_vec(r).expect("replies serialize");
        root.send_with_tag(&text[..], TAG_REPLY);
        if let Some(d) = data {
            root.send_with_tag(d, TAG_REPLY_DATA);
        }
    };
    loop {
        let (text, _) = root.receive_vec_with_tag::<u8>(TAG_CMD);
        let cmd: Cmd = match serde_json::from_slice(&text) {
            Ok(c) => c,
            Err(e) => {
                reply(&Reply::Failed(format!("bad command: {e}")), None);
                continue;
            }
        };
        match cmd {
            Cmd::Quit => return 0,
            Cmd::Clear => {
                set = BufferSet::new();
                ids.clear();
                plans.clear();
            }
            Cmd::Free { id } => {
                if let Some(b) = ids.remove(&id) {
                    set.remove(b);
                }
            }
            Cmd::Alloc {
                id,
                elem_type,
                elem_size,
                len,
            } => {
                // failures surface at the next command that uses the buffer
                if let Ok(b) = DeviceBuffer::zeros(ElemType::parse(&elem_type, elem_size), len) {
                    ids.insert(id, set.add(b));
                }
            }
            Cmd::Put { items, bytes } => {
                let data = if bytes > 0 {
                    root.receive_vec_with_tag::<u8>(TAG_CMD_DATA).0
                } else {
                    Vec::new()
                };
                // a failed store is remembered by the buffer being absent:
                // the launch that needs it fails and says so
                if let Err(why) = put(&mut set, &ids, &items, &data) {
                    for (id, _) in &items {
                        if let Some(b) = ids.remove(id) {
                            set.remove(b);
                        }
                    }
                    eprintln!("clpart: rank {}: {why}", comm.rank());
                }
            }
            Cmd::SendTo { to, items } => {
                // the receiver waits for one message whatever happens: an
                // empty one when the elements cannot be read (its store then
                // fails and its launch says so)
                let data = get(&mut set, &ids, &items).unwrap_or_else(|why| {
                    eprintln!("clpart: rank {}: {why}", comm.rank());
                    Vec::new()
                });
                comm.process_at_rank(to)
                    .send_with_tag(&data[..], TAG_PEER_DATA);
            }
            Cmd::RecvFrom { from, items, bytes } => {
                let (data, _) = comm
                    .process_at_rank(from)
                    .receive_vec_with_tag::<u8>(TAG_PEER_DATA);
                let stored = if data.len() as u64 != bytes {
                    Err(format!(
                        "rank {from} sent {} bytes, {bytes} were expected",
                        data.len()
                    ))
                } else {
                    put(&mut set, &ids, &items, &data)
                };
                if let Err(why) = stored {
                    for (id, _) in &items {
                        if let Some(b) = ids.remove(id) {
                            set.remove(b);
                        }
                    }
                    eprintln!("clpart: rank {}: {why}", comm.rank());
                }
            }
            Cmd::Get { items } => match get(&mut set, &ids, &items) {
                Ok(data) => reply(
                    &Reply::Data {
                        bytes: data.len() as u64,
                    },
                    Some(&data),
                ),
                Err(why) => reply(&Reply::Failed(why), None),
            },
            Cmd::Plan {
                idx,
                kernel_ron,
                source,
                build_options,
            } => {
                let made = match &runtime {
                    Ok(rt) => ron::from_str::<ranges_format::KernelRanges>(&kernel_ron)
                        .map_err(|e| format!("range file entry: {e}"))
                        .and_then(|k| {
                            Plan::from_kernel(rt, k, &source, &build_options)
                                .map_err(|e| e.to_string())
                        }),
                    Err(e) => Err(e.to_string()),
                };
                match made {
                    Ok(p) => {
                        plans.insert(idx, p);
                    }
                    Err(why) => eprintln!("clpart: rank {}: plan {idx}: {why}", comm.rank()),
                }
            }
            Cmd::Launch(l) => {
                match fault.as_deref() {
                    Some("abort") => std::process::abort(),
                    Some("exit") => std::process::exit(3),
                    Some("hang") => loop {
                        std::thread::sleep(std::time::Duration::from_secs(3600));
                    },
                    Some("error") => {
                        reply(
                            &Reply::Failed(format!("injected fault ({TEST_FAULT_VAR})")),
                            None,
                        );
                        continue;
                    }
                    _ => {}
                }
                let r = match &runtime {
                    Ok(rt) => launch(rt, &mut set, &ids, &mut plans, &l),
                    Err(e) => Err(format!("no opencl runtime: {e}")),
                };
                match r {
                    Ok(done) => reply(&Reply::Launched(done), None),
                    Err(why) => reply(&Reply::Failed(why), None),
                }
            }
        }
    }
}

fn buffer<'s>(
    set: &'s mut BufferSet,
    ids: &HashMap<u32, BufferId>,
    id: u32,
) -> Result<&'s mut DeviceBuffer, String> {
    ids.get(&id).and_then(|b| set.get_mut(*b)).ok_or_else(|| {
        format!("buffer {id} does not exist on this rank (its allocation or a store failed)")
    })
}

fn put(
    set: &mut BufferSet,
    ids: &HashMap<u32, BufferId>,
    items: &[(u32, Vec<(i64, i64)>)],
    data: &[u8],
) -> Result<(), String> {
    let mut at = 0usize;
    for (id, runs) in items {
        let b = buffer(set, ids, *id)?;
        let es = b.elem().size.max(1) as usize;
        for &(l, h) in runs {
            let n = (h - l + 1).max(0) as usize * es;
            let chunk = data.get(at..at + n).ok_or_else(|| {
                format!(
                    "buffer {id}: the data message is {} bytes, too short",
                    data.len()
                )
            })?;
            b.write(l as u64, chunk)
                .map_err(|e| format!("buffer {id}: {e}"))?;
            at += n;
        }
    }
    if at != data.len() {
        return Err(format!(
            "the data message has {} bytes, the runs {at}",
            data.len()
        ));
    }
    Ok(())
}

fn get(
    set: &mut BufferSet,
    ids: &HashMap<u32, BufferId>,
    items: &[(u32, Vec<(i64, i64)>)],
) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for (id, runs) in items {
        let b = buffer(set, ids, *id)?;
        for &(l, h) in runs {
            let bytes = b
                .read(l as u64, (h - l + 1).max(0) as u64)
                .map_err(|e| format!("buffer {id}: {e}"))?;
            out.extend_from_slice(bytes);
        }
    }
    Ok(out)
}

fn launch(
    rt: &Runtime,
    set: &mut BufferSet,
    ids: &HashMap<u32, BufferId>,
    plans: &mut HashMap<u32, Plan>,
    l: &LaunchCmd,
) -> Result<LaunchedReply, String> {
    let plan = plans
        .get_mut(&l.plan)
        .ok_or_else(|| format!("plan {} was not received or did not load", l.plan))?;
    let nd = NdRange::with_offset(&l.global, &l.local, &l.offset).map_err(|e| e.to_string())?;
    let infos = plan.kernel().args.clone();
    let mut values = Vec::with_capacity(infos.len());
    for (info, a) in infos.iter().zip(&l.args) {
        let elem = ElemType::parse(&info.elem_type, info.elem_size);
        values.push(match a {
            WireArg::Scalar(bytes) => ArgValue::Scalar {
                int: elem.int_from_le_bytes(bytes),
                bytes: bytes.clone(),
            },
            // a placeholder: the bound resident buffer is used
            WireArg::Buffer => ArgValue::Buffer(HostBuffer::zeros(elem, 1)?),
            WireArg::Local(bytes) => ArgValue::Local { bytes: *bytes },
        });
    }
    let name = plan.kernel().name.clone();
    let mut args = KernelArgs::from_values(&name, &infos, values).map_err(|e| e.to_string())?;
    let mut bindings = Vec::with_capacity(l.bindings.len());
    for &(a, id) in &l.bindings {
        bindings.push((
            a,
            *ids.get(&id).ok_or_else(|| {
                format!(
                    "buffer {id} does not exist on this rank (its allocation or a store failed)"
                )
            })?,
        ));
    }
    let n_devices = rt.devices().len();
    if n_devices == 0 {
        return Err("no opencl device on this rank".into());
    }
    let shares = l.shares.clone().unwrap_or_else(|| {
        (0..n_devices)
            .map(|d| (d, 1.0 / n_devices as f64))
            .collect()
    });
    let options = LaunchOptions {
        unchecked: l.unchecked,
        mem_cap_bytes: l.mem_cap_bytes,
        exact_bytes: false,
        ..LaunchOptions::default()
    };
    plan.set_group_window(Some(l.window));
    let r = set.launch(plan, &nd, &mut args, &bindings, &shares, &options);
    plan.set_group_window(None);
    let r = r.map_err(|e| e.to_string())?;
    if r.guard_fired {
        return Err(format!(
            "the run-time guard caught an access outside the analyzed ranges in work-groups [{}, {}) (an analysis defect); this rank's buffers are no longer trusted",
            l.window.0, l.window.1
        ));
    }
    Ok(LaunchedReply {
        wall_ms: r.wall_ms,
        n_devices: r.devices.iter().filter(|d| d.work_groups > 0).count(),
        bytes_to_devices: r.devices.iter().map(|d| d.bytes_to_device).sum(),
        bytes_from_devices: r.devices.iter().map(|d| d.bytes_from_device).sum(),
        kernel_ms: r.devices.iter().map(|d| d.kernel_ms).fold(0.0, f64::max),
        guard_fired: r.guard_fired,
    })
}
