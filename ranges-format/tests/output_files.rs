//! Output files are written through exclusive, unpredictable
//! temporaries and renamed; planted symlinks are never followed; devices are
//! written in place.

use std::os::unix::fs::FileTypeExt as _;
use std::path::Path;

use ranges_format::output::{live_temporaries, write_file};

fn dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("clpart-output-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn planted_symlinks_are_untouched_and_the_target_is_replaced() {
    let d = dir().join("symlinks");
    std::fs::create_dir_all(&d).unwrap();
    let victim = d.join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    // Symlinks at the names an older writer used (`.out.tmp-<pid>-0`, ...).
    let pid = std::process::id();
    let planted: Vec<_> = [
        format!(".out.npy.tmp.{pid}"),
        format!(".out.npy.tmp-{pid}-0"),
        ".out.npy.tmp".to_string(),
    ]
    .iter()
    .map(|n| d.join(n))
    .collect();
    for p in &planted {
        std::os::unix::fs::symlink(&victim, p).unwrap();
    }
    let target = d.join("out.npy");
    write_file(&target, |w| w.write_all(b"new data")).unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), b"new data");
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    for p in &planted {
        assert!(
            std::fs::symlink_metadata(p)
                .unwrap()
                .file_type()
                .is_symlink(),
            "{}",
            p.display()
        );
    }
    // A symlink as the target itself is replaced, not followed.
    let link = d.join("link.npy");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    write_file(&link, |w| w.write_all(b"x")).unwrap();
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    assert!(!std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    // Nothing else was left in the folder.
    assert_eq!(
        std::fs::read_dir(&d).unwrap().count(),
        2 + planted.len() + 1
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_failed_write_leaves_no_file_and_no_temporary() {
    let d = dir().join("failed");
    std::fs::create_dir_all(&d).unwrap();
    let target = d.join("out.npy");
    let err = write_file(&target, |w| {
        w.write_all(b"partial")?;
        Err(std::io::Error::other("disk on fire"))
    })
    .unwrap_err();
    assert_eq!(err.to_string(), "disk on fire");
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0);
    assert!(live_temporaries().is_empty());
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn devices_are_written_in_place() {
    write_file(Path::new("/dev/null"), |w| w.write_all(b"data")).unwrap();
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    if Path::new("/dev/full").exists() {
        let err = write_file(Path::new("/dev/full"), |w| w.write_all(&[0u8; 8192])).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(28), "{err}");
        assert!(std::fs::metadata("/dev/full")
            .unwrap()
            .file_type()
            .is_char_device());
    }
}
