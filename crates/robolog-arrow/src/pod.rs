//! BDDF POD series (`bddf-pod` messages): one row per data block, its samples in one list
//! column `samples` (a scalar series is a list of numbers; a series of `float32[3]` vectors a
//! list of fixed-size lists of 3; matrices nest one fixed-size list per dimension).

use robolog::Channel;
use robolog::encodings::{BDDF_DIMENSIONS, BDDF_POD_TYPE};

use crate::column::{Columns, Member, Prim, Shape, Values};

/// The element type and sample dimensions of a POD channel.
#[derive(Debug, Clone)]
pub(crate) struct PodCodec {
    prim: Prim,
    /// Elements per sample.
    per_sample: usize,
}

/// The largest number of elements one sample may have.
const MAX_SAMPLE_ELEMENTS: u64 = 1 << 24;

impl PodCodec {
    pub(crate) fn new(channel: &Channel) -> Result<(Self, Vec<Member>), String> {
        let type_name = channel
            .metadata
            .get(BDDF_POD_TYPE)
            .map(String::as_str)
            .ok_or_else(|| format!("the channel has no {BDDF_POD_TYPE} metadata"))?;
        let prim = match type_name {
            "int8" => Prim::Int8,
            "uint8" => Prim::UInt8,
            "int16" => Prim::Int16,
            "uint16" => Prim::UInt16,
            "int32" => Prim::Int32,
            "uint32" => Prim::UInt32,
            "int64" => Prim::Int64,
            "uint64" => Prim::UInt64,
            "float32" => Prim::Float32,
            "float64" => Prim::Float64,
            other => return Err(format!("unknown POD element type {other:?}")),
        };
        let dimensions = channel
            .metadata
            .get(BDDF_DIMENSIONS)
            .map(String::as_str)
            .unwrap_or("");
        let dimensions: Vec<u64> = dimensions
            .split(',')
            .filter(|d| !d.trim().is_empty())
            .map(|d| {
                d.trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|n| *n > 0 && *n <= MAX_SAMPLE_ELEMENTS)
                    .ok_or_else(|| format!("bad POD dimension {d:?}"))
            })
            .collect::<Result<_, _>>()?;
        let per_sample = dimensions
            .iter()
            .try_fold(1u64, |acc, d| {
                acc.checked_mul(*d).filter(|n| *n <= MAX_SAMPLE_ELEMENTS)
            })
            .ok_or_else(|| "the POD sample has too many elements".to_owned())?;
        let mut sample = Shape::Prim(prim);
        for d in dimensions.iter().rev() {
            // Bounded above by MAX_SAMPLE_ELEMENTS.
            sample = Shape::FixedList(Box::new(sample), *d as i32);
        }
        let members = vec![Member::new(
            "samples",
            Shape::List(Box::new(sample), false),
            false,
            0,
        )];
        Ok((
            PodCodec {
                prim,
                per_sample: per_sample as usize,
            },
            members,
        ))
    }

    pub(crate) fn append(&self, data: &[u8], columns: &mut Columns) -> Result<(), String> {
        let size = prim_size(self.prim) * self.per_sample;
        if size == 0 || !data.len().is_multiple_of(size) {
            return Err(format!(
                "{} bytes are not a whole number of {size}-byte samples",
                data.len()
            ));
        }
        let Some(&list) = columns.top.first() else {
            // Projected away: nothing to append.
            return Ok(());
        };
        let Some(mut leaf) = columns.item(list) else {
            return Err("the samples column lost its items".to_owned());
        };
        let samples = data.len() / size;
        let mut fixed = Vec::new();
        while let Some(inner) = columns.item(leaf) {
            fixed.push(leaf);
            leaf = inner;
        }
        // Each fixed-size level gets one value per element of the level above.
        let mut count = samples;
        for &level in &fixed {
            for _ in 0..count {
                columns.open(level);
            }
            if let Values::FixedList(_, n, _) = columns.nodes[level].values {
                count *= n as usize;
            }
        }
        macro_rules! extend {
            ($col:expr, $t:ty) => {{
                const N: usize = std::mem::size_of::<$t>();
                $col.values.extend(
                    data.chunks_exact(N)
                        .map(|c| <$t>::from_le_bytes(c.try_into().unwrap_or([0; N]))),
                )
            }};
        }
        match &mut columns.nodes[leaf].values {
            Values::Int8(c) => extend!(c, i8),
            Values::UInt8(c) => extend!(c, u8),
            Values::Int16(c) => extend!(c, i16),
            Values::UInt16(c) => extend!(c, u16),
            Values::Int32(c) => extend!(c, i32),
            Values::UInt32(c) => extend!(c, u32),
            Values::Int64(c) => extend!(c, i64),
            Values::UInt64(c) => extend!(c, u64),
            Values::Float32(c) => extend!(c, f32),
            Values::Float64(c) => extend!(c, f64),
            _ => return Err("the samples column has another type".to_owned()),
        }
        columns.close_list(list).map_err(|e| e.to_string())
    }
}

fn prim_size(prim: Prim) -> usize {
    match prim {
        Prim::Bool | Prim::Int8 | Prim::UInt8 => 1,
        Prim::Int16 | Prim::UInt16 => 2,
        Prim::Int32 | Prim::UInt32 | Prim::Float32 => 4,
        Prim::Int64 | Prim::UInt64 | Prim::Float64 => 8,
    }
}
