//! Large zeroed output arrays backed by transparent huge pages where the kernel offers them.
//!
//! A replay writes two f64 per trace row into fresh memory. With 4 KiB pages every 256 rows
//! take a page fault (zeroing, cgroup charge, page-table update): about a tenth of a
//! loggp replay's time. Asking for huge pages (the kernel's default THP mode is `madvise`)
//! turns that into one fault per 2 MiB. Only a hint: where it is refused nothing changes.

/// `n` zeros; memory from the kernel is advised to use huge pages before it is touched.
pub fn zeroed_f64(n: usize) -> Vec<f64> {
    let v = vec![0.0f64; n];
    advise_huge(v.as_ptr() as usize, n * std::mem::size_of::<f64>());
    v
}

#[cfg(target_os = "linux")]
fn advise_huge(addr: usize, len: usize) {
    const HUGE: usize = 2 << 20;
    if len < HUGE {
        return;
    }
    // madvise wants a page-aligned start; the whole pages inside the buffer are advised.
    let page = 4096;
    let (lo, hi) = ((addr + page - 1) & !(page - 1), (addr + len) & !(page - 1));
    if hi > lo {
        // SAFETY: the range lies inside the live allocation `addr..addr + len`, and
        // MADV_HUGEPAGE changes no memory contents; a failure (e.g. THP off) is harmless.
        unsafe {
            libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_addr: usize, _len: usize) {}

#[cfg(test)]
mod tests {
    #[test]
    fn zeroed_is_zero_and_writable() {
        for n in [0, 1, 4096, (3 << 20) / 8 + 5] {
            let mut v = super::zeroed_f64(n);
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|&x| x == 0.0));
            if let Some(last) = v.last_mut() {
                *last = 1.5;
            }
            assert_eq!(v.iter().sum::<f64>(), if n > 0 { 1.5 } else { 0.0 });
        }
    }
}
