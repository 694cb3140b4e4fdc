//! bag → MCAP through the facade (`robolog::convert`), the way a user converts a log.
//!
//! Both sides read in file order (the peer cannot do anything else, and the files' chunks do not
//! overlap, so log-time order would only add merging work to ours) and write through a 1 MiB
//! `BufWriter` into a plain file: `Output::file` would add an fsync on commit that the peer does
//! not do. Ours gets the file as a seekable stream (`Output::seekable`), as a user holding an
//! open `File` would hand it over.

use std::fs::File;
use std::io::BufWriter;

use robolog::{ConvertOptions, Order, Output, WriterOptions};

use super::files::{Totals, mcap_options};
use super::ops::{Context, convert_compression};

pub(crate) fn ours(cx: &Context<'_>) -> Result<Totals, Box<dyn std::error::Error>> {
    // Memory-mapped, as the command line opens files.
    let log = robolog::open_bytes(super::ops::mapped(cx.input)?)?;
    let out = BufWriter::with_capacity(1 << 20, File::create(cx.output)?);
    let options = mcap_options(convert_compression(cx.variant));
    let mut writer = robolog::create_writer(Output::seekable(out)?, WriterOptions::Mcap(options))?;
    let report = robolog::convert(&log, &mut *writer, ConvertOptions::new().order(Order::File))?;
    writer.finish()?;
    Ok(Totals {
        messages: report.messages,
        bytes: report.bytes,
    })
}
