//! A small file system of a test's own (a tmpfs), and a file that fills it.

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

/// A small tmpfs, unmounted when dropped.
pub struct SmallDisk {
    pub dir: PathBuf,
    _parent: tempfile::TempDir,
}

impl SmallDisk {
    /// `None`, after a loud message, when it cannot be mounted here; in CI (`CI` set, as
    /// `.ci/run` is run) that is a failure instead, so the test never passes silently.
    pub fn mount(megabytes: u32) -> Option<Self> {
        let parent = tempfile::tempdir().expect("tempdir");
        let dir = parent.path().join("small");
        std::fs::create_dir(&dir).expect("mount point");
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={megabytes}m"), "tmpfs"])
            .arg(&dir)
            .output();
        match output {
            Ok(output) if output.status.success() => Some(Self {
                dir,
                _parent: parent,
            }),
            other if std::env::var_os("CI").is_some() => panic!(
                "mounting a tmpfs failed ({other:?}); in CI (CI is set) this test must run, not \
                 skip"
            ),
            other => {
                eprintln!(
                    "\n!!!!! SKIPPING a full-disk test: mounting a tmpfs failed ({other:?}); \
                     it needs root (CAP_SYS_ADMIN).\n"
                );
                None
            }
        }
    }

    /// Fills what is left of the file system; the space comes back when the filler is dropped.
    pub fn fill(&self) -> Filler {
        let path = self.dir.join("filler");
        let mut file = std::fs::File::create(&path).expect("filler");
        let block = vec![0u8; 4096];
        loop {
            match file.write_all(&block) {
                Ok(()) => {}
                Err(error) if error.raw_os_error() == Some(28) => break,
                Err(error) => panic!("filling the disk: {error}"),
            }
        }
        Filler(path)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

/// The file that fills the disk, deleted when dropped.
pub struct Filler(PathBuf);

impl Drop for Filler {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
