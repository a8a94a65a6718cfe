//! The hidden `allocations` subcommand: which allocator each library's C allocation lands in.

use super::*;

/// A 4 MiB block from each allocation call this build has, and who owns it.
pub(crate) fn allocations() -> Result<()> {
    const SIZE: usize = 4 << 20;
    let layout = std::alloc::Layout::from_size_align(SIZE, 1)?;
    let mut calls: Vec<(String, String, tlsmatrix_harness::endpoint::CAllocation)> = Vec::new();
    for lib in tlsmatrix_impls::libraries() {
        if let Some(c) = lib.c_allocation() {
            calls.push((lib.name().to_string(), c.call.to_string(), c));
        }
    }
    let live = heap::allocator().map_err(|e| anyhow!(e))?;
    // SAFETY: the layout is valid and non-zero; the block is freed with the same layout.
    let rust = heap::owners_of_allocation(
        SIZE,
        |_| unsafe { std::alloc::alloc(layout).cast() },
        |p| unsafe { std::alloc::dealloc(p.cast(), layout) },
    );
    let line = |imp: &str, call: &str, owners: Vec<Allocator>| {
        let owners: Vec<&str> = owners.iter().map(|a| a.name()).collect();
        println!(
            "{}",
            serde_json::json!({"impl": imp, "call": call, "allocator": live.name(), "owners": owners})
        );
    };
    line("rust", "std::alloc::alloc", rust);
    for (imp, call, c) in calls {
        // SAFETY: each pair is a library's matching allocation and free.
        let owners = heap::owners_of_allocation(
            SIZE,
            |n| unsafe { (c.alloc)(n) },
            |p| unsafe { (c.free)(p) },
        );
        line(&imp, &call, owners);
    }
    Ok(())
}
