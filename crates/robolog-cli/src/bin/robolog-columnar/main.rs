//! `robolog-columnar`: the command line with `export` and `sql` (Arrow, Parquet, DataFusion
//! through robolog-arrow), which `robolog` runs for those two commands so that it need not
//! link them itself (see the `robolog_cli` library). It parses the same command line, so it
//! also runs the other commands, as `robolog` would.

// One `unsafe` block: glibc's allocator settings (`keep_large_buffers`).
#![deny(unsafe_code)]

mod export;
mod sql;

use std::io::Write;
use std::process::ExitCode;

use robolog_cli::Columnar;
use robolog_cli::failure::{Failure, Outcome};

fn main() -> ExitCode {
    keep_large_buffers();
    robolog_cli::main(run)
}

/// Makes glibc's allocator serve allocations up to 32 MiB from its heap, reusing freed memory,
/// instead of mapping fresh pages for each above its adaptive threshold. An export allocates
/// and frees Arrow arrays and Parquet pages of a few hundred KiB to a few MiB per batch, on two
/// threads; fresh pages cost a page fault each, a sixth of an export's time by `perf`.
fn keep_large_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `mallopt` only changes the allocator's parameters; it is called first
        // thing, before any other thread exists. Its result (0 when glibc refuses the value)
        // needs no handling: the defaults are a correct fallback.
        #[allow(unsafe_code)]
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        }
    }
}

fn run(command: Columnar<'_>, out: &mut dyn Write) -> Result<Outcome, Failure> {
    match command {
        Columnar::Export(args) => export::run(args, out),
        Columnar::Sql(args) => sql::run(args, out),
    }
}
