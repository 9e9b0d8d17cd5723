//! Golden tests of the coarsened C of every corpus kernel, and a compile check
//! with gcc as C11 (GNU extensions) against the header clpart provides.

use clpart_tests::{check_golden, corpus};
use std::process::Command;

fn coarsened(k: &clpart_tests::CorpusKernel) -> String {
    let file = k.file();
    let opts = coarsen::ParseOptions {
        clang_args: k.build.clone(),
    };
    let program = coarsen::parse_program(&file, &k.source, &opts).unwrap_or_else(|e| panic!("{e}"));
    coarsen::emit_c(&program, &k.name).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn coarsened_c_matches_golden_files() {
    let mut failures = Vec::new();
    let ks = corpus();
    assert!(ks.len() >= 20, "corpus has {} kernels", ks.len());
    for k in &ks {
        if let Some(why) = &k.uncoarsenable {
            // the refusal, with its reason, is what is checked
            let file = k.file();
            let program = coarsen::parse_program(
                &file,
                &k.source,
                &coarsen::ParseOptions {
                    clang_args: k.build.clone(),
                },
            )
            .unwrap();
            match coarsen::emit_c(&program, &k.name) {
                Ok(_) => failures.push(format!(
                    "{}: coarsened, though marked @uncoarsenable",
                    k.name
                )),
                Err(e) if !e.to_string().contains(why.as_str()) => {
                    failures.push(format!("{}: {e} (expected '{why}')", k.name))
                }
                Err(_) => {}
            }
            continue;
        }
        if let Err(e) = check_golden(
            &format!("kernels/golden/{}.coarsened.c", k.name),
            &coarsened(k),
        ) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn coarsened_c_compiles_with_gcc() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("clpart_coarsen.h"), coarsen::C_HEADER).unwrap();
    let mut failures = Vec::new();
    for k in corpus().into_iter().filter(|k| k.uncoarsenable.is_none()) {
        let c = dir.path().join(format!("{}.c", k.name));
        std::fs::write(&c, coarsened(&k)).unwrap();
        let out = Command::new("gcc")
            .args([
                "-std=gnu11",
                "-fwrapv",
                "-Wall",
                "-Werror",
                "-Wno-unused-label",
                "-Wno-unused-variable",
                "-c",
                "-o",
            ])
            .arg(dir.path().join(format!("{}.o", k.name)))
            .arg(&c)
            .output()
            .expect("gcc runs");
        if !out.status.success() {
            failures.push(format!(
                "{}: {}",
                k.name,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
