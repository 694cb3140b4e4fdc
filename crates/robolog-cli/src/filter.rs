//! `robolog filter` and its presets `sort`, `compress` and `decompress`: one log rewritten
//! through a [`Job`], keeping what the options select.

use std::io::Write;

use clap::error::ErrorKind;
use robolog::{ConvertOptions, Format, Order};

use crate::cli::{CompressionArg, FilterArgs, InOut, OrderArg, RewriteArgs, WriteSettings};
use crate::convert::{Job, output_format, writer_options};
use crate::failure::{Failure, Outcome};
use crate::input::{self, Input};
use crate::output::Target;

pub(crate) fn run_filter(args: &FilterArgs, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let filter = args.selection.filter()?;
    let order = match args.order {
        OrderArg::LogTime => Order::LogTime,
        OrderArg::File => Order::File,
        OrderArg::Topic => Order::Topic,
    };
    let convert = ConvertOptions::new()
        .filter(filter)
        .order(order)
        .drop_attachments(args.drop_attachments)
        .drop_metadata(args.drop_metadata);
    rewrite(&args.files, &args.write, false, convert, "filtering", out)
}

/// Which preset of `filter` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Preset {
    /// Log-time order.
    Sort,
    /// Compressed chunks, in file order.
    Compress,
    /// Uncompressed chunks, in file order.
    Decompress,
}

pub(crate) fn run_preset(
    preset: Preset,
    args: &RewriteArgs,
    out: &mut dyn Write,
) -> Result<Outcome, Failure> {
    let mut write = args.write.clone();
    let (order, verb) = match preset {
        Preset::Sort => (Order::LogTime, "sorting"),
        Preset::Compress => (Order::File, "compressing"),
        Preset::Decompress => {
            if write.compression.is_some_and(|c| c != CompressionArg::None) {
                return Err(Failure::usage(
                    ErrorKind::ArgumentConflict,
                    "decompress writes uncompressed chunks: use compress to choose a compression",
                ));
            }
            write.compression = Some(CompressionArg::None);
            (Order::File, "decompressing")
        }
    };
    let convert = ConvertOptions::new().order(order);
    let compress = preset == Preset::Compress && write.compression.is_none();
    rewrite(&args.files, &write, compress, convert, verb, out)
}

/// Writes the output of one input, in the input's format unless the output names another;
/// `compress`: with the best chunk compression the output format has.
fn rewrite(
    files: &InOut,
    write: &WriteSettings,
    compress: bool,
    convert: ConvertOptions<'_>,
    verb: &'static str,
    out: &mut dyn Write,
) -> Result<Outcome, Failure> {
    let output = files.output();
    // A stream can only be copied in the order it comes; any other order needs it whole.
    let input = if convert.get_order() == Order::File {
        input::open(&files.input)?
    } else {
        Input::Log(input::open_log(&files.input)?)
    };
    let input_format = match &input {
        Input::Log(log) => log.format(),
        Input::Stream(stream) => stream.format(),
    };
    let mut write = write.clone();
    let format = output_format(&write, output, Some(input_format))?;
    if compress {
        // BDDF files and sqlite3 ROS 2 bags have no chunks: they take their default.
        write.compression = match format {
            Format::Mcap | Format::Rosbag2 => Some(CompressionArg::Zstd),
            Format::Bag => Some(CompressionArg::Lz4),
            _ => None,
        };
        if format == Format::Rosbag2 && write.storage == Some(crate::cli::StorageArg::Sqlite3) {
            write.compression = None;
        }
    }
    let target = Target::check(output, format)?;
    let options = writer_options(&write, format)?;
    Job {
        inputs: vec![(files.input.clone(), input)],
        target,
        format,
        options,
        convert,
        verb,
        extras: Vec::new(),
    }
    .run(out)
}
