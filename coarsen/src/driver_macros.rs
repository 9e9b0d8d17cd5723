//! Preprocessor conditionals on what only the driver knows.
//!
//! clpart parses a program with libclang as OpenCL C 1.2 (or the version
//! the build options name) for no particular device, while the driver
//! compiles it for its device with its own default version, its own
//! extensions and feature macros (`__opencl_c_fp64`, `cl_khr_fp64`,
//! `__IMAGE_SUPPORT__`, ...). A conditional on one of those may select
//! different code in the two, and an analysis of the code the driver does
//! not run proves nothing about the code it does. [`driver_conditional`]
//! finds the first such conditional, so that the kernel is not split.

/// Whether `name` is a macro whose value the driver (its device, its
/// OpenCL C version) decides rather than the program and its options.
fn decided_by_driver(name: &str) -> bool {
    const EXACT: [&str; 10] = [
        "__OPENCL_C_VERSION__",
        "__OPENCL_VERSION__",
        "__OPENCL_CPP_VERSION__",
        "__IMAGE_SUPPORT__",
        "__ENDIAN_LITTLE__",
        "__EMBEDDED_PROFILE__",
        "__SPIR__",
        "__SPIRV__",
        "__GPU__",
        "__CPU__",
    ];
    const PREFIXES: [&str; 12] = [
        "CL_VERSION_",
        "__opencl_c_",
        "cl_khr_",
        "cl_ext_",
        "cl_intel_",
        "cl_amd_",
        "cl_nv_",
        "cl_arm_",
        "cl_APPLE_",
        "cl_pocl_",
        "FP_FAST_FMA",
        "__NV_CL_C_VERSION",
    ];
    EXACT.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p)) || name == "__AMD__"
}

/// The first `#if`, `#ifdef`, `#ifndef` or `#elif` line of `source` that
/// tests a macro the driver decides: its 1-based line number and the
/// directive's text.
/// A macro defined in terms of one the driver decides (`#define HAS_FP64
/// defined(cl_khr_fp64)`) is decided by the driver as well.
pub fn driver_conditional(source: &str) -> Option<(u32, String)> {
    let directives = directives(source);
    let mut derived: Vec<&str> = Vec::new();
    loop {
        let before = derived.len();
        for (_, word, text) in &directives {
            if *word != "define" {
                continue;
            }
            let mut names = identifiers(text).skip(1);
            let Some(name) = names.next() else { continue };
            if !derived.contains(&name)
                && names.any(|n| decided_by_driver(n) || derived.contains(&n))
            {
                derived.push(name);
            }
        }
        if derived.len() == before {
            break;
        }
    }
    directives
        .iter()
        .find(|(_, word, text)| {
            matches!(
                *word,
                "if" | "ifdef" | "ifndef" | "elif" | "elifdef" | "elifndef"
            ) && identifiers(text).any(|n| decided_by_driver(n) || derived.contains(&n))
        })
        .map(|(line, _, text)| (*line, text.clone()))
}

/// The identifiers of a directive's text, its directive word first.
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
}

/// The preprocessor directives of `source`: 1-based line, directive word
/// and the whole directive (lines continued with backslashes joined).
fn directives(source: &str) -> Vec<(u32, &str, String)> {
    let mut out = Vec::new();
    let mut lines = source.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        let Some(rest) = line.trim_start().strip_prefix('#') else {
            continue;
        };
        let rest = rest.trim_start();
        let word_end = rest
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(rest.len());
        let mut text = line.trim().to_string();
        while text.ends_with('\\') {
            text.pop();
            match lines.next() {
                Some((_, more)) => text.push_str(more.trim()),
                None => break,
            }
        }
        out.push((i as u32 + 1, &rest[..word_end], text));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::driver_conditional;

    #[test]
    fn conditionals_on_the_version_or_device_features_are_found() {
        let src = "#define N 4\n#if N > 2\n#endif\n  #  ifdef __opencl_c_fp64\ntypedef double real;\n#else\ntypedef float real;\n#endif\n";
        assert_eq!(
            driver_conditional(src),
            Some((4, "#  ifdef __opencl_c_fp64".to_string()))
        );
        let src = "#if defined(X) && \\\n   __OPENCL_C_VERSION__ >= 200\n#endif\n";
        assert_eq!(driver_conditional(src).map(|(l, _)| l), Some(1));
        assert!(driver_conditional("#elif defined(cl_khr_fp64)\n").is_some());
        let src = "#define HAS64 defined(cl_khr_fp64)\n#define WIDE HAS64\n#if WIDE\n#endif\n";
        assert_eq!(driver_conditional(src).map(|(l, _)| l), Some(3));
    }

    #[test]
    fn other_directives_and_uses_outside_conditionals_are_not() {
        let src = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#define V __OPENCL_C_VERSION__\n#ifdef DEBUG\n#endif\n__kernel void k(__global int* a) { a[0] = __OPENCL_C_VERSION__; }\n";
        assert_eq!(driver_conditional(src), None);
    }
}
