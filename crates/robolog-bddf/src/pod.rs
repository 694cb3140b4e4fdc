//! POD ("plain old data") series: packed little-endian numbers, one sample after another.

use crate::error::PodError;
use crate::proto::PodType;

mod sealed {
    pub trait Sealed {}
}

/// A number type a POD series can hold: `i8`…`i64`, `u8`…`u64`, `f32`, `f64`.
pub trait PodElement: Copy + PartialEq + std::fmt::Debug + sealed::Sealed + 'static {
    /// The element type as the file names it.
    const POD_TYPE: PodType;
    /// Bytes per element.
    const SIZE: usize;
    /// Decodes one element from exactly [`Self::SIZE`] little-endian bytes.
    fn from_le(bytes: &[u8]) -> Self;
    /// Appends the little-endian bytes of every value.
    fn extend_le(values: &[Self], out: &mut Vec<u8>);
    /// Wraps decoded values.
    fn wrap(values: Vec<Self>) -> PodValues;
    /// The values, when they are of this type.
    fn unwrap(values: &PodValues) -> Option<&[Self]>;
}

/// Decoded POD values of one of the ten element types, flat (samples one after another, each
/// sample row-major).
#[derive(Debug, Clone, PartialEq)]
pub enum PodValues {
    /// `int8` values.
    Int8(Vec<i8>),
    /// `int16` values.
    Int16(Vec<i16>),
    /// `int32` values.
    Int32(Vec<i32>),
    /// `int64` values.
    Int64(Vec<i64>),
    /// `uint8` values.
    Uint8(Vec<u8>),
    /// `uint16` values.
    Uint16(Vec<u16>),
    /// `uint32` values.
    Uint32(Vec<u32>),
    /// `uint64` values.
    Uint64(Vec<u64>),
    /// `float32` values.
    Float32(Vec<f32>),
    /// `float64` values.
    Float64(Vec<f64>),
}

macro_rules! pod_elements {
    ($($ty:ty => $pod:ident, $variant:ident;)*) => {
        $(
            impl sealed::Sealed for $ty {}
            impl PodElement for $ty {
                const POD_TYPE: PodType = PodType::$pod;
                const SIZE: usize = std::mem::size_of::<$ty>();
                #[inline]
                fn from_le(bytes: &[u8]) -> Self {
                    let mut array = [0u8; std::mem::size_of::<$ty>()];
                    array.copy_from_slice(bytes);
                    <$ty>::from_le_bytes(array)
                }
                fn extend_le(values: &[Self], out: &mut Vec<u8>) {
                    out.reserve(values.len() * Self::SIZE);
                    for value in values {
                        out.extend_from_slice(&value.to_le_bytes());
                    }
                }
                fn wrap(values: Vec<Self>) -> PodValues {
                    PodValues::$variant(values)
                }
                fn unwrap(values: &PodValues) -> Option<&[Self]> {
                    match values {
                        PodValues::$variant(v) => Some(v),
                        _ => None,
                    }
                }
            }
        )*

        impl PodValues {
            /// The element type.
            pub fn pod_type(&self) -> PodType {
                match self {
                    $(PodValues::$variant(_) => PodType::$pod,)*
                }
            }

            /// Number of values (not samples).
            pub fn len(&self) -> usize {
                match self {
                    $(PodValues::$variant(v) => v.len(),)*
                }
            }

            /// Value `index` converted to `f64` (exact for every type but 64-bit integers beyond
            /// 2^53), for plotting and printing.
            pub fn get_f64(&self, index: usize) -> Option<f64> {
                match self {
                    $(PodValues::$variant(v) => v.get(index).map(|&x| x as f64),)*
                }
            }
        }

        /// Bytes per element of a POD type, `None` for unspecified or unknown types.
        pub fn element_size(pod_type: PodType) -> Option<usize> {
            match pod_type {
                $(PodType::$pod => Some(<$ty as PodElement>::SIZE),)*
                PodType::Unspecified => None,
            }
        }

        fn decode_as(pod_type: PodType, data: &[u8]) -> Option<PodValues> {
            match pod_type {
                $(PodType::$pod => Some(<$ty>::wrap(decode_values::<$ty>(data))),)*
                PodType::Unspecified => None,
            }
        }
    };
}

pod_elements! {
    i8 => Int8, Int8;
    i16 => Int16, Int16;
    i32 => Int32, Int32;
    i64 => Int64, Int64;
    u8 => Uint8, Uint8;
    u16 => Uint16, Uint16;
    u32 => Uint32, Uint32;
    u64 => Uint64, Uint64;
    f32 => Float32, Float32;
    f64 => Float64, Float64;
}

impl PodValues {
    /// True when there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values as a slice of `T`, when they are of that type.
    pub fn as_slice<T: PodElement>(&self) -> Option<&[T]> {
        T::unwrap(self)
    }
}

/// Decodes whole little-endian elements (any trailing partial element is ignored; callers
/// check sample sizes first).
fn decode_values<T: PodElement>(data: &[u8]) -> Vec<T> {
    data.chunks_exact(T::SIZE).map(T::from_le).collect()
}

/// The size of one sample of a POD series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleShape {
    /// Element type.
    pub pod_type: PodType,
    /// Values per sample: the product of the dimensions, 1 for a scalar.
    pub values_per_sample: usize,
    /// Bytes per sample.
    pub bytes_per_sample: usize,
}

impl SampleShape {
    /// The shape of samples of `pod_type` (the raw enum value from the file) with `dimensions`.
    pub fn new(pod_type: i32, dimensions: &[u32]) -> Result<Self, PodError> {
        let pod = PodType::try_from(pod_type).map_err(|_| PodError::UnsupportedType(pod_type))?;
        let size = element_size(pod).ok_or(PodError::UnsupportedType(pod_type))?;
        if dimensions.contains(&0) {
            return Err(PodError::ZeroDimension(dimensions.to_vec()));
        }
        let too_large = || PodError::SampleTooLarge(dimensions.to_vec());
        let values_per_sample = dimensions.iter().try_fold(1usize, |product, &d| {
            product.checked_mul(usize::try_from(d).ok()?)
        });
        let values_per_sample = values_per_sample.ok_or_else(too_large)?;
        let bytes_per_sample = values_per_sample.checked_mul(size).ok_or_else(too_large)?;
        Ok(Self {
            pod_type: pod,
            values_per_sample,
            bytes_per_sample,
        })
    }
}

/// The samples of one POD data block, decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct PodSamples {
    /// Shape of one sample, row-major; empty for scalars.
    pub dimensions: Vec<u32>,
    /// Every value of every sample, in file order.
    pub values: PodValues,
    values_per_sample: usize,
}

impl PodSamples {
    /// Decodes a POD payload of `pod_type` (the raw enum value from the file) whose samples have
    /// `dimensions`. The payload must hold a whole number of samples.
    ///
    /// ```
    /// use robolog_bddf::{PodSamples, proto::PodType};
    /// let data: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    /// let samples = PodSamples::decode(PodType::Float32 as i32, &[3], &data)?;
    /// assert_eq!(samples.sample_count(), 2);
    /// assert_eq!(samples.sample::<f32>(1), Some(&[4.0, 5.0, 6.0][..]));
    /// # Ok::<(), robolog_bddf::PodError>(())
    /// ```
    pub fn decode(pod_type: i32, dimensions: &[u32], data: &[u8]) -> Result<Self, PodError> {
        let shape = SampleShape::new(pod_type, dimensions)?;
        if !data.len().is_multiple_of(shape.bytes_per_sample) {
            return Err(PodError::PartialSample {
                len: data.len(),
                bytes_per_sample: shape.bytes_per_sample,
            });
        }
        let values = decode_as(shape.pod_type, data).ok_or(PodError::UnsupportedType(pod_type))?;
        Ok(Self {
            dimensions: dimensions.to_vec(),
            values,
            values_per_sample: shape.values_per_sample,
        })
    }

    /// The element type.
    pub fn pod_type(&self) -> PodType {
        self.values.pod_type()
    }

    /// Values per sample (1 for scalars).
    pub fn values_per_sample(&self) -> usize {
        self.values_per_sample
    }

    /// Number of samples.
    pub fn sample_count(&self) -> usize {
        self.values.len() / self.values_per_sample.max(1)
    }

    /// The values of sample `index`, when the samples are of type `T`.
    pub fn sample<T: PodElement>(&self, index: usize) -> Option<&[T]> {
        let start = index.checked_mul(self.values_per_sample)?;
        self.values
            .as_slice::<T>()?
            .get(start..start.checked_add(self.values_per_sample)?)
    }
}

/// Appends the little-endian encoding of `values`.
pub(crate) fn encode<T: PodElement>(values: &[T], out: &mut Vec<u8>) {
    T::extend_le(values, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let s = SampleShape::new(PodType::Float64 as i32, &[]).unwrap();
        assert_eq!((s.values_per_sample, s.bytes_per_sample), (1, 8));
        let s = SampleShape::new(PodType::Int16 as i32, &[3, 4]).unwrap();
        assert_eq!((s.values_per_sample, s.bytes_per_sample), (12, 24));
        assert_eq!(
            SampleShape::new(0, &[]).unwrap_err(),
            PodError::UnsupportedType(0)
        );
        assert_eq!(
            SampleShape::new(11, &[]).unwrap_err(),
            PodError::UnsupportedType(11)
        );
        assert_eq!(
            SampleShape::new(1, &[2, 0]).unwrap_err(),
            PodError::ZeroDimension(vec![2, 0])
        );
        assert!(matches!(
            SampleShape::new(10, &[u32::MAX, u32::MAX, u32::MAX]).unwrap_err(),
            PodError::SampleTooLarge(_)
        ));
    }

    #[test]
    fn partial_samples_are_refused() {
        let err = PodSamples::decode(PodType::Int32 as i32, &[2], &[0; 12]).unwrap_err();
        assert_eq!(
            err,
            PodError::PartialSample {
                len: 12,
                bytes_per_sample: 8
            }
        );
    }

    #[test]
    fn little_endian_and_row_major() {
        let data = [0x01, 0x02, 0xff, 0xff, 0x00, 0x80, 0x10, 0x00];
        let s = PodSamples::decode(PodType::Int16 as i32, &[2, 2], &data).unwrap();
        assert_eq!(s.sample_count(), 1);
        assert_eq!(s.sample::<i16>(0), Some(&[0x0201, -1, i16::MIN, 16][..]));
        assert_eq!(s.sample::<i16>(1), None);
        assert_eq!(s.sample::<u16>(0), None);
        let s = PodSamples::decode(PodType::Uint16 as i32, &[], &data).unwrap();
        assert_eq!(
            s.values.as_slice::<u16>(),
            Some(&[0x0201, 0xffff, 0x8000, 0x0010][..])
        );
        assert_eq!(s.values.get_f64(1), Some(65535.0));
    }
}
