//! Helpers of the integration tests.

use std::path::PathBuf;

/// A fresh directory named `tag` for this test process, in memory where there is /dev/shm
/// (a write per input to disk took ten times the reading).
pub fn scratch_dir(tag: &str) -> PathBuf {
    let name = format!("trace-formats-{tag}-{}", std::process::id());
    [PathBuf::from("/dev/shm"), std::env::temp_dir()]
        .into_iter()
        .map(|base| base.join(&name))
        .find(|dir| std::fs::create_dir_all(dir).is_ok())
        .expect("no writable scratch directory")
}
