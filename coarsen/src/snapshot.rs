//! A program's source with its `#include`d files written in, as the
//! preprocessor resolves them now.
//!
//! An application builds a program at one moment and launches its kernels
//! later; by then a header may have been regenerated, or the working
//! directory that `-I.` named changed. The driver compiled what the files
//! held at `clBuildProgram`, so the analysis and the subkernels must see
//! that too: [`with_includes_written_in`] takes the files as libclang reads
//! them at that moment (from the working directory and the `-I` paths of
//! the options) and puts each where its directive was, between `#line`
//! directives, so that the result needs no file and means what the source
//! meant then. Macros and conditionals are left as they are (the driver
//! evaluates them when it builds the subkernels).
//!
//! A directive the preprocessor did not follow (a file already included
//! under its include guard or `#pragma once`, or one in a branch not
//! taken) becomes an empty line: the guard macro is defined by the copy
//! written in before it, and a branch not taken by libclang is not taken by
//! the driver either, except a branch on what only the driver knows, which
//! [`crate::driver_conditional`] refuses to split.

use std::collections::HashMap;

use crate::clang::TranslationUnit;
use crate::ParseOptions;

/// Whether `source` has a line `#include ...` (or `#import`,
/// `#include_next`).
pub fn has_include(source: &str) -> bool {
    source.lines().any(include_directive)
}

fn include_directive(line: &str) -> bool {
    line.trim_start().strip_prefix('#').is_some_and(|d| {
        let d = d.trim_start();
        d.starts_with("include") || d.starts_with("import")
    })
}

/// `source` (named `file`) with every file it includes written in, as
/// resolved now with the build options `options`; `source` itself when it
/// includes nothing. The error names what could not be read, with its
/// location.
pub fn with_includes_written_in(
    file: &str,
    source: &str,
    options: &ParseOptions,
) -> Result<String, String> {
    if !has_include(source) {
        return Ok(source.to_string());
    }
    let tu = TranslationUnit::parse(file, source, &crate::parse::clang_args(options, &[]))
        .map_err(|f| match f {
            crate::clang::ParseFailure::NoLibclang(why) => {
                format!("libclang could not be loaded ({why})")
            }
            crate::clang::ParseFailure::Failed => "libclang could not parse the program".into(),
        })?;
    if let Some(d) = tu.diagnostics().into_iter().find(|d| d.is_fatal) {
        let at = if d.file.is_empty() { file } else { &d.file };
        return Err(format!("{at}:{}:{}: {}", d.line, d.col, d.message));
    }
    let mut at: HashMap<(String, u32), (String, String)> = HashMap::new();
    for inc in tu.inclusions() {
        let Some(bytes) = inc.contents else {
            return Err(format!("libclang kept no text of '{}'", inc.file));
        };
        at.entry((inc.from, inc.line))
            .or_insert((inc.file, String::from_utf8_lossy(&bytes).into_owned()));
    }
    let mut out = String::with_capacity(source.len() * 2);
    write_in(file, source, &at, 0, &mut out)?;
    Ok(out)
}

/// The include depth past which clang itself stops.
const MAX_DEPTH: usize = 200;

fn write_in(
    name: &str,
    text: &str,
    at: &HashMap<(String, u32), (String, String)>,
    depth: usize,
    out: &mut String,
) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!("'{name}' is included more than {MAX_DEPTH} deep"));
    }
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let n = i as u32 + 1;
        if let Some((inc, contents)) = at.get(&(name.to_string(), n)) {
            out.push_str(&format!("#line 1 \"{}\"\n", quoted(inc)));
            write_in(inc, contents, at, depth + 1, out)?;
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&format!("#line {} \"{}\"\n", n + 1, quoted(name)));
        } else if include_directive(line) || pragma_once(line) {
            out.push('\n');
        } else {
            out.push_str(line);
        }
    }
    Ok(())
}

fn pragma_once(line: &str) -> bool {
    line.trim_start()
        .strip_prefix('#')
        .map(|d| d.split_whitespace().collect::<Vec<_>>())
        .is_some_and(|w| w == ["pragma", "once"])
}

/// `name` as the inside of a C string literal.
fn quoted(name: &str) -> String {
    name.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(dir: &std::path::Path) -> ParseOptions {
        ParseOptions {
            clang_args: vec![format!("-I{}", dir.display())],
        }
    }

    #[test]
    fn a_source_without_includes_is_itself() {
        let src = "__kernel void k(__global int* a) { a[0] = 1; }\n";
        assert_eq!(
            with_includes_written_in("p.cl", src, &ParseOptions::default()).unwrap(),
            src
        );
    }

    #[test]
    fn included_files_are_written_in_as_they_are_now() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("op.h"), "#ifndef OP_H\n#define OP_H\n#include \"scale.h\"\n#define OP(x) ((x) * SCALE)\n#endif\n").unwrap();
        std::fs::write(
            dir.path().join("scale.h"),
            "#pragma once\n#define SCALE 2.0f\n",
        )
        .unwrap();
        let src = "#include \"op.h\"\n#include \"op.h\"\n#include \"scale.h\"\n__kernel void k(__global float* a) { a[get_global_id(0)] = OP(a[get_global_id(0)]); }\n";
        let text = with_includes_written_in("p.cl", src, &options(dir.path())).unwrap();
        // the files may change or go: the text no longer needs them
        std::fs::write(dir.path().join("scale.h"), "#define SCALE 100.0f\n").unwrap();
        std::fs::remove_file(dir.path().join("op.h")).unwrap();
        assert!(!has_include(&text), "{text}");
        assert_eq!(text.matches("#define SCALE 2.0f").count(), 1, "{text}");
        assert_eq!(text.matches("#define OP(x)").count(), 1, "{text}");
        assert!(text.ends_with("#line 2 \"p.cl\"\n\n\n__kernel void k(__global float* a) { a[get_global_id(0)] = OP(a[get_global_id(0)]); }\n"), "{text}");
        // and it parses alone, with the old header's value
        let p = crate::parse_program("p.cl", &text, &ParseOptions::default()).unwrap();
        assert!(p.function("k").is_some());
    }

    #[test]
    fn lines_after_a_header_written_in_keep_their_numbers() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("box.h"),
            "typedef struct { float x, y, z; } box_t;\n#define N 4\n\n\n",
        )
        .unwrap();
        let src = "#include \"box.h\"\n\n__kernel void k(__global box_t* b)\n{\n    if (get_global_id(0) < N)\n        b[0].x = 1.0f;\n}\n";
        let text = with_includes_written_in("p.cl", src, &options(dir.path())).unwrap();
        let p = crate::parse_program("p.cl", &text, &ParseOptions::default()).unwrap();
        let k = p.function("k").unwrap();
        // the `if` is on line 5 of p.cl, column 5, whatever the header's length
        match &k.body[0] {
            crate::ir::Stmt::If { span, .. } => assert_eq!((span.line, span.col), (5, 5), "{text}"),
            s => panic!("not an if: {s:?}"),
        }
        assert_eq!(k.span.line, 3);
    }

    #[test]
    fn a_missing_header_is_an_error_with_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let src = "\n#include \"absent.h\"\n__kernel void k(__global int* a) { a[0] = 1; }\n";
        let e = with_includes_written_in("p.cl", src, &options(dir.path())).unwrap_err();
        assert!(e.starts_with("p.cl:2:") && e.contains("absent.h"), "{e}");
    }
}
