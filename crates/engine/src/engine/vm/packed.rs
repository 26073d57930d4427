//! Memory for native code, packed: each function placed right after the
//! one before, on pages shared with it.
//!
//! Cranelift's own providers start the code of each `finalize_definitions`
//! on a new page, and the native code makes one such batch a clause. The
//! hot clauses' code then starts at the same offset of dozens of pages, and
//! the first lines of every clause's code fall into the same few sets of
//! the processor's instruction cache, which holds only eight lines a set:
//! they evict each other at every call (Campo Bello's native code missed
//! the instruction cache ten times as often as the interpreter).
//!
//! Packed, the functions follow each other in large chunks. The page where
//! a batch starts may already hold code made executable: it is made
//! writable again (not executable) until the batch is finalized, so no
//! page is ever both. Only the machine's own thread runs its code, and
//! never while its generator adds to it, so no code runs from a page while
//! it is writable.

use cranelift_jit::{BranchProtection, JITMemoryKind, JITMemoryProvider, SystemMemoryProvider};
use cranelift_module::ModuleResult;
use region::Protection;
use std::io;

/// Bytes of address space a chunk takes (more for a function larger).
const CHUNK: usize = 1 << 20;

/// A chunk of code: the memory, where the next function goes, and how far
/// its pages are executable.
struct Chunk {
    mem: region::Allocation,
    used: usize,
    sealed: usize,
}

/// The memory provider of a machine's native code.
pub struct Packed {
    chunks: Vec<Chunk>,
    /// Data (constants Cranelift puts apart from the code) in the usual way.
    data: SystemMemoryProvider,
}

// SAFETY: the chunks are owned by the provider alone (nothing else maps or
// frees them), and the provider is used by one thread at a time (its
// machine's).
unsafe impl Send for Packed {}

impl Packed {
    pub fn new() -> Packed {
        Packed { chunks: Vec::new(), data: SystemMemoryProvider::new() }
    }
}

fn protect(mem: &mut region::Allocation, from: usize, to: usize, p: Protection) -> io::Result<()> {
    // SAFETY: `from..to` lies inside the allocation (page-aligned offsets
    // of it), which stays mapped as long as the provider.
    unsafe { region::protect(mem.as_mut_ptr::<u8>().add(from), to - from, p) }.map_err(io::Error::other)
}

impl JITMemoryProvider for Packed {
    fn allocate(&mut self, size: usize, align: u64, kind: JITMemoryKind) -> io::Result<*mut u8> {
        if !matches!(kind, JITMemoryKind::Executable) {
            return self.data.allocate(size, align, kind);
        }
        let (page, align) = (region::page::size(), (align as usize).max(1));
        let fits = self.chunks.last().is_some_and(|c| c.used.next_multiple_of(align) + size <= c.mem.len());
        if !fits {
            let mem = region::alloc(size.max(CHUNK).next_multiple_of(page), Protection::READ_WRITE)
                .map_err(io::Error::other)?;
            self.chunks.push(Chunk { mem, used: 0, sealed: 0 });
        }
        let c = self.chunks.last_mut().expect("a chunk");
        let start = c.used.next_multiple_of(align);
        // The page it starts on may hold code made executable before.
        let first = start / page * page;
        if first < c.sealed {
            protect(&mut c.mem, first, c.sealed, Protection::READ_WRITE)?;
            c.sealed = first;
        }
        c.used = start + size;
        // SAFETY: `start + size` is inside the chunk (checked above).
        Ok(unsafe { c.mem.as_mut_ptr::<u8>().add(start) })
    }

    unsafe fn free_memory(&mut self) {
        self.chunks.clear();
        // SAFETY: as the caller promised for the whole provider.
        unsafe { self.data.free_memory() };
    }

    fn finalize(&mut self, branch_protection: BranchProtection) -> ModuleResult<()> {
        self.data.finalize(branch_protection)?;
        let page = region::page::size();
        for c in &mut self.chunks {
            let end = c.used.next_multiple_of(page);
            if end > c.sealed {
                // Not an error to go on from: the page a batch starts on
                // may hold older functions, which the machine calls, and
                // `allocate` made it writable, not executable.
                if let Err(e) = protect(&mut c.mem, c.sealed, end, Protection::READ_EXECUTE) {
                    panic!("native code: making its pages executable again failed ({e}); set TABULA_NATIVE=0");
                }
                c.sealed = end;
            }
        }
        Ok(())
    }
}
