//! The series identifier hash.

use sha1::{Digest, Sha1};

use crate::proto::SeriesIdentifier;

/// A series identifier from a type and spec pairs.
///
/// ```
/// let id = robolog_bddf::series_identifier("bosdyn:channel", [("bosdyn:channel", "imu")]);
/// assert_eq!(id.spec["bosdyn:channel"], "imu");
/// ```
pub fn series_identifier<K: Into<String>, V: Into<String>>(
    series_type: impl Into<String>,
    spec: impl IntoIterator<Item = (K, V)>,
) -> SeriesIdentifier {
    SeriesIdentifier {
        series_type: series_type.into(),
        spec: spec
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect(),
    }
}

/// The 64-bit hash that names a series in descriptors and the file index: the first 8 bytes,
/// big-endian, of the SHA-1 of the series type followed by every spec key and value in sorted
/// key order.
///
/// There are no separators, so `{"ab": "c"}` and `{"a": "bc"}` hash alike; files depend on this
/// exact definition, so it is reproduced as is.
///
/// ```
/// use std::collections::BTreeMap;
/// use robolog_bddf::{identifier_hash, proto::SeriesIdentifier};
/// let id = SeriesIdentifier {
///     series_type: "bosdyn:channel".into(),
///     spec: BTreeMap::from([("bosdyn:channel".into(), "x".into())]),
/// };
/// assert_eq!(identifier_hash(&id), 0x83e7_f74b_5fc9_b804);
/// ```
pub fn identifier_hash(identifier: &SeriesIdentifier) -> u64 {
    let mut sha = Sha1::new();
    sha.update(identifier.series_type.as_bytes());
    // BTreeMap iterates in byte order of the UTF-8 keys, which is the order other
    // implementations sort by (code points).
    for (key, value) in &identifier.spec {
        sha.update(key.as_bytes());
        sha.update(value.as_bytes());
    }
    let digest = sha.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn id(series_type: &str, spec: &[(&str, &str)]) -> SeriesIdentifier {
        SeriesIdentifier {
            series_type: series_type.into(),
            spec: spec
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<BTreeMap<_, _>>(),
        }
    }

    #[test]
    fn spec_test_vectors() {
        assert_eq!(
            identifier_hash(&id(
                "bosdyn:grpc:requests",
                &[
                    ("bosdyn:message-type", "bosdyn.api.RobotIdRequest"),
                    ("bosdyn:grpc:service", "robot_id"),
                ]
            )),
            0xbebc_f813_fea0_9eb6
        );
        assert_eq!(
            identifier_hash(&id(
                "bosdyn:channel",
                &[("bosdyn:channel", "robot-id-requests")]
            )),
            0xdd5a_3630_dc08_1c2c
        );
        assert_eq!(
            identifier_hash(&id("bosdyn:channel", &[("bosdyn:channel", "x")])),
            0x83e7_f74b_5fc9_b804
        );
    }

    #[test]
    fn sample_file_hashes() {
        // Hashes the reference writer stored in testdata/bddf/sample.bddf (sample.txt).
        for (series_type, spec, hash) in [
            (
                "bosdyn:channel",
                &[("example:var", "battery.voltage")][..],
                0x205c_875a_f744_ed8f,
            ),
            (
                "bosdyn:grpc:responses",
                &[
                    ("bosdyn:grpc:service", "robot-id"),
                    ("bosdyn:message-type", "bosdyn.api.RobotIdResponse"),
                ],
                0xaa70_0f79_2059_078b,
            ),
        ] {
            assert_eq!(identifier_hash(&id(series_type, spec)), hash);
        }
    }

    #[test]
    fn no_separators_so_these_collide() {
        assert_eq!(
            identifier_hash(&id("t", &[("ab", "c")])),
            identifier_hash(&id("t", &[("a", "bc")]))
        );
    }
}
