//! Launches through a `session::Door` on two PoCL devices that are not
//! alike (`pthread` and `basic`): a first automatic launch runs in two
//! rounds (over resident buffers too, unless the door refuses that), later
//! ones at the measured shares; fixed shares are taken as given and teach
//! the door nothing.

use std::sync::{Once, OnceLock};

use host_data::PlanArgs;
use launcher::{DeviceBuffer, KernelArgs, LaunchOptions, NdRange, Plan, Runtime};
use session::{Buffers, Door, LaunchConfig, Session, Shares};

const VADD: &str =
    "__kernel void vadd(__global const int *a, __global const int *b, __global int *c)\n{\n    \
    int i = get_global_id(0);\n    c[i] = a[i] + b[i];\n}\n";

/// Work-items of the launches: 128 work-groups of 64, enough for rounds.
const N: u64 = 8192;

static ENV: Once = Once::new();
static RUNTIME: OnceLock<Runtime> = OnceLock::new();

fn runtime() -> Runtime {
    ENV.call_once(|| {
        // Before any OpenCL call: PoCL reads it when the ICD loader loads it.
        std::env::set_var("POCL_DEVICES", "pthread basic");
    });
    let rt = RUNTIME
        .get_or_init(|| Runtime::new().expect("pocl devices"))
        .clone();
    assert_eq!(rt.devices().len(), 2, "expected the two pocl devices");
    assert!(!rt.alike(&[0, 1]), "pthread and basic should differ");
    rt
}

fn session() -> Session {
    Session::from_source("vadd.cl", VADD, &[]).unwrap()
}

fn plan<'s>(s: &'s mut Session, rt: &Runtime) -> &'s mut Plan {
    let config = LaunchConfig::new(&[N], &[64]);
    s.plan(rt, "vadd", &config).unwrap().0
}

fn args(plan: &Plan) -> KernelArgs {
    plan.args_from_specs(&[
        format!("a=rand:{N}:1"),
        format!("b=rand:{N}:2"),
        format!("c=zeros:{N}"),
    ])
    .unwrap()
}

fn nd() -> NdRange {
    NdRange::new(&[N], &[64]).unwrap()
}

fn in_two_rounds(r: &launcher::RunReport) -> bool {
    r.notes.iter().any(|n| n.starts_with("in two rounds"))
}

fn verify() -> LaunchOptions {
    LaunchOptions {
        verify: true,
        ..Default::default()
    }
}

#[test]
fn a_first_automatic_launch_runs_in_rounds_then_at_the_measured_shares() {
    let rt = runtime();
    let mut s = session();
    let plan = plan(&mut s, &rt);
    let (nd, key) = (nd(), launcher::launch_key("vadd", &nd()));
    let auto = Shares::Auto(vec![0, 1]);
    let mut door = Door::new();

    let mut kargs = args(plan);
    let first = door
        .launch(plan, &nd, &mut kargs, Buffers::Host, &auto, &key, &verify())
        .unwrap();
    assert_eq!(first.rounds, 2, "{}", first.report);
    assert!(in_two_rounds(&first.report), "{}", first.report);
    assert_eq!(first.report.verified, Some(true), "{}", first.report);
    let b = door.balancer().expect("made by the automatic launch");
    assert!(!b.unmeasured(&key), "the rounds measured the devices");
    assert_eq!(first.shares, b.split_shares(&key));

    let next = door.shares(&auto, &key);
    let mut kargs = args(plan);
    let second = door
        .launch(plan, &nd, &mut kargs, Buffers::Host, &auto, &key, &verify())
        .unwrap();
    assert_eq!(second.rounds, 1, "{}", second.report);
    assert!(!in_two_rounds(&second.report), "{}", second.report);
    assert_eq!(second.report.verified, Some(true), "{}", second.report);
    assert_eq!(second.shares, next);
}

#[test]
fn fixed_shares_run_as_given_in_one_round() {
    let rt = runtime();
    let mut s = session();
    let plan = plan(&mut s, &rt);
    let (nd, key) = (nd(), launcher::launch_key("vadd", &nd()));
    let fixed = Shares::Fixed(vec![(0, 0.25), (1, 0.75)]);
    let mut door = Door::new();
    let mut kargs = args(plan);
    let l = door
        .launch(
            plan,
            &nd,
            &mut kargs,
            Buffers::Host,
            &fixed,
            &key,
            &verify(),
        )
        .unwrap();
    assert_eq!(
        (l.rounds, l.shares.clone()),
        (1, vec![(0, 0.25), (1, 0.75)])
    );
    assert_eq!(l.report.verified, Some(true), "{}", l.report);
    let groups: Vec<u64> = l.report.devices.iter().map(|d| d.work_groups).collect();
    assert_eq!(groups, [32, 96], "{}", l.report);
    assert!(
        door.balancer().is_none(),
        "a fixed launch makes no balancer"
    );
}

/// The output `c` held on the devices; `a` and `b` from their host copies.
fn resident_launch(door: &mut Door) -> session::Launched {
    let rt = runtime();
    let mut s = session();
    let plan = plan(&mut s, &rt);
    let (nd, key) = (nd(), launcher::launch_key("vadd", &nd()));
    let mut kargs = args(plan);
    // the zeros stay behind as the placeholder of `c`
    let mut c = DeviceBuffer::new(kargs.buffer_at(2).unwrap().clone());
    let mut bufs = [(2, &mut c)];
    let auto = Shares::Auto(vec![0, 1]);
    let options = LaunchOptions::default();
    let resident = Buffers::Resident(&mut bufs);
    door.launch(plan, &nd, &mut kargs, resident, &auto, &key, &options)
        .unwrap()
}

#[test]
fn a_first_automatic_launch_over_resident_buffers_runs_in_rounds() {
    let mut door = Door::new();
    let l = resident_launch(&mut door);
    assert_eq!(l.rounds, 2, "{}", l.report);
    assert!(in_two_rounds(&l.report), "{}", l.report);
}

#[test]
fn without_resident_rounds_a_first_resident_launch_is_even_and_observed() {
    let mut door = Door::new().without_resident_rounds();
    let l = resident_launch(&mut door);
    assert_eq!((l.rounds, l.shares.clone()), (1, vec![(0, 0.5), (1, 0.5)]));
    assert!(!in_two_rounds(&l.report), "{}", l.report);
    let key = launcher::launch_key("vadd", &nd());
    assert!(!door.balancer().unwrap().unmeasured(&key), "observed");
}
