//! Dynamic chunks for a single launch: a launch in two rounds
//! (`launcher::launch_in_rounds`: a probe window at the balancer's shares,
//! then the rest at the measured ones) equals the unsplit output bit for
//! bit on two and three devices; kernels with an array both read and
//! written run as one ordinary launch; the plan is left as it was; devices
//! that report the same resources start even, in one round.

use clpart_tests::{corpus_path, plan_from_source, shared_runtime, workspace_root};
use host_data::PlanArgs;
use launcher::{launch, launch_in_rounds, launch_key, Balancer, LaunchOptions, NdRange};

struct Case {
    name: &'static str,
    global: Vec<u64>,
    local: Vec<u64>,
    args: Vec<String>,
    scalars: Vec<(&'static str, i64)>,
}

fn cases() -> Vec<Case> {
    let n = 8192;
    let (w, h) = (256, 96);
    vec![
        Case {
            name: "vadd",
            global: vec![n],
            local: vec![64],
            args: vec![
                format!("a=rand:{n}:1"),
                format!("b=rand:{n}:2"),
                format!("c=zeros:{n}"),
            ],
            scalars: vec![],
        },
        Case {
            name: "matmul",
            global: vec![64, 128],
            local: vec![16, 2],
            args: vec![
                format!("c=zeros:{}", 64 * 128),
                format!("a=rand:{}:1", 64 * 128),
                format!("b=rand:{}:2", 64 * 64),
                "width=64".into(),
            ],
            scalars: vec![("width", 64)],
        },
        Case {
            name: "stencil2d",
            global: vec![w, h],
            local: vec![16, 2],
            args: vec![
                format!("in=rand:{}:1", w * h),
                format!("out=zeros:{}", w * h),
                format!("width={w}"),
                format!("height={h}"),
            ],
            scalars: vec![("width", w as i64), ("height", h as i64)],
        },
        Case {
            name: "mdh",
            global: vec![4096],
            local: vec![32],
            args: ["ax", "ay", "az", "charge", "size"]
                .iter()
                .enumerate()
                .map(|(i, a)| format!("{a}=rand:40:{i}"))
                .chain(
                    ["gx", "gy", "gz"]
                        .iter()
                        .map(|a| format!("{a}=rand:4096:9")),
                )
                .chain([
                    "val=zeros:4096".to_string(),
                    "pre1=0.5".into(),
                    "xkappa=0.1".into(),
                    "natoms=40".into(),
                ])
                .collect(),
            scalars: vec![("natoms", 40)],
        },
        // `a` is read and written: no rounds
        Case {
            name: "read_write_array",
            global: vec![n],
            local: vec![64],
            args: vec![
                format!("a=rand:{n}:1"),
                format!("b=rand:{n}:2"),
                "s=3".into(),
                format!("n={n}"),
            ],
            scalars: vec![("n", n as i64)],
        },
    ]
}

#[test]
fn a_launch_in_two_rounds_equals_the_unsplit_output_on_two_and_three_devices() {
    let rt = shared_runtime("pthread basic pthread");
    assert_eq!(rt.devices().len(), 3);
    let verify = LaunchOptions {
        verify: true,
        ..Default::default()
    };
    let mut failures = Vec::new();
    for c in cases() {
        let source = std::fs::read_to_string(corpus_path(c.name)).unwrap();
        let mut plan = plan_from_source(&rt, c.name, &source, &c.global, &c.local, &c.scalars);
        let nd = NdRange::new(&c.global, &c.local).unwrap();
        let args = plan.args_from_specs(&c.args).unwrap();
        let key = launch_key(c.name, &nd);
        for devices in [vec![0, 1], vec![0, 1, 2]] {
            let mut b = Balancer::new(&devices);
            let rounds = launcher::probe_window(&plan, &nd, &devices).is_some();
            let mut got = args.clone();
            let r = launch_in_rounds(&mut plan, &nd, &mut got, &mut b, &key, &verify).unwrap();
            let what = format!("{} on {devices:?}: {r}", c.name);
            if r.verified != Some(true) || r.guard_fired || !r.split {
                failures.push(format!("not verified, or not split: {what}"));
            }
            let noted = r.notes.iter().any(|n| n.starts_with("in two rounds"));
            if noted != rounds || rounds == (c.name == "read_write_array") {
                failures.push(format!("rounds {rounds}, noted {noted}: {what}"));
            }
            let groups: u64 = r.devices.iter().map(|d| d.work_groups).sum();
            if groups != nd.n_groups_total() {
                failures.push(format!(
                    "{groups} work-groups of {}: {what}",
                    nd.n_groups_total()
                ));
            }
            // every device measured, from the rounds alone
            if rounds && b.rates(&key).iter().any(|r| r.1.is_none()) {
                failures.push(format!("rates {:?}: {what}", b.rates(&key)));
            }
            // the plan has no window left: an ordinary launch runs it all
            let mut again = args.clone();
            let r2 = launch(&mut plan, &nd, &mut again, &b.split_shares(&key), &verify).unwrap();
            if r2.verified != Some(true) || again.buffer_at(0) != got.buffer_at(0) {
                failures.push(format!("the launch after the rounds: {r2}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Two devices of one kind (two PoCL pthread devices: the same platform,
/// type, compute units and limits) are taken to be equally fast: the first
/// launch is split evenly in one round, without a probe window.
#[test]
fn devices_alike_start_even_in_one_round() {
    let rt = shared_runtime("pthread pthread");
    assert!(rt.alike(&[0, 1]));
    let source = std::fs::read_to_string(workspace_root().join("kernels/basics/vadd.cl")).unwrap();
    let n = 8192;
    let mut plan = plan_from_source(&rt, "vadd", &source, &[n], &[64], &[]);
    let nd = NdRange::new(&[n], &[64]).unwrap();
    assert_eq!(launcher::probe_window(&plan, &nd, &[0, 1]), None);
    let mut args = plan
        .args_from_specs(&[
            format!("a=rand:{n}:1"),
            format!("b=rand:{n}:2"),
            format!("c=zeros:{n}"),
        ])
        .unwrap();
    let mut b = Balancer::new(&[0, 1]);
    let key = launch_key("vadd", &nd);
    let verify = LaunchOptions {
        verify: true,
        ..Default::default()
    };
    let r = launch_in_rounds(&mut plan, &nd, &mut args, &mut b, &key, &verify).unwrap();
    assert_eq!(r.verified, Some(true), "{r}");
    assert!(
        !r.notes.iter().any(|n| n.starts_with("in two rounds")),
        "{r}"
    );
    let groups: Vec<u64> = r.devices.iter().map(|d| d.work_groups).collect();
    assert_eq!(groups, [64, 64], "{r}");
}
