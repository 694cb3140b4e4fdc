//! The hand-written decoders the benchmarks measure robolog-cdr against: what generated code
//! for `sensor_msgs/Imu` and `sensor_msgs/PointCloud2` would do, reading a little-endian XCDR1
//! message with every length and alignment checked and strings borrowed. Shared by
//! `benches/decode.rs` and `examples/decode_loop.rs`.

#![allow(dead_code)]

#[derive(Debug, Default)]
pub(crate) struct Time {
    pub(crate) sec: i32,
    pub(crate) nanosec: u32,
}

#[derive(Debug, Default)]
pub(crate) struct Header<'a> {
    pub(crate) stamp: Time,
    pub(crate) frame_id: &'a [u8],
}

#[derive(Debug, Default)]
pub(crate) struct Vector3 {
    pub(crate) x: f64,
    pub(crate) y: f64,
    pub(crate) z: f64,
}

#[derive(Debug, Default)]
pub(crate) struct Quaternion {
    pub(crate) x: f64,
    pub(crate) y: f64,
    pub(crate) z: f64,
    pub(crate) w: f64,
}

#[derive(Debug, Default)]
pub(crate) struct Imu<'a> {
    pub(crate) header: Header<'a>,
    pub(crate) orientation: Quaternion,
    pub(crate) orientation_covariance: [f64; 9],
    pub(crate) angular_velocity: Vector3,
    pub(crate) angular_velocity_covariance: [f64; 9],
    pub(crate) linear_acceleration: Vector3,
    pub(crate) linear_acceleration_covariance: [f64; 9],
}

#[derive(Debug, Default)]
pub(crate) struct PointField<'a> {
    pub(crate) name: &'a [u8],
    pub(crate) offset: u32,
    pub(crate) datatype: u8,
    pub(crate) count: u32,
}

#[derive(Debug, Default)]
pub(crate) struct PointCloud2<'a> {
    pub(crate) header: Header<'a>,
    pub(crate) height: u32,
    pub(crate) width: u32,
    pub(crate) fields: Vec<PointField<'a>>,
    pub(crate) is_bigendian: bool,
    pub(crate) point_step: u32,
    pub(crate) row_step: u32,
    pub(crate) data: &'a [u8],
    pub(crate) is_dense: bool,
}

pub(crate) struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(message: &'a [u8]) -> Option<Self> {
        (message.get(..2)? == [0, 1]).then_some(Reader {
            data: message.get(4..)?,
            pos: 0,
        })
    }

    #[inline(always)]
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.pos = (self.pos + N - 1) & !(N - 1);
        let bytes = self.data.get(self.pos..self.pos + N)?;
        self.pos += N;
        bytes.try_into().ok()
    }

    fn u8(&mut self) -> Option<u8> {
        Some(self.take::<1>()?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.take::<4>().map(u32::from_le_bytes)
    }
    fn i32(&mut self) -> Option<i32> {
        self.take::<4>().map(i32::from_le_bytes)
    }
    fn f64(&mut self) -> Option<f64> {
        self.take::<8>().map(f64::from_le_bytes)
    }
    fn bytes(&mut self, len: usize) -> Option<&'a [u8]> {
        let bytes = self.data.get(self.pos..self.pos.checked_add(len)?)?;
        self.pos += len;
        Some(bytes)
    }
    fn string(&mut self) -> Option<&'a [u8]> {
        let len = self.u32()? as usize;
        let bytes = self.bytes(len)?;
        Some(bytes.split_last().map_or(bytes, |(_, text)| text))
    }
    fn header(&mut self) -> Option<Header<'a>> {
        Some(Header {
            stamp: Time {
                sec: self.i32()?,
                nanosec: self.u32()?,
            },
            frame_id: self.string()?,
        })
    }
    fn vector3(&mut self) -> Option<Vector3> {
        Some(Vector3 {
            x: self.f64()?,
            y: self.f64()?,
            z: self.f64()?,
        })
    }
    fn covariance(&mut self) -> Option<[f64; 9]> {
        let mut out = [0.0; 9];
        for value in &mut out {
            *value = self.f64()?;
        }
        Some(out)
    }

    pub(crate) fn imu(&mut self) -> Option<Imu<'a>> {
        Some(Imu {
            header: self.header()?,
            orientation: Quaternion {
                x: self.f64()?,
                y: self.f64()?,
                z: self.f64()?,
                w: self.f64()?,
            },
            orientation_covariance: self.covariance()?,
            angular_velocity: self.vector3()?,
            angular_velocity_covariance: self.covariance()?,
            linear_acceleration: self.vector3()?,
            linear_acceleration_covariance: self.covariance()?,
        })
    }

    pub(crate) fn point_cloud2(&mut self) -> Option<PointCloud2<'a>> {
        let header = self.header()?;
        let height = self.u32()?;
        let width = self.u32()?;
        let count = self.u32()? as usize;
        if count > self.data.len() {
            return None;
        }
        let mut fields = Vec::with_capacity(count);
        for _ in 0..count {
            fields.push(PointField {
                name: self.string()?,
                offset: self.u32()?,
                datatype: self.u8()?,
                count: self.u32()?,
            });
        }
        let is_bigendian = self.u8()? != 0;
        let point_step = self.u32()?;
        let row_step = self.u32()?;
        let len = self.u32()? as usize;
        let data = self.bytes(len)?;
        let is_dense = self.u8()? != 0;
        Some(PointCloud2 {
            header,
            height,
            width,
            fields,
            is_bigendian,
            point_step,
            row_step,
            data,
            is_dense,
        })
    }
}
